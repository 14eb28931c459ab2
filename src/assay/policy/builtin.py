"""Policies shipped with assay: files addressable as `builtin:NAME`, and the policies of
slsa-verifier's and gh's modes, built from their flags (`ModePolicy`).

The files are the repository's policies/ directory (with the public keys they name),
installed inside the package as assay/policies/: `builtin:gcb` is policies/gcb.yaml
whether assay runs from a checkout or from a wheel. A plain path still names any policy
file.

A mode's policy says what `assay.verify.Verifier` does with each signed document: how
its signature is verified (`SignatureForm`), what its certificate must show
(`CertificateRules`, checked under upstream's names), whether that certificate must pass
before the statement is read, and the statement rules for the workflow it names
(`StatementRules`: the claims policy, the predicate type, the builder-certificate match,
the validator).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Final

from assay.errors import InputError
from assay.policy.identity import CertificateRules
from assay.policy.model import Policy
from assay.policy.refs import split_ref
from assay.sigstore.identity import CertificateIdentity

PREFIX: Final = "builtin:"


class SignatureForm(enum.Enum):
    """Which signed documents a mode accepts, and how their signature is verified."""

    CERTIFIED_ENVELOPE = "certified-envelope"
    """A Sigstore bundle, or a legacy envelope carrying its certificate whose Rekor entry is
    looked up or waived (slsa-verifier)."""
    BUNDLE = "bundle"
    """A Sigstore bundle of version 0.2 or later, a message signature too (gh)."""


@dataclass(frozen=True, slots=True)
class StatementRules:
    """What a verified statement must claim, for the workflow that signed it."""

    policy: Policy | None = None
    """The claim checks and the level (None: the claims are not judged)."""
    predicate_type: str | None = None
    """The one predicate type accepted (gh's `--predicate-type`), checked on its own."""
    builder_is_signer: bool = False
    """The builder id must name the certificate's workflow at its ref (a trusted reusable
    workflow that is its own builder, not a delegator)."""
    validate: bool = False
    """Run `assay attest validate`'s validator: its errors fail the statement."""


@dataclass(frozen=True, slots=True)
class ModePolicy:
    """The built-in policy of a verification mode (slsa-verifier's, gh's)."""

    uri: str
    signature: SignatureForm
    certificate: CertificateRules
    statements: Mapping[str, StatementRules] = field(default_factory=dict)
    """By the workflow a certificate names (its SAN without the ref)."""
    default: StatementRules | None = None
    """For a workflow `statements` does not list (None: nothing it signed is read)."""
    certificate_first: bool = True
    """The certificate must pass before the statement is read (slsa-verifier); otherwise it
    is judged after the statement (gh)."""

    def statement_rules(self, identity: CertificateIdentity) -> StatementRules | None:
        workflow, _ = split_ref(identity.san or "")
        return self.statements.get(workflow, self.default)


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
