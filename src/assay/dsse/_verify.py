"""Signing and verifying DSSE envelopes over the exact PAE bytes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from assay.dsse._envelope import Envelope, Signature, pae
from assay.errors import VerificationError

MAX_VERIFICATIONS: Final = 8
"""Signature checks made for one envelope at most, beyond one per trusted key; signatures
whose keyid names a trusted key are tried first."""


class Signer(Protocol):
    """Anything that signs bytes and names its key (local keys today, KMS or Sigstore later)."""

    @property
    def keyid(self) -> str: ...

    def sign(self, data: bytes) -> bytes: ...


class Verifier(Protocol):
    """Anything that checks a signature over bytes; `keyid` is only used to try it first."""

    @property
    def keyid(self) -> str: ...

    def verify(self, signature: bytes, data: bytes) -> bool: ...


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """The outcome of checking an envelope against trusted keys (not raising)."""

    threshold: int
    signed_by: tuple[Verifier, ...]
    """Distinct trusted keys with at least one valid signature, in envelope order."""
    payload: bytes
    payload_type: str

    @property
    def verified(self) -> bool:
        return len(self.signed_by) >= self.threshold

    def __bool__(self) -> bool:
        return self.verified

    @property
    def missing(self) -> int:
        return max(0, self.threshold - len(self.signed_by))


@dataclass(frozen=True, slots=True)
class VerifiedPayload:
    """Payload bytes whose signatures met the threshold; the only bytes callers should parse."""

    payload: bytes
    payload_type: str
    signed_by: tuple[Verifier, ...]


def sign(payload: bytes, payload_type: str, signers: Iterable[Signer]) -> Envelope:
    """An envelope over `payload` with one signature per signer."""
    message = pae(payload_type, payload)
    signatures = tuple(Signature(s.sign(message), s.keyid) for s in signers)
    if not signatures:
        raise ValueError("sign() needs at least one signer")
    return Envelope(payload, payload_type, signatures)


def key_fingerprint(key: Verifier) -> str:
    """What makes two trusted keys the same key: the key material, never its label.

    Keys that can name their material (`fingerprint()`, as `assay.keys.PublicKey`) are
    compared by it; any other verifier object only equals itself.
    """
    fingerprint = getattr(key, "fingerprint", None)
    if callable(fingerprint):
        value = fingerprint()
        if isinstance(value, str) and value:
            return value
    return f"object:{id(key)}"


def _hint_ids(key: Verifier) -> frozenset[str]:
    ids = getattr(key, "keyids", None)
    if isinstance(ids, frozenset):
        return ids
    return frozenset({key.keyid})


def check_signatures(
    envelope: Envelope, keys: Sequence[Verifier], threshold: int = 1
) -> SignatureCheck:
    """Which trusted keys signed `envelope`, counted once per key fingerprint.

    The keyid of a signature is an unauthenticated hint: keys whose ids (assay's own, the
    in-toto/securesystemslib id, the one a policy gives) match are tried first, then the
    others, so a wrong or empty keyid never hides a valid signature. A key counts once
    however many signatures it made, and so do two entries of the same key under
    different labels. Work is bounded: checking stops when the threshold is met, and at
    most `MAX_VERIFICATIONS` signature checks are made per envelope.
    """
    if threshold < 1:
        raise ValueError(f"threshold must be at least 1, got {threshold}")
    distinct: dict[str, Verifier] = {}
    for key in keys:
        distinct.setdefault(key_fingerprint(key), key)
    counter = _Counter(distinct, envelope.pae(), threshold)
    for signature in _hinted_first(envelope.signatures, distinct.values()):
        if counter.done:
            break
        counter.try_signature(signature)
    return SignatureCheck(
        threshold, tuple(counter.signed.values()), envelope.payload, envelope.payload_type
    )


def _hinted_first(signatures: Sequence[Signature], keys: Iterable[Verifier]) -> list[Signature]:
    """Signatures that name a trusted key first, then unnamed ones, then the rest."""
    hinted: set[str] = set().union(*(_hint_ids(k) for k in keys))
    return sorted(
        signatures, key=lambda sig: 0 if sig.keyid in hinted else (1 if not sig.keyid else 2)
    )


class _Counter:
    """The distinct keys that verified a signature so far, within the work budget."""

    def __init__(self, distinct: dict[str, Verifier], message: bytes, threshold: int) -> None:
        self.distinct, self.message, self.threshold = distinct, message, threshold
        self.signed: dict[str, Verifier] = {}
        self.attempts = 0
        self.budget = MAX_VERIFICATIONS + len(distinct)

    @property
    def done(self) -> bool:
        return len(self.signed) >= self.threshold or self.attempts >= self.budget

    def try_signature(self, signature: Signature) -> None:
        """Each key not yet counted, those the keyid hints at first, until one verifies."""
        remaining = [(f, k) for f, k in self.distinct.items() if f not in self.signed]
        if len(remaining) > 1 and signature.keyid:
            remaining.sort(key=lambda item: signature.keyid not in _hint_ids(item[1]))
        for fingerprint, key in remaining:
            if self.attempts >= self.budget:
                return
            self.attempts += 1
            if key.verify(signature.sig, self.message):
                self.signed[fingerprint] = key
                return


def verify(
    envelope: Envelope,
    keys: Sequence[Verifier],
    threshold: int = 1,
    *,
    payload_type: str | None = None,
) -> VerifiedPayload:
    """The verified payload, or `VerificationError` if fewer than `threshold` keys signed.

    This does **not** parse the payload. When `payload_type` is given it must match
    exactly; otherwise the caller checks it.
    """
    if not keys:
        raise VerificationError("DSSE: no trusted keys were given, nothing can verify")
    distinct = len({key_fingerprint(k) for k in keys})
    if threshold > distinct:
        raise VerificationError(
            f"DSSE: threshold {threshold} cannot be met by {distinct} distinct trusted key(s)"
        )
    check = check_signatures(envelope, keys, threshold)
    if not check.verified:
        raise VerificationError(
            f"DSSE: expected valid signatures from {threshold} distinct trusted key(s), "
            f"found {len(check.signed_by)} among {len(envelope.signatures)} signature(s)"
        )
    if payload_type is not None and envelope.payload_type != payload_type:
        raise VerificationError(
            f"DSSE payloadType: expected {payload_type!r}, got {envelope.payload_type!r}"
        )
    return VerifiedPayload(envelope.payload, envelope.payload_type, check.signed_by)


def key_names(keys: Iterable[Verifier]) -> list[str]:
    """Readable names for keys in a report."""
    return [k.keyid for k in keys]
