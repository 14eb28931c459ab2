"""Who made a snapshot, said in a signed in-toto statement beside it.

The statement's subject is the snapshot file by its SHA-256; its predicate repeats what
the manifest says of the snapshot's place in its store's history (source store, base and
target generations, upstream checkpoints, records). It is signed as a DSSE envelope
written next to the snapshot (`FILE.intoto.json`). Importing verifies the envelope's
signature over its exact bytes with the trusted keys, then the file's digest against the
subject, and only then reads the snapshot; the manifest must say what the signed
predicate says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from assay import dsse
from assay.attestation.constants import PAYLOAD_TYPE_INTOTO, STATEMENT_V1
from assay.errors import InputError, VerificationError
from assay.keys import PrivateKey, PublicKey
from assay.snapshot.format import Manifest, SnapshotError, strict_json

PREDICATE_TYPE: Final = "urn:assay:store-snapshot:v1"
"""assay's own predicate (a URN: it names no web address that could be mistaken for a spec)."""
SIGNATURE_SUFFIX: Final = ".intoto.json"
MAX_ENVELOPE_BYTES: Final = 1024 * 1024


def signature_path(snapshot: Path) -> Path:
    return snapshot.with_name(snapshot.name + SIGNATURE_SUFFIX)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def predicate(manifest: Manifest) -> dict[str, Any]:
    return {
        "store": manifest.store,
        "since": manifest.since,
        "generation": manifest.generation,
        "created": manifest.created,
        "cursors": dict(sorted(manifest.cursors.items())),
        "records": {member.kind: member.records for member in manifest.members},
        # Each member's digest too: the file is read again to apply it, and what is read
        # then must be what was signed, member by member.
        "members": {member.name: member.sha256 for member in manifest.members},
    }


def sign_snapshot(manifest: Manifest, name: str, sha256: str, keys: list[PrivateKey]) -> bytes:
    """The DSSE envelope (JSON bytes) of the statement about the snapshot file."""
    envelope = dsse.sign(statement_bytes(manifest, name, sha256), PAYLOAD_TYPE_INTOTO, keys)
    return envelope.to_json()


@dataclass(frozen=True, slots=True)
class SignedSnapshot:
    """What a verified signature says of a snapshot file."""

    sha256: str
    predicate: dict[str, Any]
    signed_by: tuple[str, ...]
    """The key ids that signed it."""


def verify_snapshot_signature(
    envelope_bytes: bytes, snapshot: Path, keys: list[PublicKey], where: str
) -> SignedSnapshot:
    """Check the envelope's signature (before parsing its payload), then the snapshot
    file's digest against the statement's subject (`SnapshotError` naming what failed)."""
    if len(envelope_bytes) > MAX_ENVELOPE_BYTES:
        raise SnapshotError(where, f"expected at most {MAX_ENVELOPE_BYTES} bytes")
    envelope = dsse.Envelope.from_json(envelope_bytes, where=where)
    try:
        verified = dsse.verify(envelope, keys, payload_type=PAYLOAD_TYPE_INTOTO)
    except VerificationError as error:
        raise SnapshotError(
            where, f"the signature does not verify with the keys given: {error}"
        ) from None
    signers = tuple(getattr(key, "keyid", "") for key in verified.signed_by)
    return _statement_about(verified.payload, snapshot, signers, where)


def _statement_about(
    payload: bytes, snapshot: Path, signers: tuple[str, ...], where: str
) -> SignedSnapshot:
    """The verified statement's account of `snapshot`: its subject must be the file."""
    statement = strict_json(payload, f"{where}: payload")
    if not isinstance(statement, dict) or statement.get("predicateType") != PREDICATE_TYPE:
        raise SnapshotError(f"{where}: $.predicateType", f"expected {PREDICATE_TYPE}")
    if statement.get("_type") != STATEMENT_V1:
        raise SnapshotError(f"{where}: $._type", f"expected {STATEMENT_V1}")
    actual = file_sha256(snapshot)
    if actual not in _subject_digests(statement.get("subject")):
        raise SnapshotError(
            str(snapshot),
            f"its SHA-256 {actual} is not the signed subject's: the file is not the one signed",
        )
    body = statement.get("predicate")
    if not isinstance(body, dict):
        raise SnapshotError(f"{where}: $.predicate", "expected an object")
    return SignedSnapshot(actual, body, signers)


def _subject_digests(subjects: object) -> set[str]:
    return {
        str(digest.get("sha256", "")).lower()
        for subject in (subjects if isinstance(subjects, list) else [])
        if isinstance(subject, dict) and isinstance(digest := subject.get("digest"), dict)
    }


# -- keyless: a Sigstore bundle (FILE.sigstore.json) -----------------------------------

BUNDLE_SUFFIX: Final = ".sigstore.json"


def bundle_path(snapshot: Path) -> Path:
    return snapshot.with_name(snapshot.name + BUNDLE_SUFFIX)


def statement_bytes(manifest: Manifest, name: str, sha256: str) -> bytes:
    statement = {
        "_type": STATEMENT_V1,
        "subject": [{"name": name, "digest": {"sha256": sha256}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(manifest),
    }
    return orjson.dumps(statement)


def sign_snapshot_keyless(manifest: Manifest, name: str, sha256: str, token: str) -> bytes:
    """A Sigstore bundle (JSON bytes) of the statement, signed with a Fulcio certificate
    for the OIDC identity `token` and logged in Rekor (public-good instance; needs the
    network)."""
    from sigstore.dsse import Statement
    from sigstore.models import ClientTrustConfig
    from sigstore.oidc import IdentityToken
    from sigstore.sign import SigningContext

    try:
        identity = IdentityToken(token)
    except Exception as error:  # sigstore's IdentityError: an unusable token
        raise SnapshotError("identity token", f"expected an OIDC identity token: {error}") from None
    try:
        context = SigningContext.from_trust_config(ClientTrustConfig.production())
        with context.signer(identity) as signer:
            bundle = signer.sign_dsse(Statement(statement_bytes(manifest, name, sha256)))
    except Exception as error:  # the network, Fulcio or Rekor: sigstore's many errors
        raise SnapshotError(
            "keyless signing", f"Sigstore (Fulcio, Rekor) did not sign: {error}"
        ) from None
    return bundle.to_json().encode()


IdentityCheck = Callable[[Any], bool]
"""Whether a verified certificate identity (`assay.sigstore.identity`) is trusted."""


def _verified_bundle(bundle_bytes: bytes, verifier: Any, where: str) -> Any:
    """The bundle read and verified against the verifier's trusted roots."""
    if len(bundle_bytes) > MAX_ENVELOPE_BYTES:
        raise SnapshotError(where, f"expected at most {MAX_ENVELOPE_BYTES} bytes")
    document = strict_json(bundle_bytes, where, max_depth=16)
    if not isinstance(document, dict):
        raise SnapshotError(where, "expected a Sigstore bundle (a JSON object)")
    try:
        return verifier.verify(document, where)
    except (VerificationError, InputError) as error:
        raise SnapshotError(where, f"the Sigstore bundle does not verify: {error}") from None


def verify_snapshot_bundle(
    bundle_bytes: bytes, snapshot: Path, verifier: Any, trusted: IdentityCheck, where: str
) -> SignedSnapshot:
    """Verify a Sigstore bundle offline against the verifier's trusted roots (certificate
    chain, transparency-log proof, signature over the DSSE envelope), that its certificate
    shows a trusted identity, then the statement as for a DSSE envelope."""
    verified = _verified_bundle(bundle_bytes, verifier, where)
    identity = verified.identity
    if not trusted(identity):
        raise SnapshotError(
            where,
            f"signed by {identity.san} ({identity.issuer}), not an identity given as trusted",
        )
    if verified.payload_type != PAYLOAD_TYPE_INTOTO or verified.payload is None:
        raise SnapshotError(where, f"expected a DSSE envelope of {PAYLOAD_TYPE_INTOTO}")
    return _statement_about(verified.payload, snapshot, (str(identity.san),), where)


def check_manifest(signed: SignedSnapshot, manifest: Manifest, where: str) -> None:
    """The manifest read from the (verified) file must say what the signature says."""
    if signed.predicate != predicate(manifest):
        raise SnapshotError(where, "the manifest differs from the signed statement's predicate")
