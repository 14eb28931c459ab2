"""The steps of slsa-verifier's and gh's modes, built-in policies the `Verifier` runs.

    policy = slsa_verifier_policy(options)        # or GhPolicy(...).mode_policy()
    report = Verifier(policy=policy, trust=trust).verify(artifacts, documents)
    report.attestations                           # one per signed document
    report.artifacts                              # one per artifact: its own verdict

`ModeSteps` are what the `Verifier` does with each document for a `ModePolicy`
(`assay.policy.builtin`): the signature step the policy names (`SignatureForm`), the
certificate's rules (`CertificateRules`, checked under upstream's names, so the first
failure reads as upstream's), then payload type, statement and the `StatementRules` for
the workflow the certificate names, as for a policy file after its signature. A policy
that puts the certificate first reads nothing a certificate it refuses signed
(slsa-verifier); otherwise the certificate is judged after the statement (gh).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from assay import protocol
from assay.errors import VerificationError
from assay.policy.builtin import ModePolicy, SignatureForm
from assay.results import Check
from assay.sigstore.signature import verify_signed_document
from assay.sigstore.verifier import BundleVerifier, VerifiedSignature
from assay.verify.certificates import CertificateVerifier, SigstoreTrust
from assay.verify.model import Artifact
from assay.verify.pipeline import Evaluation, judge_statement, payload_type_check, read_payload
from assay.verify.report import Report

__all__ = ["ModeReport", "ModeSteps", "SignedDocument", "SignedEvaluation"]


class SignedDocument(NamedTuple):
    """One bundle or envelope as read from a file: nothing in it is trusted yet."""

    label: str
    document: dict[str, Any]


@dataclass(slots=True)
class SignedEvaluation(Evaluation):
    """One signed document through the pipeline, with the signature that verified."""

    signature: VerifiedSignature | None = None

    @property
    def predicate_type(self) -> str | None:
        return self.claims.predicate_type if self.claims is not None else None

    @property
    def tlog_waived(self) -> bool:
        return self.signature is not None and not self.signature.tlog_checked


ModeReport = Report[ModePolicy, SignedEvaluation]
"""The `Verifier`'s report for a mode's built-in policy."""


SignatureStep = Callable[
    [SignedDocument, BundleVerifier, SigstoreTrust, bytes | None],
    tuple[VerifiedSignature | None, list[Check]],
]


def _certified_envelope(
    item: SignedDocument, verifier: BundleVerifier, trust: SigstoreTrust, _: bytes | None
) -> tuple[VerifiedSignature | None, list[Check]]:
    # slsa-verifier: a bundle, or a legacy envelope whose Rekor entry is found or waived.
    return verify_signed_document(
        item.label,
        item.document,
        verifier,
        insecure_ignore_tlog=trust.insecure_ignore_tlog,
        rekor=trust.rekor,
    )


def _bundle(
    item: SignedDocument, verifier: BundleVerifier, _: SigstoreTrust, sha256: bytes | None
) -> tuple[VerifiedSignature | None, list[Check]]:
    # gh: v0.1 bundles are refused; a message signature is checked against the artifact.
    media_type = item.document.get("mediaType")
    if media_type == protocol.BUNDLE_V01:
        return None, [
            Check(
                "bundle.version",
                False,
                "a bundle of version 0.2 or later",
                media_type,
                "unsupported bundle version (as gh: v0.1 bundles are refused)",
            )
        ]
    try:
        verified = verifier.verify(item.document, item.label, artifact_sha256=sha256)
    except VerificationError as error:
        return None, [Check("signature", False, "a verified Sigstore bundle", None, str(error))]
    return verified, [Check("signature", True, "a verified Sigstore bundle", verified.media_type)]


SIGNATURE_STEPS: Final[Mapping[SignatureForm, SignatureStep]] = {
    SignatureForm.CERTIFIED_ENVELOPE: _certified_envelope,
    SignatureForm.BUNDLE: _bundle,
}


class ModeSteps:
    """What the `Verifier` does with each signed document for a mode's built-in policy."""

    def __init__(self, policy: ModePolicy, trust: SigstoreTrust) -> None:
        self.policy = policy
        self.trust = trust
        self._verifier = CertificateVerifier(trust).bundle_verifier()

    def evaluate(
        self, artifacts: Sequence[Artifact], items: Sequence[SignedDocument]
    ) -> list[SignedEvaluation]:
        """Every document through the signature step, then the certificate's rules and
        the statement's, in the policy's order."""
        # The digest a message-signature bundle must sign: gh's one artifact's.
        sha256 = _only_sha256(artifacts)
        return [self._evaluate(item, sha256) for item in items]

    def conclude(self, report: ModeReport) -> None:
        """Nothing follows: a mode's verdict is each artifact's own."""

    def _evaluate(self, item: SignedDocument, sha256: bytes | None) -> SignedEvaluation:
        result = SignedEvaluation(item.label)
        step = SIGNATURE_STEPS[self.policy.signature]
        verified, checks = step(item, self._verifier, self.trust, sha256)
        result.checks.extend(checks)
        if verified is None:
            return result
        result.signature = verified
        if self.policy.certificate_first:
            self._certificate_then_statement(result, verified)
        else:
            self._statement_then_certificate(result, verified)
        return result

    def _certificate_then_statement(
        self, result: SignedEvaluation, verified: VerifiedSignature
    ) -> None:
        result.checks.extend(self.policy.certificate.checks(verified.identity))
        if result.passed and verified.payload is not None:
            self._read(result, verified)
        else:
            # Only the payload type is reported: nothing a refused certificate signed is read.
            result.checks.append(payload_type_check(verified.payload_type))

    def _statement_then_certificate(
        self, result: SignedEvaluation, verified: VerifiedSignature
    ) -> None:
        if verified.payload is None:
            result.signed_digest = verified.message_digest  # a message signature
        elif not self._read(result, verified):
            return
        result.checks.extend(self.policy.certificate.checks(verified.identity))

    def _read(self, result: SignedEvaluation, verified: VerifiedSignature) -> bool:
        """Payload type, statement and the statement rules for the certificate's workflow;
        False when the statement could not be read."""
        assert verified.payload is not None
        where = f"{result.name}: payload"
        if not read_payload(result, verified.payload_type, verified.payload, where=where):
            return False
        rules = self.policy.statement_rules(verified.identity)
        if rules is not None:
            signers = rules.policy.signers if rules.policy is not None else ()
            judge_statement(result, rules, signers, verified.identity.san)
        return True


def _only_sha256(artifacts: Sequence[Artifact]) -> bytes | None:
    """The SHA-256 a message signature must sign: the one artifact's, when it has one."""
    if len(artifacts) != 1 or "sha256" not in artifacts[0].digest:
        return None
    return bytes.fromhex(artifacts[0].digest["sha256"])
