"""The verifier: attestations for artifacts against a policy, with a final typed verdict.

    verifier = Verifier(policy=policy, evidence=dependency_attestations)
    report = verifier.verify(artifacts, attestations)
    report.passed        # the verdict: nothing outside this object may change it
    report.level         # an int, or None

Order of the checks (as slsa-verifier): signature, payload type, statement (the
validator of `assay attest validate` first: a statement it rejects cannot pass),
builder (signer/builder pair), predicateType, subject digest, buildType, parameters,
source, ref, workflow inputs, level; then, for what passed, dependency levels through
the evidence and the extra dependency checks. Claims are read only from verified
payload bytes. `evaluate` and `verify` are the same as functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay import attestation as formats
from assay import dsse
from assay.errors import AttestationError, VerificationError
from assay.policy.model import Policy, Signer
from assay.verify import checks as c
from assay.verify.claims import STATEMENT_TYPES, Claims, parse_statement, read_claims
from assay.verify.dependency_check import (
    DependencyCheck,
    DependencyCheckInput,
    DependencyCheckResult,
    VerifiedDocument,
)
from assay.verify.evidence import EvidenceIndex
from assay.verify.levels import DependencyResult, build_level_name, resolve_dependencies
from assay.verify.model import Artifact, Attestation, CertificateIdentity, GcbMetadata
from assay.verify.signers import signers_that_signed

__all__ = [
    "Artifact",
    "Attestation",
    "AttestationReport",
    "CertificateIdentity",
    "GcbMetadata",
    "VerificationReport",
    "Verifier",
    "evaluate",
    "verify",
]

_PROVENANCE_TYPES = (formats.PROVENANCE_V1, formats.PROVENANCE_V02, formats.PROVENANCE_V01)


@dataclass(slots=True)
class AttestationReport:
    name: str
    digest: dict[str, str]
    checks: list[c.Check]
    claims: Claims | None = None
    level: int | None = None
    signed_by: list[str] = field(default_factory=list)
    statement: dict[str, Any] | None = None
    """The verified statement (only set once its signature verified)."""

    @property
    def passed(self) -> bool:
        """All attestation-wide checks passed (subjects are judged per artifact)."""
        return bool(self.checks) and all(
            check.passed for check in self.checks if check.subject is None
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "attestation": self.name,
            "digest": self.digest,
            "passed": self.passed,
            "level": self.level,
            "signedBy": self.signed_by,
            "checks": [check.to_dict() for check in self.checks],
        }


@dataclass(slots=True)
class ArtifactResult:
    artifact: Artifact
    passed: bool
    level: int | None
    attestations: list[str]
    """Names of the passing attestations that cover this artifact."""


@dataclass(slots=True)
class VerificationReport:
    """The verdict and everything it rests on; `passed` is final."""

    policy: Policy
    artifacts: list[ArtifactResult]
    attestations: list[AttestationReport]
    extra_checks: list[c.Check] = field(default_factory=list)
    dependencies: DependencyResult | None = None
    """Dependency levels, when something passed (None: nothing was verified)."""
    dependency_checks: list[DependencyCheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return (
            bool(self.artifacts)
            and all(a.passed for a in self.artifacts)
            and all(check.passed for check in self.extra_checks)
            and (self.dependencies is None or self.dependencies.passed)
            and all(result.passed for result in self.dependency_checks)
        )

    @property
    def level(self) -> int | None:
        """The build level every artifact reached (the lowest among them)."""
        levels = [a.level for a in self.artifacts]
        if not levels or any(level is None for level in levels):
            return None
        return min(level for level in levels if level is not None)

    @property
    def dependency_levels(self) -> dict[int, int] | None:
        """Build level -> number of dependencies at it (0: unverified), or None."""
        return None if self.dependencies is None else dict(self.dependencies.levels)

    @property
    def verified_levels(self) -> list[str]:
        """The VSA's `verifiedLevels` for this verdict (`["FAILED"]` when it failed)."""
        if not self.passed or self.level is None:
            return ["FAILED"]
        extra = [
            level
            for result in self.dependency_checks
            if result.passed
            for level in result.verified_levels
        ]
        return [build_level_name(self.level), *dict.fromkeys(extra)]

    def all_checks(self) -> list[c.Check]:
        """Every check made, attestation checks first."""
        found = [check for a in self.attestations for check in a.checks]
        found += self.extra_checks
        if self.dependencies is not None:
            found += self.dependencies.checks
        found += [check for result in self.dependency_checks for check in result.checks]
        return found

    def failures(self) -> list[c.Check]:
        return [check for check in self.all_checks() if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "passed": self.passed,
            "level": self.level,
            "policy": {"uri": self.policy.uri, "digest": self.policy.digest},
            "artifacts": [
                {
                    "name": a.artifact.name,
                    "digest": a.artifact.digest,
                    "passed": a.passed,
                    "level": a.level,
                    "attestations": a.attestations,
                }
                for a in self.artifacts
            ],
            "attestations": [a.to_dict() for a in self.attestations],
            "checks": [check.to_dict() for check in self.extra_checks],
        }
        if self.dependencies is not None:
            result["dependencyLevels"] = self.dependencies.level_names()
            result["dependencies"] = self.dependencies.to_dict()
        if self.dependency_checks:
            result["dependencyChecks"] = [r.to_dict() for r in self.dependency_checks]
        return result


class Verifier:
    """Verifies artifacts' attestations against one policy; its report is the verdict.

    `policy` names the trusted signers (keys, or identities once Sigstore bundles are
    verified upstream and carried as `Attestation.identity`). `evidence` holds the
    provenance and VSAs of dependencies (what `--attestation-dir` supplies); None means
    no evidence source was given, which is not the same as an empty one only in reports.
    `dependency_checks` run on what passed, and count in the verdict.
    """

    def __init__(
        self,
        *,
        policy: Policy,
        evidence: Iterable[Attestation] | None = None,
        dependency_checks: Sequence[DependencyCheck] = (),
    ) -> None:
        self.policy = policy
        self.evidence: tuple[Attestation, ...] | None = (
            None if evidence is None else tuple(evidence)
        )
        self.dependency_checks = tuple(dependency_checks)

    def verify(
        self,
        artifacts: Sequence[Artifact],
        attestations: Sequence[Attestation],
    ) -> VerificationReport:
        """The report for `artifacts` given `attestations`; never raises on a failed check."""
        report = _evaluate(self.policy, artifacts, attestations)
        passing = [r for r in report.attestations if _covers_something(report, r)]
        if not passing:
            return report  # nothing verified: no dependency claim can be made
        dependencies = tuple(
            dep for r in passing if r.claims is not None for dep in r.claims.dependencies
        )
        index = EvidenceIndex(self.policy, self.evidence or ())
        report.dependencies = resolve_dependencies(
            dependencies, index, self.policy.dependencies, evidence_given=self.evidence is not None
        )
        report.dependencies.rejected = list(index.rejected)
        applicable = [check for check in self.dependency_checks if check.applies_to(self.policy)]
        if applicable:
            subject_input = DependencyCheckInput(
                policy=self.policy,
                subjects=tuple(
                    s for r in passing if r.claims is not None for s in r.claims.subjects
                ),
                dependencies=dependencies,
                documents=tuple(_documents(self.policy, attestations, report)),
            )
            report.dependency_checks = [check.check(subject_input) for check in applicable]
        return report


def _covers_something(report: VerificationReport, attestation: AttestationReport) -> bool:
    return any(attestation.name in result.attestations for result in report.artifacts)


def _documents(
    policy: Policy, attestations: Sequence[Attestation], report: VerificationReport
) -> list[VerifiedDocument]:
    """Verified statements that are not provenance, about a verified subject (SBOMs)."""
    subjects = {
        (algorithm, value.lower())
        for r in report.attestations
        if r.passed and r.claims is not None
        for s in r.claims.subjects
        for algorithm, value in s.digest.items()
    }
    result = []
    for item in attestations:
        if not signers_that_signed(item, policy.signers):
            continue
        try:
            statement = parse_statement(item.envelope.payload, where=item.name)
        except AttestationError:
            continue
        predicate_type = statement.get("predicateType")
        predicate = statement.get("predicate")
        if predicate_type in _PROVENANCE_TYPES or not isinstance(predicate, dict):
            continue
        about = statement.get("subject")
        digests = {
            (str(a), str(v).lower())
            for s in (about if isinstance(about, list) else [])
            if isinstance(s, dict) and isinstance(s.get("digest"), dict)
            for a, v in s["digest"].items()
        }
        if digests & subjects and isinstance(predicate_type, str):
            result.append(VerifiedDocument(item.name, predicate_type, predicate))
    return result


def _unsigned_detail(policy: Policy, attestation: Attestation) -> str:
    detail = "no trusted signer's keys verified the envelope"
    identities = [s.name for s in policy.signers if s.identity is not None]
    if identities and attestation.identity is None:
        detail += (
            f"; signer(s) {', '.join(identities)} use a certificate identity, and no verified"
            " certificate came with the envelope"
        )
    elif identities:
        detail += f"; the certificate identity {attestation.identity} matches no signer"
    if attestation.container == "sigstore-bundle" and attestation.identity is None:
        detail += "; the envelope came from a Sigstore bundle whose certificate was not verified"
    return detail


def _validation(statement: dict[str, Any]) -> c.Check:
    """The validator of `assay attest validate`: its errors fail the statement."""
    errors = [f for f in formats.validate(statement) if f.severity is formats.Severity.ERROR]
    return c.Check(
        "statement.valid",
        not errors,
        "no error from the attestation validator",
        [f"{f.path}: {f.message}" for f in errors[:10]],
        f"{len(errors)} error(s); `assay attest validate` lists them" if errors else "",
    )


def evaluate_attestation(attestation: Attestation, policy: Policy) -> AttestationReport:
    """Signature first; only a verified payload is parsed and checked against the policy."""
    report = AttestationReport(attestation.name, attestation.digest, [])
    envelope = attestation.envelope
    signed = signers_that_signed(attestation, policy.signers)
    report.signed_by = [s.name for s in signed]
    report.checks.append(
        c.Check(
            "signature",
            bool(signed),
            [s.name for s in policy.signers],
            report.signed_by,
            "" if signed else _unsigned_detail(policy, attestation),
        )
    )
    if not signed:
        return report
    report.checks.append(
        c.Check(
            "payloadType",
            envelope.payload_type == dsse.INTOTO_PAYLOAD_TYPE,
            dsse.INTOTO_PAYLOAD_TYPE,
            envelope.payload_type,
        )
    )
    try:
        statement = parse_statement(envelope.payload, where=attestation.name)
        claims = read_claims(statement)
    except AttestationError as error:
        report.checks.append(c.Check("statement", False, "an in-toto statement", None, str(error)))
        return report
    report.statement = statement
    report.claims = claims
    report.checks.append(
        c.Check(
            "statement",
            claims.statement_type in STATEMENT_TYPES,
            list(STATEMENT_TYPES),
            claims.statement_type,
        )
    )
    report.checks.append(_validation(statement))
    checks, level = claim_checks(claims, policy, signed)
    report.checks.extend(checks)
    if attestation.gcb is not None:
        report.checks.extend(c.check_gcb_context(attestation.gcb, statement))
    report.level = level
    return report


def claim_checks(
    claims: Claims, policy: Policy, signed: Sequence[Signer]
) -> tuple[list[c.Check], int | None]:
    """Every check of the claims against the policy, given the signers that signed,
    and the build level the trusted builder reaches."""
    builder, level = c.check_builder(claims, signed)
    rules = c.matching_rules(claims, signed)
    result = [
        builder,
        c.check_predicate_type(claims, policy),
        c.check_build_type(claims, policy, rules),
    ]
    result.extend(c.check_parameters(claims, policy.parameters))
    result.extend(c.check_source(claims, policy.source))
    result.extend(c.check_refs(claims, policy.source))
    result.append(c.check_level(level, policy))
    return result, level


def evaluate_unverified_claims(claims: Claims, policy: Policy) -> list[c.Check]:
    """The claim checks as if every policy signer had signed: for comparing rule sets only.

    The result never includes a passing signature check, so it can never be taken for
    a verified result; `Verifier` does not use it.
    """
    unsafe, _ = claim_checks(claims, policy, policy.signers)
    return [c.Check("signature", False, "not checked", None, "unverified claims"), *unsafe]


def _evaluate(
    policy: Policy, artifacts: Sequence[Artifact], attestations: Sequence[Attestation]
) -> VerificationReport:
    reports = [evaluate_attestation(a, policy) for a in attestations]
    results = []
    for artifact in artifacts:
        covering = []
        for report in reports:
            if report.claims is None:
                continue
            check = c.check_subject(report.claims, artifact.name, artifact.digest)
            report.checks.append(check)
            if check.passed and report.passed:
                covering.append(report)
        levels = [r.level for r in covering if r.level is not None]
        results.append(
            ArtifactResult(
                artifact,
                bool(covering),
                max(levels) if levels else None,
                [r.name for r in covering],
            )
        )
    return VerificationReport(policy, results, reports)


def evaluate(
    policy: Policy,
    artifacts: Sequence[Artifact],
    attestations: Sequence[Attestation],
    *,
    evidence: Iterable[Attestation] | None = None,
) -> VerificationReport:
    """`Verifier(policy=policy, evidence=evidence).verify(artifacts, attestations)`."""
    return Verifier(policy=policy, evidence=evidence).verify(artifacts, attestations)


def verify(
    policy: Policy, artifacts: Sequence[Artifact], attestations: Sequence[Attestation]
) -> VerificationReport:
    """`evaluate`, raising `VerificationError` naming the first failed check."""
    report = evaluate(policy, artifacts, attestations)
    if not report.passed:
        failures = report.failures()
        first = failures[0] if failures else None
        detail = (
            f"{first.name}: expected {first.expected!r}, found {first.found!r}"
            if first
            else "no attestation covers every artifact"
        )
        raise VerificationError(f"verification failed: {detail}")
    return report
