"""Policies shipped with assay, addressable as `builtin:NAME`.

They are the files of the repository's policies/ directory (with the public keys they
name), installed inside the package as assay/policies/: `builtin:gcb` is
policies/gcb.yaml whether assay runs from a checkout or from a wheel. A plain path
still names any policy file.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from assay.errors import InputError

PREFIX: Final = "builtin:"


@dataclass(frozen=True, slots=True)
class BuiltinPolicy:
    name: str
    path: Path

    @property
    def reference(self) -> str:
        return f"{PREFIX}{self.name}"


def directory() -> Path:
    """Where the shipped policies are installed."""
    return Path(str(resources.files("assay") / "policies"))


def builtin_policies() -> list[BuiltinPolicy]:
    """Every shipped policy, by name."""
    folder = directory()
    if not folder.is_dir():
        return []
    return [BuiltinPolicy(p.stem, p) for p in sorted(folder.glob("*.yaml")) if p.is_file()]


def resolve(reference: str | Path) -> Path:
    """The file a policy reference names: `builtin:NAME` or a path."""
    text = str(reference)
    if not text.startswith(PREFIX):
        return Path(reference)
    name = text.removeprefix(PREFIX)
    available = builtin_policies()
    for policy in available:
        if policy.name == name:
            return policy.path
    names = ", ".join(policy.name for policy in available) or "none are installed"
    raise InputError(text, f"expected the name of a shipped policy ({names}), found {name!r}")
