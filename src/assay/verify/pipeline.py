"""signature -> payload type -> statement -> claims -> checks: the one evaluation path.

    evaluation = Evaluation("prov.intoto.jsonl")
    evaluation.checks += signature_checks          # made by the pipeline's signature step
    read_payload(evaluation, payload_type, payload)  # payload type, statement, claims
    judge_statement(evaluation, rules, signed, san)  # the policy's statement rules, level
    coverage = cover(artifact, [evaluation])        # one artifact's own verdict

Every verification runs these steps through one `Verifier` (`assay.verify.verifier`):
a policy file (`assay verify`: key or identity signers) and a mode's built-in policy
(`assay.verify.modes`: slsa-verifier's, for `verify-artifact` and `verify-image`, and
gh's, for `verify-bundle`) differ only in their signature step (who signed: keys or a
certificate identity, checked by the policy's `CertificateRules`) and in the
`StatementRules` their policy gives. Only a payload whose signature verified is ever
handed to `read_payload`.

Each artifact is judged on its own (`cover`): a passing evaluation covers it only when its
verified statement names one of the artifact's digests (names are never compared). The
per-artifact subject checks are kept with the artifact (`Coverage`), never found among
an attestation's checks by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay import protocol
from assay.errors import AttestationError
from assay.policy.builtin import StatementRules
from assay.policy.model import Policy, Signer
from assay.policy.refs import split_ref
from assay.results import Check
from assay.verify import checks as c
from assay.verify.claims import Claims, parse_statement, read_claims
from assay.verify.model import Artifact

__all__ = [
    "Coverage",
    "Evaluation",
    "claim_checks",
    "cover",
    "judge_claims",
    "judge_statement",
    "payload_type_check",
    "read_payload",
    "validation_check",
]


@dataclass(slots=True)
class Evaluation:
    """One signed document through the pipeline: its checks, and what verified."""

    name: str
    checks: list[Check] = field(default_factory=list)
    statement: dict[str, Any] | None = None
    """The verified statement (set once its signature and payload type passed)."""
    claims: Claims | None = None
    level: int | None = None
    """The build level its trusted builder reaches (None: not reached)."""
    signed_digest: tuple[str, str] | None = None
    """For a message signature (a bundle that signs an artifact's digest, no statement):
    the digest signed, which stands for the subject."""

    @property
    def passed(self) -> bool:
        """Every check of the document passed (subjects are judged per artifact)."""
        return bool(self.checks) and all(check.passed for check in self.checks)

    @property
    def tlog_waived(self) -> bool:
        """Accepted without a transparency-log entry (`insecure_ignore_tlog`)."""
        return False

    def to_dict(self) -> dict[str, Any]:
        return {
            "attestation": self.name,
            "passed": self.passed,
            "level": self.level,
            "checks": [check.to_dict() for check in self.checks],
        }


def read_payload(
    evaluation: Evaluation, payload_type: str | None, payload: bytes, *, where: str | None = None
) -> bool:
    """Payload type, then the statement and its claims, from verified payload bytes.

    Returns whether the claims were read (the later steps need them)."""
    evaluation.checks.append(payload_type_check(payload_type))
    try:
        statement = parse_statement(payload, where=where or evaluation.name)
        claims = read_claims(statement)
    except AttestationError as error:
        evaluation.checks.append(
            Check("statement", False, "an in-toto statement", None, str(error))
        )
        return False
    evaluation.statement, evaluation.claims = statement, claims
    evaluation.checks.append(
        Check(
            "statement",
            claims.statement_type in protocol.STATEMENT_TYPES,
            list(protocol.STATEMENT_TYPES),
            claims.statement_type,
        )
    )
    return True


def payload_type_check(payload_type: str | None) -> Check:
    """DSSE's payload type must say the payload is an in-toto statement."""
    return Check(
        "payloadType",
        payload_type == protocol.PAYLOAD_TYPE_INTOTO,
        protocol.PAYLOAD_TYPE_INTOTO,
        payload_type,
    )


def validation_check(statement: dict[str, Any]) -> Check:
    """The validator of `assay attest validate`: its errors fail the statement."""
    from assay import attestation as formats

    errors = [f for f in formats.validate(statement) if f.severity is formats.Severity.ERROR]
    return Check(
        "statement.valid",
        not errors,
        "no error from the attestation validator",
        [f"{f.path}: {f.message}" for f in errors[:10]],
        f"{len(errors)} error(s); `assay attest validate` lists them" if errors else "",
    )


def claim_checks(
    claims: Claims, policy: Policy, signed: Sequence[Signer]
) -> tuple[list[Check], int | None]:
    """Every check of the claims against the policy, given the signers that signed,
    and the build level the trusted builder reaches."""
    builder, level = c.check_builder(claims, signed)
    rules = c.matching_rules(claims, signed)
    result = [
        builder,
        c.check_predicate_type(claims, policy),
        c.check_build_type(claims, policy, rules),
        *c.check_parameters(claims, policy.parameters),
        *c.check_source(claims, policy.source),
        *c.check_refs(claims, policy.source),
        c.check_level(level, policy),
    ]
    return result, level


def judge_claims(evaluation: Evaluation, policy: Policy, signed: Sequence[Signer]) -> None:
    """The policy's claim checks on what `read_payload` read, and the level reached."""
    assert evaluation.claims is not None
    checks, evaluation.level = claim_checks(evaluation.claims, policy, signed)
    evaluation.checks.extend(checks)


def judge_statement(
    evaluation: Evaluation, rules: StatementRules, signed: Sequence[Signer], san: str | None
) -> None:
    """The statement rules on what `read_payload` read: the validator (when the policy
    runs it), the predicate type, the builder against the certificate's workflow, then the
    claims policy's checks and level."""
    assert evaluation.claims is not None
    assert evaluation.statement is not None
    if rules.validate:
        evaluation.checks.append(validation_check(evaluation.statement))
    if rules.predicate_type is not None:
        found = evaluation.claims.predicate_type
        evaluation.checks.append(
            Check("predicateType", found == rules.predicate_type, rules.predicate_type, found)
        )
    if rules.builder_is_signer:
        evaluation.checks.append(builder_certificate_check(evaluation.claims, san))
    if rules.policy is not None:
        judge_claims(evaluation, rules.policy, signed)


def builder_certificate_check(claims: Claims, san: str | None) -> Check:
    """The builder id names the certificate's workflow, at the same ref."""
    workflow, ref = split_ref(san or "")
    name, found = split_ref(claims.builder_id or "")
    same = (
        name == workflow
        and found is not None
        and ref is not None
        and found.removeprefix("refs/tags/") == ref.removeprefix("refs/tags/")
    )
    return Check("builder.certificate", same, san, claims.builder_id)


@dataclass(slots=True)
class Coverage:
    """One artifact's own verdict: the subject check against every verified statement,
    and the passing evaluations whose statement names one of its digests."""

    artifact: Artifact
    checks: list[Check] = field(default_factory=list)
    covering: list[Evaluation] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.covering)

    @property
    def attestations(self) -> list[str]:
        """The names of the covering evaluations."""
        return [e.name for e in self.covering]

    @property
    def level(self) -> int | None:
        """The highest level among the covering evaluations (None: none reached one)."""
        levels = [e.level for e in self.covering if e.level is not None]
        return max(levels) if levels else None

    @property
    def builder_ids(self) -> list[str]:
        return [
            e.claims.builder_id
            for e in self.covering
            if e.claims is not None and e.claims.builder_id
        ]


def cover(artifact: Artifact, evaluations: Sequence[Evaluation]) -> Coverage:
    """The artifact's own verdict over every evaluation whose statement was read."""
    result = Coverage(artifact)
    for evaluation in evaluations:
        check = _subject_check(evaluation, artifact)
        if check is None:
            continue
        result.checks.append(check)
        if check.passed and evaluation.passed:
            result.covering.append(evaluation)
    return result


def _subject_check(evaluation: Evaluation, artifact: Artifact) -> Check | None:
    if evaluation.claims is not None:
        return c.check_subject(evaluation.claims, artifact.name, artifact.digest)
    if evaluation.signed_digest is None:
        return None  # nothing verified names a subject
    algorithm, value = evaluation.signed_digest
    return Check(
        "subject",
        artifact.digest.get(algorithm, "").lower() == value.lower(),
        dict(artifact.digest),
        {algorithm: value},
        subject=artifact.name,
    )
