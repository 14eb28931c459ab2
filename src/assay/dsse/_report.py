"""Typed results of signing and of checking signatures, for people and for `--json`.

    result = signature_report(envelope, keys, threshold=2, payload_type=INTOTO_PAYLOAD_TYPE)
    result.passed, [key.fingerprint for key in result.signed_by], result.to_dict()

`signature_report` never raises on a failed check: the reason is in `error`. Keys are
named by assay's key id, their in-toto id and their fingerprint (the SHA-256 of the
public key), which is what thresholds count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.dsse._envelope import Envelope
from assay.dsse._verify import Verifier, key_fingerprint, verify
from assay.errors import VerificationError


@dataclass(frozen=True, slots=True)
class KeyName:
    keyid: str
    intoto_keyid: str
    fingerprint: str

    @classmethod
    def of(cls, key: Verifier) -> KeyName:
        return cls(key.keyid, str(getattr(key, "intoto_keyid", "")), key_fingerprint(key))

    def to_dict(self) -> dict[str, str]:
        return {
            "keyid": self.keyid,
            "intotoKeyid": self.intoto_keyid,
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True, slots=True)
class SignatureReport:
    """The outcome of `attest verify-signature`."""

    passed: bool
    payload_type: str
    expected_payload_type: str | None
    threshold: int
    signatures: int
    """Signatures in the envelope."""
    signed_by: tuple[KeyName, ...]
    """Distinct trusted keys (by fingerprint) that signed; empty when it failed."""
    payload: bytes | None
    """The verified payload (None when the check failed)."""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "payloadType": self.payload_type,
            "expectedPayloadType": self.expected_payload_type,
            "threshold": self.threshold,
            "signatures": self.signatures,
            "signedBy": [key.to_dict() for key in self.signed_by],
            "payloadSha256": hashlib.sha256(self.payload).hexdigest()
            if self.payload is not None
            else None,
            "error": self.error or None,
        }


def signature_report(
    envelope: Envelope,
    keys: Sequence[Verifier],
    threshold: int = 1,
    *,
    payload_type: str | None = None,
) -> SignatureReport:
    """`verify` as a typed report: distinct keys by fingerprint up to `threshold`."""
    try:
        verified = verify(envelope, keys, threshold, payload_type=payload_type)
    except VerificationError as error:
        return SignatureReport(
            False,
            envelope.payload_type,
            payload_type,
            threshold,
            len(envelope.signatures),
            (),
            None,
            str(error),
        )
    return SignatureReport(
        True,
        verified.payload_type,
        payload_type,
        threshold,
        len(envelope.signatures),
        tuple(KeyName.of(key) for key in verified.signed_by),
        verified.payload,
    )


@dataclass(frozen=True, slots=True)
class SigningReport:
    """The outcome of `attest sign`: the envelope, where it went and who signed."""

    envelope: Envelope
    signers: tuple[KeyName, ...]
    out: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "payloadType": self.envelope.payload_type,
            "payloadSha256": hashlib.sha256(self.envelope.payload).hexdigest(),
            "signedBy": [key.to_dict() for key in self.signers],
            "out": self.out,
            "envelope": self.envelope.to_dict(),
        }
