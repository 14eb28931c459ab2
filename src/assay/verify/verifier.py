"""The verifier: attestations for artifacts against a policy, with a final typed verdict.

    verifier = Verifier(policy=policy, evidence=dependency_attestations)
    report = verifier.verify(artifacts, attestations)
    report.passed        # the verdict: nothing outside this object may change it
    report.level         # an int, or None

Order of the checks (as slsa-verifier): signature (keys, or a Sigstore certificate
verified first by `assay.verify.certificates` and matched to an identity signer), payload type, statement (the
validator of `assay attest validate` first: a statement it rejects cannot pass),
builder (signer/builder pair), predicateType, subject digest, buildType, parameters,
source, ref, workflow inputs, level; then, for what passed, dependency levels through
the evidence and the extra dependency checks. Claims are read only from verified
payload bytes. `evaluate` and `verify` are the same as functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar, cast, overload

from assay import protocol
from assay.errors import AttestationError, VerificationError
from assay.policy.builtin import ModePolicy, StatementRules
from assay.policy.model import Policy, Signer
from assay.results import Check
from assay.verify import checks as c
from assay.verify.certificates import (
    CertificateResult,
    CertificateVerifier,
    LogResult,
    SigstoreTrust,
)
from assay.verify.claims import Claims, Dependency, parse_statement, subject_digests
from assay.verify.dependency_check import (
    DependencyCheck,
    DependencyCheckInput,
    DependencyCheckResult,
    VerifiedDocument,
)
from assay.verify.evidence import EvidenceIndex
from assay.verify.levels import DependencyResult, resolve_dependencies
from assay.verify.model import Artifact, Attestation, CertificateIdentity, GcbMetadata
from assay.verify.modes import ModeSteps, SignedDocument, SignedEvaluation
from assay.verify.pipeline import (
    Coverage,
    Evaluation,
    claim_checks,
    cover,
    judge_statement,
    read_payload,
)
from assay.verify.report import TLOG_WAIVED_LEVEL, EvaluationT, PolicyT, Report
from assay.verify.signers import identity_signers, key_signers, signers_that_signed

__all__ = [
    "TLOG_WAIVED_LEVEL",
    "Artifact",
    "Attestation",
    "AttestationReport",
    "CertificateIdentity",
    "GcbMetadata",
    "PolicyFileSteps",
    "SigstoreTrust",
    "Steps",
    "VerificationReport",
    "Verifier",
    "evaluate",
    "verify",
]


@dataclass(slots=True)
class AttestationReport(Evaluation):
    """One attestation through the pipeline, with who signed it and its Sigstore results."""

    digest: dict[str, str] = field(default_factory=dict)
    signed_by: list[str] = field(default_factory=list)
    certificate: CertificateResult | None = None
    """The verification of the Sigstore material the envelope came with, if any."""
    log: LogResult | None = None
    """For a bundle signed with a key: the verification of its transparency-log entry."""
    certified: Attestation | None = field(default=None, repr=False, compare=False)
    """The attestation as the `Verifier` certified it: what dependency levels and checks
    read once the verdict on it is known."""

    @property
    def tlog_waived(self) -> bool:
        """Signed by an identity whose transparency-log entry was not checked."""
        return self.certificate is not None and self.certificate.tlog_waived

    @property
    def passed(self) -> bool:
        """All attestation-wide checks passed (the per-artifact subject checks, shown
        here too, are each artifact's: `Coverage`)."""
        return bool(self.checks) and all(
            check.passed for check in self.checks if check.subject is None
        )

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "attestation": self.name,
            "digest": self.digest,
            "passed": self.passed,
            "level": self.level,
            "signedBy": self.signed_by,
            "checks": [check.to_dict() for check in self.checks],
        }
        if self.certificate is not None:
            result["certificate"] = self.certificate.to_dict()
        if self.log is not None:
            result["keySignedBundle"] = self.log.to_dict()
        return result


ItemT = TypeVar("ItemT")
ItemT_contra = TypeVar("ItemT_contra", contravariant=True)

VerificationReport = Report[Policy, AttestationReport]
"""The `Verifier`'s report for a policy file."""


class Steps(Protocol[PolicyT, ItemT_contra, EvaluationT]):
    """What the `Verifier` does with each signed item for one kind of policy: the
    signature step and what follows it (`evaluate`), then what the policy asks of
    everything that passed (`conclude`)."""

    def evaluate(
        self, artifacts: Sequence[Artifact], items: Sequence[ItemT_contra]
    ) -> list[EvaluationT]: ...

    def conclude(self, report: Report[PolicyT, EvaluationT]) -> None: ...


class Verifier(Generic[PolicyT, ItemT, EvaluationT]):
    """Verifies artifacts' attestations against one policy; its report is the verdict.

    The policy is a policy file (`Policy`: attestations signed by its key or identity
    signers; `assay verify`) or a mode's built-in policy (`ModePolicy`: signed documents
    judged as slsa-verifier or gh judge them; `verify-artifact`, `verify-bundle`). Both
    run the same steps (`assay.verify.pipeline`) and give the same `Report`; each
    artifact is judged on its own (`cover`).

    `trust` says what a Sigstore certificate is verified against (trusted roots; whether
    a legacy envelope's missing log entry is looked up or waived); the certificate of
    every attestation with Sigstore material is verified here, before any identity signer
    is matched. For a policy file, `evidence` holds the provenance and VSAs of
    dependencies (what `--attestation-dir` supplies; None means no evidence source was
    given, which differs from an empty one only in reports) and `dependency_checks` run
    on what passed, and count in the verdict.
    """

    @overload
    def __init__(
        self: Verifier[Policy, Attestation, AttestationReport],
        *,
        policy: Policy,
        evidence: Iterable[Attestation] | None = None,
        dependency_checks: Sequence[DependencyCheck] = (),
        trust: SigstoreTrust | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: Verifier[ModePolicy, SignedDocument, SignedEvaluation],
        *,
        policy: ModePolicy,
        trust: SigstoreTrust | None = None,
    ) -> None: ...

    def __init__(
        self,
        *,
        policy: Policy | ModePolicy,
        evidence: Iterable[Attestation] | None = None,
        dependency_checks: Sequence[DependencyCheck] = (),
        trust: SigstoreTrust | None = None,
    ) -> None:
        self.trust = trust or SigstoreTrust()
        # The overloads tie each kind of policy to its items and evaluations.
        steps: Any = (
            ModeSteps(policy, self.trust)
            if isinstance(policy, ModePolicy)
            else PolicyFileSteps(policy, self.trust, evidence, dependency_checks)
        )
        self.policy: PolicyT = cast(PolicyT, policy)
        self._steps: Steps[PolicyT, ItemT, EvaluationT] = steps

    def verify(
        self, artifacts: Sequence[Artifact], items: Sequence[ItemT]
    ) -> Report[PolicyT, EvaluationT]:
        """The report for `artifacts` given `items`; never raises on a failed check."""
        evaluations = self._steps.evaluate(artifacts, items)
        coverage = [cover(artifact, evaluations) for artifact in artifacts]
        report = Report(self.policy, coverage, evaluations)
        self._steps.conclude(report)
        return report


class PolicyFileSteps:
    """What the `Verifier` does with each attestation for a policy file: certificates
    verified, the policy's signers counted, then its claim checks; dependency levels and
    the dependency checks for what passed."""

    def __init__(
        self,
        policy: Policy,
        trust: SigstoreTrust,
        evidence: Iterable[Attestation] | None,
        dependency_checks: Sequence[DependencyCheck],
    ) -> None:
        self.policy = policy
        self._certificates = CertificateVerifier(trust)
        self.evidence: tuple[Attestation, ...] | None = (
            None if evidence is None else tuple(evidence)
        )
        self.dependency_checks = tuple(dependency_checks)

    def evaluate(
        self, artifacts: Sequence[Artifact], items: Sequence[Attestation]
    ) -> list[AttestationReport]:
        """Each certified attestation against the policy (`evaluate_attestation`)."""
        return [
            evaluate_attestation(item.attestation, self.policy, item.certificate, log=item.log)
            for item in self._certify(items)
        ]

    def conclude(self, report: VerificationReport) -> None:
        """Each artifact's subject checks shown with the attestations too; then, when
        something passed, dependency levels and the dependency checks."""
        _show_subjects(report.attestations, report.artifacts)
        passing = [r for r in report.attestations if _covers_something(report, r)]
        if passing:  # else nothing verified: no dependency claim can be made
            certified = [r.certified for r in report.attestations if r.certified is not None]
            self._judge_dependencies(report, passing, certified)

    def _judge_dependencies(
        self,
        report: VerificationReport,
        passing: Sequence[AttestationReport],
        attestations: Sequence[Attestation],
    ) -> None:
        """Dependency levels through the evidence, then the dependency checks, for what
        passed."""
        claims = [r.claims for r in passing if r.claims is not None]
        dependencies = tuple(dep for claim in claims for dep in claim.dependencies)
        report.dependencies = self._resolve(dependencies)
        report.dependency_checks = self._check_dependencies(
            report, claims, dependencies, attestations
        )

    def _check_dependencies(
        self,
        report: VerificationReport,
        claims: Sequence[Claims],
        dependencies: tuple[Dependency, ...],
        attestations: Sequence[Attestation],
    ) -> list[DependencyCheckResult]:
        """The dependency checks that apply to the policy, on the verified subjects, their
        dependencies and the verified documents about them."""
        applicable = [check for check in self.dependency_checks if check.applies_to(self.policy)]
        if not applicable:
            return []
        subject_input = DependencyCheckInput(
            policy=self.policy,
            subjects=tuple(s for claim in claims for s in claim.subjects),
            dependencies=dependencies,
            documents=tuple(_documents(self.policy, attestations, report)),
        )
        return [check.check(subject_input) for check in applicable]

    def _resolve(self, dependencies: tuple[Dependency, ...]) -> DependencyResult:
        """The dependencies' levels through the evidence (certified as the attestations)."""
        evidence = [item.attestation for item in self._certify(self.evidence or ())]
        index = EvidenceIndex(self.policy, evidence)
        result = resolve_dependencies(
            dependencies, index, self.policy.dependencies, evidence_given=self.evidence is not None
        )
        result.rejected = list(index.rejected)
        return result

    def _certify(self, attestations: Sequence[Attestation]) -> list[_Certified]:
        """Attestations with the identities their verified certificates show, or the
        signatures their verified log entries record (and nothing else), with what was
        verified of them."""
        return [self._certify_one(attestation) for attestation in attestations]

    def _certify_one(self, attestation: Attestation) -> _Certified:
        signers = self.policy.signers
        if attestation.key_signed_bundle and key_signers(signers):
            logged, log = self._certificates.log(attestation)
            return _Certified(logged, None, log)
        if attestation.sigstore is not None and identity_signers(signers):
            certified, certificate = self._certificates.certify(attestation)
            return _Certified(certified, certificate, None)
        # Nothing a caller set is trusted: no signer here could use it.
        return _Certified(replace(attestation, identity=None, logged=None), None, None)


@dataclass(frozen=True, slots=True)
class _Certified:
    """An attestation as `Verifier._certify` left it, with what was verified of it."""

    attestation: Attestation
    certificate: CertificateResult | None
    log: LogResult | None


def _covers_something(report: VerificationReport, attestation: AttestationReport) -> bool:
    # By identity: two attestation files may share a name.
    return any(attestation is e for result in report.artifacts for e in result.covering)


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
    found = (_document(item, policy, subjects) for item in attestations)
    return [document for document in found if document is not None]


def _document(
    item: Attestation, policy: Policy, subjects: set[tuple[str, str]]
) -> VerifiedDocument | None:
    """One attestation as a verified document about a verified subject, if it is one."""
    signed = signers_that_signed(item, policy.signers)
    if not signed:
        return None
    try:
        statement = parse_statement(item.envelope.payload, where=item.name)
    except AttestationError:
        return None
    predicate_type = statement.get("predicateType")
    predicate = statement.get("predicate")
    if not isinstance(predicate_type, str) or predicate_type in protocol.PROVENANCE_TYPES:
        return None
    if not isinstance(predicate, dict):
        return None
    digests = _statement_digests(statement)
    if not {pair for digest in digests for pair in digest.items()} & subjects:
        return None
    return VerifiedDocument(
        item.name,
        predicate_type,
        predicate,
        tuple(s.name for s in signed),
        dict(item.digest),
        digests,
    )


def _statement_digests(statement: dict[str, Any]) -> tuple[dict[str, str], ...]:
    """Each subject's digest set, values in lowercase (non-digest subjects left out)."""
    return tuple(
        {str(a): str(v).lower() for a, v in digest.items()} for digest in subject_digests(statement)
    )


def _unsigned_detail(
    policy: Policy,
    attestation: Attestation,
    certificate: CertificateResult | None,
    log: LogResult | None = None,
) -> str:
    """Why no trusted signer signed: for the key signers, then for the identity signers."""
    parts = []
    if key_signers(policy.signers):
        parts.append(_keys_detail(attestation, log))
    identities = identity_signers(policy.signers)
    if identities:
        parts.extend(_identity_details(identities, attestation, certificate))
    return "; ".join(parts) or "no trusted signer signed the envelope"


def _keys_detail(attestation: Attestation, log: LogResult | None) -> str:
    if not attestation.key_signed_bundle:
        return "no trusted signer's keys verified the envelope"
    if attestation.logged is None:
        reason = log.failure() if log is not None else "not verified"
        return f"the key-signed bundle's transparency-log entry did not verify: {reason}"
    return (
        "no trusted signer's keys made a signature the bundle's log entry records "
        f"(it records key(s) {', '.join(sorted(attestation.logged.key_fingerprints))})"
    )


def _identity_details(
    identities: Sequence[Signer], attestation: Attestation, certificate: CertificateResult | None
) -> list[str]:
    if attestation.sigstore is None:
        names = ", ".join(s.name for s in identities)
        return [
            f"signer(s) {names} use a certificate identity, and the envelope came "
            "without a Sigstore certificate"
        ]
    if attestation.identity is None:
        reason = certificate.failure() if certificate is not None else "not verified"
        return [f"its Sigstore signature did not verify: {reason}"]
    found = attestation.identity
    return [m for signer in identities if (m := _identity_mismatch(signer, found)) is not None]


def _identity_mismatch(signer: Signer, identity: CertificateIdentity) -> str | None:
    """How the certificate's identity misses `signer`'s rule (None: it matches)."""
    assert signer.identity is not None
    failed = next((x for x in signer.identity.checks(identity) if not x.passed), None)
    if failed is None:
        return None
    return (
        f"the certificate matches no signer: {signer.name}: {failed.name} "
        f"expected {failed.expected}, found {failed.found}"
    )


def evaluate_attestation(
    attestation: Attestation,
    policy: Policy,
    certificate: CertificateResult | None = None,
    *,
    log: LogResult | None = None,
) -> AttestationReport:
    """Signature first; only a verified payload is parsed and checked against the policy.

    `attestation.identity` must come from the `Verifier`'s certificate verification
    (`certificate`), and `attestation.logged` from its verification of a key-signed
    bundle's log entry (`log`); `Verifier.verify` guarantees both."""
    report = AttestationReport(
        attestation.name,
        digest=attestation.digest,
        certificate=certificate,
        log=log,
        certified=attestation,
    )
    envelope = attestation.envelope
    signed = signers_that_signed(attestation, policy.signers)
    report.signed_by = [s.name for s in signed]
    detail = "" if signed else _unsigned_detail(policy, attestation, certificate, log)
    report.checks.append(
        Check("signature", bool(signed), [s.name for s in policy.signers], report.signed_by, detail)
    )
    if not signed:
        return report
    report.checks.extend(_log_checks(signed, certificate, log))
    if read_payload(report, envelope.payload_type, envelope.payload):
        assert report.statement is not None
        # A policy file's statements always go through the validator first.
        judge_statement(report, StatementRules(policy=policy, validate=True), signed, None)
        if attestation.gcb is not None:
            report.checks.extend(c.check_gcb_context(attestation.gcb, report.statement))
    return report


def _log_checks(
    signed: Sequence[Signer], certificate: CertificateResult | None, log: LogResult | None
) -> list[Check]:
    """What the transparency log proved, for the kind of signer that signed."""
    result: list[Check] = []
    if log is not None and log.logged is not None and key_signers(signed):
        result.extend(log.checks)
    if certificate is not None and identity_signers(signed):
        result.append(_certificate_log_check(certificate))
    return result


def _certificate_log_check(certificate: CertificateResult) -> Check:
    """What stood for the log entry of a verified Sigstore signature (or its waiver)."""
    signature = certificate.signature
    assert signature is not None  # an identity is only set from a verified certificate
    waived = "not checked: insecure_ignore_tlog (the signing time is unproven)"
    return Check(
        "transparencyLog",
        True,
        "an inclusion proof or promise, or the envelope's Rekor entry",
        signature.log_proof.value,
        "" if signature.tlog_checked else waived,
    )


def evaluate_unverified_claims(claims: Claims, policy: Policy) -> list[Check]:
    """The claim checks as if every policy signer had signed: for comparing rule sets only.

    The result never includes a passing signature check, so it can never be taken for
    a verified result; `Verifier` does not use it.
    """
    unsafe, _ = claim_checks(claims, policy, policy.signers)
    return [Check("signature", False, "not checked", None, "unverified claims"), *unsafe]


def _show_subjects(reports: Sequence[AttestationReport], results: Sequence[Coverage]) -> None:
    """Each artifact's subject checks, shown with the attestation they were made on too;
    its verdict ignores them (`subject` is set)."""
    read = [report for report in reports if report.claims is not None]
    for result in results:
        for report, check in zip(read, result.checks, strict=True):
            report.checks.append(check)


def evaluate(
    policy: Policy,
    artifacts: Sequence[Artifact],
    attestations: Sequence[Attestation],
    *,
    evidence: Iterable[Attestation] | None = None,
    trust: SigstoreTrust | None = None,
) -> VerificationReport:
    """`Verifier(policy=policy, evidence=evidence, trust=trust).verify(artifacts, attestations)`."""
    return Verifier(policy=policy, evidence=evidence, trust=trust).verify(artifacts, attestations)


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
