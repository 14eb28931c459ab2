"""Attestation files as `Attestation`s, without verifying anything.

Files are read by `assay.attestation.files`, the reader every command shares, so a file
means the same statements here as in `assay attest validate`. What this module adds is
what verification needs of each record: the DSSE envelope (a bundle's `dsseEnvelope`),
the Sigstore material to verify (`Attestation.sigstore`: the bundle, or an envelope
whose signature carries a Fulcio certificate), and Cloud Build's unsigned metadata
(`GcbMetadata`, checked against the signed statement). A bare statement cannot be
verified and is refused; objects of a JSON Lines file that are no attestation are
ignored, as everywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from assay import dsse
from assay.attestation.files import MAX_FILE_BYTES, Record, parse_file
from assay.errors import AttestationError
from assay.verify.model import Attestation, Container, GcbMetadata

MAX_ATTESTATION_BYTES: Final = MAX_FILE_BYTES

_CONTAINERS: Final[dict[str, Container]] = {"npm": "npm", "gcloud": "gcloud", "jsonl": "jsonl"}


def read_attestations(data: bytes, name: str) -> list[Attestation]:
    """Every envelope in one file's bytes; `name` is used in reports and errors."""
    digest = {"sha256": hashlib.sha256(data).hexdigest()}
    records = parse_file(data, name)
    usable = [r for r in records if r.kind != "unknown"]
    result = [
        _attestation(record, name if len(usable) == 1 else f"{name}#{index + 1}", digest)
        for index, record in enumerate(usable)
    ]
    if not result:
        raise AttestationError(name, "expected at least one DSSE envelope, found none")
    return result


def _attestation(record: Record, name: str, digest: dict[str, str]) -> Attestation:
    if record.kind == "statement":
        raise AttestationError(
            record.label,
            "expected a signed attestation (a DSSE envelope or a Sigstore bundle), "
            "found an unsigned in-toto statement",
        )
    envelope = record.envelope
    if envelope is None:
        raise AttestationError(
            f"{record.label}: $.dsseEnvelope",
            "expected a DSSE envelope in the Sigstore bundle (a message signature carries "
            "no statement)",
        )
    prefix = "$.dsseEnvelope" if record.kind == "sigstore-bundle" else "$"
    parsed = dsse.Envelope.from_dict(envelope, where=f"{record.label}: {prefix}")
    return Attestation(
        name,
        parsed,
        digest,
        container=_container(record),
        gcb=_gcb(record.gcloud) if record.gcloud is not None else None,
        sigstore=record.document if record.certified else None,
    )


def _container(record: Record) -> Container:
    """What the envelope came in: a Sigstore bundle (npm's stays npm's), else the wrapper."""
    if record.kind == "sigstore-bundle" and record.wrapper != "npm":
        return "sigstore-bundle"
    return _CONTAINERS.get(record.wrapper, "dsse")


def _gcb(gcloud: Mapping[str, Any]) -> GcbMetadata:
    entry = gcloud["entry"]
    image = gcloud["image_summary"]
    return GcbMetadata(
        kind=_string(entry.get("kind")),
        resource_uri=_string(entry.get("resourceUri")),
        image_digest=_string(image.get("digest")),
        fully_qualified_digest=_string(image.get("fully_qualified_digest")),
        text=_text_statement(entry.get("build")),
    )


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text_statement(build: object) -> dict[str, Any] | None:
    # gcloud prints the statement beside the envelope (the "text provenance").
    if not isinstance(build, Mapping):
        return None
    statement = build.get("intotoStatement") or build.get("inTotoSlsaProvenanceV1")
    return dict(statement) if isinstance(statement, Mapping) else None
