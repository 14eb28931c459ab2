"""Sigstore material of attestations, verified before a policy's identity signers match.

    trust = SigstoreTrust(insecure_ignore_tlog=False)          # shipped trusted roots
    certified, result = CertificateVerifier(trust).certify(attestation)
    certified.identity     # set only when the bundle (or legacy envelope) verified
    result.checks          # what was verified, or why not

An attestation read from a Sigstore bundle (or a legacy envelope whose signature carries
a Fulcio certificate) keeps that material as `Attestation.sigstore`. Here it is
verified offline with `assay.sigstore` (chain to a Fulcio CA of a trusted root, SCT,
transparency-log proof, signature over the DSSE PAE), the verified payload must be the
envelope's, and only then is the certificate identity set. An identity a caller put on
an `Attestation` is always replaced: only this module decides it.

A bundle signed with a key (npm's publish attestation) has no certificate: `log`
verifies its transparency-log entry instead (inclusion proof and checkpoint, signed entry
timestamp, against a trusted root's Rekor keys) and that the entry logs the envelope,
and sets `Attestation.logged`: the signatures, with their keys, the entry records. A
policy key counts for such an attestation only through it (`assay.verify.signers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError
from assay.results import Check
from assay.verify.model import Attestation

if TYPE_CHECKING:
    from assay.dsse import Envelope
    from assay.sigstore.keyed import LoggedSignatures
    from assay.sigstore.roots import Root
    from assay.sigstore.signature import RekorLookup
    from assay.sigstore.verifier import BundleVerifier, VerifiedSignature


@dataclass(frozen=True, slots=True)
class SigstoreTrust:
    """What a certificate is verified against, and how a missing log entry is handled."""

    roots: Sequence[Root] | None = None
    """Trusted roots; None: the shipped ones (and those stored by `assay trust update`)."""
    insecure_ignore_tlog: bool = False
    """Accept legacy envelopes without a transparency-log entry (recorded as waived)."""
    rekor: RekorLookup | None = None
    """Finds a legacy envelope's Rekor entry (online); None: no look-up."""
    verifier: BundleVerifier | None = field(default=None, compare=False)
    """A ready bundle verifier for `roots` (built on first use when None)."""


@dataclass(frozen=True, slots=True)
class CertificateResult:
    """The verification of one attestation's Sigstore material."""

    signature: VerifiedSignature | None
    checks: tuple[Check, ...]

    @property
    def verified(self) -> bool:
        return self.signature is not None

    @property
    def tlog_waived(self) -> bool:
        return self.signature is not None and not self.signature.tlog_checked

    def failure(self) -> str:
        """Why the material did not verify (empty when it did)."""
        first = _first_failed(self.checks)
        if first is None:
            return ""
        return first.detail or f"{first.name}: expected {first.expected}, found {first.found}"

    def to_dict(self) -> dict[str, Any]:
        """The verified signature, or why the material did not verify."""
        if self.signature is None:
            return {"verified": False, "reason": self.failure()}
        return self.signature.to_dict()


@dataclass(frozen=True, slots=True)
class LogResult:
    """The verification of a key-signed bundle's transparency-log entry."""

    logged: LoggedSignatures | None
    checks: tuple[Check, ...]

    @property
    def verified(self) -> bool:
        return self.logged is not None

    def failure(self) -> str:
        """Why the entry did not verify (empty when it did)."""
        first = _first_failed(self.checks)
        return "" if first is None else first.detail

    def to_dict(self) -> dict[str, Any]:
        """The signatures the verified entry records, or why it did not verify."""
        if self.logged is None:
            return {"verified": False, "reason": self.failure()}
        return self.logged.to_dict()


def _first_failed(checks: Sequence[Check]) -> Check | None:
    return next((check for check in checks if not check.passed), None)


class CertificateVerifier:
    """Verifies attestations' Sigstore material with one trust configuration."""

    def __init__(self, trust: SigstoreTrust) -> None:
        self.trust = trust
        self._bundle_verifier = trust.verifier

    def bundle_verifier(self) -> BundleVerifier:
        """The bundle verifier for the trusted roots (built on first use)."""
        if self._bundle_verifier is None:
            from assay.sigstore.roots import select_roots
            from assay.sigstore.verifier import BundleVerifier

            roots = list(self.trust.roots) if self.trust.roots is not None else select_roots()
            self._bundle_verifier = BundleVerifier(roots)
        return self._bundle_verifier

    def certify(self, attestation: Attestation) -> tuple[Attestation, CertificateResult | None]:
        """The attestation with its verified identity (or none), and what was checked."""
        if attestation.sigstore is None:
            return _without_identity(attestation), None
        signature, checks = self._verify_material(attestation.name, dict(attestation.sigstore))
        if signature is not None:
            same = _payload_check(signature, attestation.envelope)
            checks.append(same)
            if not same.passed:
                signature = None
        result = CertificateResult(signature, tuple(checks))
        identity = signature.identity if signature is not None else None
        return replace(attestation, identity=identity, logged=None), result

    def _verify_material(
        self, name: str, document: dict[str, Any]
    ) -> tuple[VerifiedSignature | None, list[Check]]:
        """An attestation's Sigstore material, verified offline (its legacy envelope's log
        entry looked up in Rekor when the trust says so)."""
        from assay.sigstore.signature import verify_signed_document

        try:
            return verify_signed_document(
                name,
                document,
                self.bundle_verifier(),
                insecure_ignore_tlog=self.trust.insecure_ignore_tlog,
                rekor=self.trust.rekor,
            )
        except AssayError as error:
            return None, [
                Check("certificate", False, "a verified Sigstore signature", None, str(error))
            ]

    def log(self, attestation: Attestation) -> tuple[Attestation, LogResult]:
        """A key-signed bundle's attestation with the signatures its verified log entry
        records (or none), and what was checked."""
        from assay.sigstore.keyed import verify_logged_envelope

        assert attestation.sigstore is not None
        expected = "a transparency-log entry that logs this envelope, verified offline"
        try:
            logged = verify_logged_envelope(
                attestation.sigstore, attestation.name, self.bundle_verifier()
            )
        except AssayError as error:
            check = Check("transparencyLog", False, expected, None, str(error))
            return replace(attestation, identity=None, logged=None), LogResult(None, (check,))
        found = f"{logged.log_proof.value}, log index {logged.log_index}, {logged.trusted_root}"
        check = Check("transparencyLog", True, expected, found)
        return replace(attestation, identity=None, logged=logged), LogResult(logged, (check,))


def _payload_check(signature: VerifiedSignature, envelope: Envelope) -> Check:
    """The verified Sigstore payload must be the envelope's."""
    same = signature.payload == envelope.payload and signature.payload_type == envelope.payload_type
    return Check(
        "certificate.payload",
        same,
        "the envelope's payload",
        "the same payload" if same else "another payload",
        "" if same else "the verified Sigstore payload is not the envelope's",
    )


def _without_identity(attestation: Attestation) -> Attestation:
    if attestation.identity is None and attestation.logged is None:
        return attestation
    return replace(attestation, identity=None, logged=None)
