"""Sigstore bundles signed with a key (npm's publish attestation): their log entry, offline.

A bundle whose verification material is a public key (`"publicKey": {"hint": ...}`)
carries no certificate: the signer is a key, and only the caller knows which keys it
trusts. What the bundle proves by itself is verified here, as Sigstore clients verify
key-signed bundles: its one transparency-log entry has an inclusion proof to a checkpoint
signed by a Rekor key of a trusted root (and a valid signed entry timestamp when it has
one), and that entry logs this envelope: the payload's SHA-256, and each signature with
the public key that made it. The result lists those (signature, key fingerprint) pairs;
a trusted key counts for the envelope only when it is one of them and verifies its
signature over the DSSE PAE (`assay.verify.signers`).

    logged = verify_logged_envelope(bundle, "npm.json#1", bundle_verifier)
    logged.signatures      # {(signature bytes, key fingerprint), ...}
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from assay.errors import AttestationError, VerificationError
from assay.sigstore import validity
from assay.sigstore.verifier import BUNDLE_MEDIA_TYPES, LogProof, _short

if TYPE_CHECKING:
    from assay.sigstore.verifier import BundleVerifier


@dataclass(frozen=True, slots=True)
class LoggedSignatures:
    """What a key-signed bundle's verified transparency-log entry records."""

    where: str
    media_type: str
    payload_sha256: str
    signatures: frozenset[tuple[bytes, str]]
    """(signature bytes, fingerprint of the key the entry says made it): the fingerprint
    is the hex SHA-256 of the DER public key, as `assay.keys.PublicKey.fingerprint`."""
    log_proof: LogProof
    log_index: int | None
    integrated_time: datetime | None
    """Rekor's integrated time, when its signed entry timestamp was verified."""
    trusted_root: str

    @property
    def key_fingerprints(self) -> frozenset[str]:
        return frozenset(fingerprint for _, fingerprint in self.signatures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.where,
            "mediaType": self.media_type,
            "loggedKeys": sorted(self.key_fingerprints),
            "transparencyLog": {
                "proof": self.log_proof.value,
                "checked": True,
                "logIndex": self.log_index,
                "integratedTime": (
                    self.integrated_time.isoformat().replace("+00:00", "Z")
                    if self.integrated_time is not None
                    else None
                ),
            },
            "trustedRoot": self.trusted_root,
        }


def is_key_signed(document: object) -> bool:
    """A Sigstore bundle whose verification material is a public key."""
    if not isinstance(document, Mapping):
        return False
    material = document.get("verificationMaterial")
    return (
        str(document.get("mediaType", "")).startswith("application/vnd.dev.sigstore.bundle")
        and isinstance(material, Mapping)
        and "publicKey" in material
    )


def verify_logged_envelope(
    document: Mapping[str, Any], where: str, verifier: BundleVerifier
) -> LoggedSignatures:
    """Verify a key-signed bundle's log entry against `verifier`'s trusted roots.

    Raises `AttestationError` for a bundle that is not usable (the JSON path named) and
    `VerificationError` when the entry does not verify or logs something else.
    """
    media_type = document.get("mediaType")
    if media_type not in BUNDLE_MEDIA_TYPES:
        raise AttestationError(
            f"{where}: $.mediaType",
            f"expected a Sigstore bundle media type (v0.1, v0.2, v0.3), found {media_type!r}",
        )
    envelope = _signed_envelope(document, where)
    entry_json = _single_entry(document["verificationMaterial"], where)
    entry = _log_entry(entry_json, where, promise_only=_promise_only(media_type, entry_json))
    root = _verify_entry(entry, where, verifier)
    inner = entry._inner
    payload_sha256 = hashlib.sha256(envelope.payload).hexdigest()
    logged = _logged_signatures(inner.canonicalized_body, envelope, payload_sha256, where)
    return LoggedSignatures(
        where=where,
        media_type=str(media_type),
        payload_sha256=payload_sha256,
        signatures=frozenset(logged),
        log_proof=(
            LogProof.INCLUSION_PROMISE
            if inner.inclusion_proof is None
            else LogProof.INCLUSION_PROOF  # with its checkpoint
        ),
        log_index=int(inner.log_index) if inner.log_index is not None else None,
        integrated_time=_promised_time(inner),
        trusted_root=root,
    )


def _signed_envelope(document: Mapping[str, Any], where: str) -> Any:
    """The DSSE envelope the key signed (`assay.dsse.Envelope`)."""
    from assay import dsse

    envelope_json = document.get("dsseEnvelope")
    if not isinstance(envelope_json, dict):
        raise AttestationError(
            f"{where}: $.dsseEnvelope", "expected the DSSE envelope the key signed"
        )
    return dsse.Envelope.from_dict(envelope_json, where=f"{where}: $.dsseEnvelope")


def _single_entry(material: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The one transparency-log entry a key-signed bundle has."""
    entries = material.get("tlogEntries")
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        raise AttestationError(
            f"{where}: $.verificationMaterial.tlogEntries",
            "expected exactly one transparency-log entry",
        )
    return entries[0]


def _promised_time(inner: Any) -> datetime | None:
    """Rekor's integrated time, when the entry's signed promise vouches for it."""
    if inner.integrated_time and inner.inclusion_promise is not None:
        return datetime.fromtimestamp(inner.integrated_time, tz=UTC)
    return None


def _promise_only(media_type: object, entry: dict[str, Any]) -> bool:
    """A v0.1 bundle's entry without an inclusion proof with a checkpoint: verified by its
    signed promise, as for certificate-signed v0.1 bundles (npm's 2023 publish
    attestations are such bundles)."""
    proof = entry.get("inclusionProof")
    checkpoint = proof.get("checkpoint") if isinstance(proof, dict) else None
    return BUNDLE_MEDIA_TYPES.get(str(media_type)) == "0.1" and not (
        isinstance(checkpoint, dict) and checkpoint.get("envelope")
    )


def _log_entry(entry: dict[str, Any], where: str, *, promise_only: bool = False) -> Any:
    from sigstore.models import TransparencyLogEntry
    from sigstore_models.rekor.v1 import TransparencyLogEntry as EntryModel

    from assay.sigstore.verifier import promised_entry_class, proofless_entry_model

    at = f"{where}: $.verificationMaterial.tlogEntries[0]"
    if promise_only:
        if not isinstance(entry.get("inclusionPromise"), dict) or not entry.get("integratedTime"):
            raise AttestationError(
                f"{at}.inclusionPromise", "expected the log's signed promise (a v0.1 bundle)"
            )
        try:
            return promised_entry_class()(proofless_entry_model(entry))
        except Exception as error:
            raise AttestationError(
                at, f"unusable transparency-log entry: {_short(error)}"
            ) from None
    try:
        return TransparencyLogEntry(EntryModel.from_json(json.dumps(entry)))
    except Exception as error:
        raise AttestationError(
            f"{where}: $.verificationMaterial.tlogEntries[0]",
            f"unusable transparency-log entry: {_short(error)}",
        ) from None


def _verify_entry(entry: Any, where: str, verifier: BundleVerifier) -> str:
    """The name of the first trusted root whose Rekor keys verify the entry's inclusion
    proof, checkpoint and (when present) signed entry timestamp."""
    from sigstore._internal.trust import KeyringPurpose

    errors = []
    for index, root in enumerate(verifier.roots):
        try:  # a root without transparency logs (GitHub's) has no Rekor keyring
            trusted = verifier._verifier(index)._trusted_root
            keyring = trusted.rekor_keyring(KeyringPurpose.VERIFY)
            # The Rekor key valid at the integrated time; the proof's size, the checkpoint's.
            validity.check_log_entry(trusted._inner, entry._inner)
            entry._verify(keyring)
        except Exception as error:
            errors.append(f"{root.name}: {_first_line(error)}")
            continue
        return root.name
    raise VerificationError(
        f"{where}: the transparency-log entry did not verify ({'; '.join(errors)})"
    )


def _logged_signatures(
    body_bytes: bytes, envelope: Any, payload_sha256: str, where: str
) -> list[tuple[bytes, str]]:
    """The entry's (signature, key fingerprint) pairs, once it is shown to log `envelope`."""
    record = _read_record(body_bytes, envelope, where)
    if record.payload_hash != {"algorithm": "sha256", "value": payload_sha256}:
        raise VerificationError(
            f"{where}: the transparency-log entry logs another payload than the envelope's"
        )
    if record.payload_type != envelope.payload_type:
        raise VerificationError(
            f"{where}: the transparency-log entry logs payload type {record.payload_type!r}, "
            f"the envelope has {envelope.payload_type!r}"
        )
    if sorted(sig for sig, _ in record.pairs) != sorted(s.sig for s in envelope.signatures):
        raise VerificationError(
            f"{where}: the transparency-log entry's signatures are not the envelope's"
        )
    return [(sig, _fingerprint(key, where)) for sig, key in record.pairs]


@dataclass(frozen=True, slots=True)
class _DsseRecord:
    """What a log entry's body records of the DSSE envelope it logs."""

    payload_hash: object
    payload_type: object
    pairs: list[tuple[bytes, object]]
    """(signature bytes, the base64 PEM of the key the entry names) for each signature."""


def _intoto_record(spec: Any, envelope: Any, where: str) -> _DsseRecord:
    """An `intoto` 0.0.2 entry: the envelope's payload hash, type and signatures."""
    from assay.dsse import b64decode

    content = spec["content"]
    payload_hash = content["payloadHash"]
    logged = content["envelope"]
    payload_type = logged["payloadType"]
    pairs = [
        (b64decode(b64decode(item["sig"], where).decode("ascii"), where), item["publicKey"])
        for item in logged["signatures"]
    ]
    return _DsseRecord(payload_hash, payload_type, pairs)


def _dsse_record(spec: Any, envelope: Any, where: str) -> _DsseRecord:
    """A `dsse` 0.0.1 entry: the payload hash and the signatures with their keys."""
    from assay.dsse import b64decode

    payload_hash = spec["payloadHash"]
    pairs = [(b64decode(item["signature"], where), item["verifier"]) for item in spec["signatures"]]
    # The payload type is not recorded apart; the signatures cover it.
    return _DsseRecord(payload_hash, envelope.payload_type, pairs)


_RECORD_READERS: Final = (
    (("intoto", "0.0.2"), _intoto_record),
    (("dsse", "0.0.1"), _dsse_record),
)
"""The entry kinds (kind, apiVersion) that log a DSSE envelope, each with its reader."""


def _read_record(body_bytes: bytes, envelope: Any, where: str) -> _DsseRecord:
    """What the entry's body records, for a kind that logs a DSSE envelope."""
    try:
        body = json.loads(body_bytes)
        kind, version, spec = body["kind"], body["apiVersion"], body["spec"]
        for known, reader in _RECORD_READERS:
            if (kind, version) == known:
                return reader(spec, envelope, where)
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, AttestationError):
        raise VerificationError(
            f"{where}: the transparency-log entry's body is not a DSSE log record"
        ) from None
    raise VerificationError(
        f"{where}: the transparency-log entry is a {kind} {version} entry, which "
        "does not log a DSSE envelope (expected intoto 0.0.2 or dsse 0.0.1)"
    )


def _fingerprint(encoded_pem: object, where: str) -> str:
    """The fingerprint of a logged public key (base64 of its PEM)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_pem_public_key,
    )

    from assay.dsse import b64decode

    try:
        if not isinstance(encoded_pem, str):
            raise ValueError("not a string")
        key = load_pem_public_key(b64decode(encoded_pem, where))
        der = key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        return hashlib.sha256(der).hexdigest()  # as assay.keys.PublicKey.fingerprint
    except (ValueError, UnsupportedAlgorithm, AttestationError):
        raise VerificationError(
            f"{where}: the transparency-log entry names no public key assay reads "
            "(a certificate-signed entry?)"
        ) from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__
