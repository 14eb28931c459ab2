"""Evaluate attestations for artifacts against a policy (pure: bytes and objects in).

    report = evaluate(policy, artifacts, attestations)
    report.passed                       # every artifact has a passing attestation
    verify(policy, artifacts, attestations)   # the same, raising VerificationError

Order of the checks (as slsa-verifier): signature, payload type, statement, builder
(signer/builder pair), predicateType, subject digest, buildType, parameters, source,
ref, workflow inputs, level. Claims are read only from verified payload bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay import dsse
from assay.errors import AttestationError, VerificationError
from assay.policy.model import Policy, Signer
from assay.verify import checks as c
from assay.verify.claims import STATEMENT_TYPES, Claims, parse_statement, read_claims


@dataclass(frozen=True, slots=True)
class Attestation:
    """One envelope to evaluate; `name` and `digest` identify the file it came from."""

    name: str
    envelope: dsse.Envelope
    digest: dict[str, str] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)
    """Unsigned data delivered beside the envelope (for example GCB metadata)."""


@dataclass(frozen=True, slots=True)
class Artifact:
    name: str
    digest: dict[str, str]


@dataclass(slots=True)
class AttestationReport:
    name: str
    digest: dict[str, str]
    checks: list[c.Check]
    claims: Claims | None = None
    level: int | None = None
    signed_by: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """All attestation-wide checks passed (subjects are judged per artifact)."""
        return bool(self.checks) and all(
            check.passed for check in self.checks if not check.name.startswith("subject[")
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
    policy: Policy
    artifacts: list[ArtifactResult]
    attestations: list[AttestationReport]
    extra_checks: list[c.Check] = field(default_factory=list)
    dependency_levels: dict[str, int] | None = None

    @property
    def passed(self) -> bool:
        return (
            bool(self.artifacts)
            and all(a.passed for a in self.artifacts)
            and all(check.passed for check in self.extra_checks)
        )

    @property
    def level(self) -> int | None:
        """The build level every artifact reached (the lowest among them)."""
        levels = [a.level for a in self.artifacts]
        if not levels or any(level is None for level in levels):
            return None
        return min(level for level in levels if level is not None)

    def failures(self) -> list[c.Check]:
        failed = [check for a in self.attestations for check in a.checks if not check.passed]
        return failed + [check for check in self.extra_checks if not check.passed]

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
        if self.dependency_levels is not None:
            result["dependencyLevels"] = self.dependency_levels
        return result


def signers_that_signed(envelope: dsse.Envelope, signers: Sequence[Signer]) -> list[Signer]:
    """The policy signers whose keys met their threshold on this envelope."""
    result = []
    for signer in signers:
        if dsse.check_signatures(envelope, signer.keys, signer.threshold) or (
            signer.legacy_raw_payload and _legacy_raw_signed(envelope, signer)
        ):
            result.append(signer)
    return result


def _legacy_raw_signed(envelope: dsse.Envelope, signer: Signer) -> bool:
    # Old GCB regional keys sign the bare payload, not PAE; only signers that opt in
    # (`legacyRawPayload: true`) are tried this way. Outside DSSE the keyid is not a
    # mere hint: as in Google's scheme, it must name the key exactly.
    signed = set()
    for signature in envelope.signatures:
        for index, key in enumerate(signer.keys):
            if index in signed or signature.keyid != key.keyid:
                continue
            if key.verify(signature.sig, envelope.payload):
                signed.add(index)
                break
    return len(signed) >= signer.threshold


def _unsigned_detail(policy: Policy, attestation: Attestation) -> str:
    detail = "no trusted signer's keys verified the envelope"
    identities = [s.name for s in policy.signers if s.identity is not None]
    if identities:
        detail += (
            f"; signer(s) {', '.join(identities)} use a Sigstore identity, which this version"
            " does not verify"
        )
    if attestation.context.get("sigstoreBundle"):
        detail += "; the envelope came from a Sigstore bundle (certificate not checked)"
    return detail


def evaluate_attestation(attestation: Attestation, policy: Policy) -> AttestationReport:
    """Signature first; only a verified payload is parsed and checked against the policy."""
    report = AttestationReport(attestation.name, attestation.digest, [])
    envelope = attestation.envelope
    signed = signers_that_signed(envelope, policy.signers)
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
    report.claims = claims
    report.checks.append(
        c.Check(
            "statement",
            claims.statement_type in STATEMENT_TYPES,
            list(STATEMENT_TYPES),
            claims.statement_type,
        )
    )
    report.checks.extend(claim_checks(claims, policy, signed))
    if attestation.context.get("gcb"):
        report.checks.extend(c.check_gcb_context(attestation.context, statement))
    report.level = _level_of(report)
    return report


def _level_of(report: AttestationReport) -> int | None:
    for check in report.checks:
        if check.name == "level" and isinstance(check.found, str):
            return int(check.found.rsplit("_", 1)[1])
    return None


def claim_checks(claims: Claims, policy: Policy, signed: Sequence[Signer]) -> list[c.Check]:
    """Every check of the claims against the policy, given the signers that signed."""
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
    return result


def evaluate_unverified_claims(claims: Claims, policy: Policy) -> list[c.Check]:
    """The claim checks as if every policy signer had signed: for comparing rule sets only.

    The result never includes a passing signature check, so it can never be taken for
    a verified result; `evaluate` does not use it.
    """
    unsafe = claim_checks(claims, policy, policy.signers)
    return [c.Check("signature", False, "not checked", None, "unverified claims"), *unsafe]


def evaluate(
    policy: Policy,
    artifacts: Sequence[Artifact],
    attestations: Sequence[Attestation],
) -> VerificationReport:
    """Check every attestation, then find for each artifact a passing attestation about it."""
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
