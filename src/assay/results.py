"""The typed result pieces every layer uses (a check's outcome); imports nothing of assay,
so that transport adapters (`assay.sigstore`), policy and verification can all produce
and read them without importing each other."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Check", "in_words"]


def _json_text(value: Any) -> str:
    return json.dumps(value, default=str)


def in_words(value: Any, dumps: Callable[[Any], str] = _json_text) -> str:
    """A check's expected or found value in words, as `assay verify` prints it: nothing,
    an empty string, a list joined by commas, anything else as `dumps` writes it."""
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return value or "an empty string"
    if isinstance(value, list | tuple):
        return ", ".join(in_words(v, dumps) for v in value) if value else "none"
    return dumps(value)


@dataclass(frozen=True, slots=True)
class Check:
    """One check's outcome, for people (`detail`) and for machines (`expected`/`found`)."""

    name: str
    passed: bool
    expected: Any
    found: Any
    detail: str = ""
    subject: str | None = None
    """What the check is about when it is repeated per item: the artifact for `subject`,
    the dependency for `dependency`, the level for `verifiedLevels`. None for checks of
    the whole attestation."""

    def summary(self) -> str:
        """`name: expected …, found … (detail)`: how a failed check is told in one line."""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.name}: expected {self.expected!r}, found {self.found!r}{detail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.name,
            **({"subject": self.subject} if self.subject is not None else {}),
            "passed": self.passed,
            "expected": self.expected,
            "found": self.found,
            **({"detail": self.detail} if self.detail else {}),
        }
