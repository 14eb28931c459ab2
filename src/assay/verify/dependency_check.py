"""Checks over what went into a build, plugged into verification from outside.

`assay.verify` knows the provenance's dependencies but nothing of what is known to be
wrong with them. A component that does (`assay.audit`, over the vulnerability store)
implements `DependencyCheck` and is handed to the verifier, which calls it with verified
facts only and counts its result in the verdict:

    class VulnerabilityCheck:            # in assay.audit
        name = "vulnerabilities"
        def applies_to(self, policy): return policy.vulnerabilities is not None
        def check(self, subject): ...    # -> DependencyCheckResult

Nothing here imports the component: the protocol is the whole contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.policy.model import Policy
from assay.results import Check
from assay.verify.claims import Dependency, Subject


@dataclass(frozen=True, slots=True)
class VerifiedDocument:
    """A verified statement about the verified subject that is not provenance (an SBOM)."""

    source: str
    """The attestation it came from (a file name)."""
    predicate_type: str
    predicate: Mapping[str, Any]
    signers: tuple[str, ...] = ()
    """The names of the policy signers that signed it."""
    digest: Mapping[str, str] = field(default_factory=dict)
    """Of the attestation file (how a summary names it among its inputs)."""
    subject: tuple[Mapping[str, str], ...] = ()
    """The digests of its subjects."""


@dataclass(frozen=True, slots=True)
class DependencyCheckInput:
    """What a dependency check sees: the policy and facts from verified attestations."""

    policy: Policy
    subjects: tuple[Subject, ...]
    """The artifacts that passed verification."""
    dependencies: tuple[Dependency, ...]
    """Every dependency of the passing provenance; `is_source` marks source materials."""
    documents: tuple[VerifiedDocument, ...] = ()


@dataclass(frozen=True, slots=True)
class DependencyCheckResult:
    """One dependency check's outcome, counted in the verdict."""

    name: str
    checks: tuple[Check, ...]
    verified_levels: tuple[str, ...] = ()
    """Entries for the VSA's `verifiedLevels` when the check passed. Never `SLSA_*`: those
    names belong to the SLSA tracks (for example `ASSAY_VULNERABILITIES_CLEAN`)."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """The check's own report data, JSON-ready (for example the store generation used)."""
    input_attestations: tuple[tuple[str, Mapping[str, str]], ...] = ()
    """Documents the check relied on, by name and digest, for the VSA's
    `inputAttestations` (the VEX that changed a finding, a vulnerability scan)."""

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "verifiedLevels": list(self.verified_levels),
            "checks": [check.to_dict() for check in self.checks],
            "details": dict(self.details),
        }


class DependencyCheck(Protocol):
    """A check of a verified build's dependencies that the verifier runs after its own."""

    @property
    def name(self) -> str:
        """A short stable name (`vulnerabilities`), used in reports."""
        ...

    def applies_to(self, policy: Policy) -> bool:
        """Whether the policy asks for this check (the verifier skips it otherwise)."""
        ...

    def check(self, subject: DependencyCheckInput) -> DependencyCheckResult:
        """Judge the dependencies; raise nothing for findings: they are failed checks."""
        ...
