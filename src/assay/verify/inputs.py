"""Read attestation files into `Attestation`s, without verifying anything.

Accepted shapes: a DSSE envelope (JSON), JSON lines of envelopes (`.intoto.jsonl`), a
Sigstore bundle (its `dsseEnvelope`, the bundle kept as `Attestation.sigstore` for the
`Verifier` to verify), npm's attestations document and PyPI's PEP 740 attestations
(their bundles), and the output of `gcloud artifacts docker images describe
--show-provenance` (its envelopes, with the unsigned metadata kept as typed
`GcbMetadata` for consistency checks). An envelope whose signature carries a Fulcio
certificate (slsa-github-generator's legacy `.intoto.jsonl`) keeps itself as
`Attestation.sigstore`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from assay import dsse
from assay.attestation._json import loads_strict
from assay.errors import AttestationError
from assay.verify.model import Attestation, Container, GcbMetadata

MAX_ATTESTATION_BYTES: Final = dsse.MAX_ENVELOPE_BYTES
MAX_ENVELOPES_PER_FILE: Final = 1000


def _digest(data: bytes) -> dict[str, str]:
    return {"sha256": hashlib.sha256(data).hexdigest()}


def read_attestations(data: bytes, name: str) -> list[Attestation]:
    """Every envelope in one file's bytes; `name` is used in reports and errors."""
    if len(data) > MAX_ATTESTATION_BYTES:
        raise AttestationError(
            name, f"expected at most {MAX_ATTESTATION_BYTES} bytes, got {len(data)}"
        )
    digest = _digest(data)
    documents = _json_documents(data, name)
    if len(documents) > MAX_ENVELOPES_PER_FILE:
        raise AttestationError(
            name, f"expected at most {MAX_ENVELOPES_PER_FILE} records, got {len(documents)}"
        )
    result: list[Attestation] = []
    container: Container = "dsse" if len(documents) == 1 else "jsonl"
    for index, document in enumerate(documents):
        label = name if len(documents) == 1 else f"{name}#{index + 1}"
        result.extend(_from_document(document, label, digest, container))
    if not result:
        raise AttestationError(name, "expected at least one DSSE envelope, found none")
    return result


def _json_documents(data: bytes, name: str) -> list[Any]:
    text = data.strip()
    try:
        return [loads_strict(text, where=name, limit=MAX_ATTESTATION_BYTES)]
    except AttestationError as error:
        if "invalid JSON" not in error.reason or b"\n" not in text:
            raise  # duplicate keys, depth, size: the file is refused as a whole
    documents = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        documents.append(
            loads_strict(line, where=f"{name} line {number}", limit=MAX_ATTESTATION_BYTES)
        )
    if not documents:
        raise AttestationError(name, "expected JSON, got an empty file")
    return documents


def _from_document(
    document: Any, name: str, digest: dict[str, str], container: Container
) -> list[Attestation]:
    if not isinstance(document, Mapping):
        raise AttestationError(name, f"expected a JSON object, got {type(document).__name__}")
    if "dsseEnvelope" in document:
        return [_bundle(document, name, digest, "sigstore-bundle")]
    if "provenance_summary" in document:
        return _gcloud(document, name, digest)
    if isinstance(document.get("attestations"), list) or "attestation_bundles" in document:
        from assay.sigstore.formats import expand

        bundles = expand(dict(document), name)
        return [
            _bundle(bundle, label, digest, "npm")
            for label, bundle in bundles
            if isinstance(bundle, Mapping) and "dsseEnvelope" in bundle
        ]
    if "verification_material" in document and "envelope" in document:
        from assay.sigstore.formats import expand

        ((label, bundle),) = expand(dict(document), name)
        return [_bundle(bundle, label, digest, "sigstore-bundle")]
    envelope = dsse.Envelope.from_dict(document, where=f"{name}: $")
    certified = any(
        isinstance(signature, Mapping) and isinstance(signature.get("cert"), str)
        for signature in document.get("signatures") or ()
    )
    return [
        Attestation(
            name, envelope, digest, container=container, sigstore=document if certified else None
        )
    ]


def _bundle(
    document: Mapping[str, Any], name: str, digest: dict[str, str], container: Container
) -> Attestation:
    envelope = dsse.Envelope.from_dict(document["dsseEnvelope"], where=f"{name}: $.dsseEnvelope")
    return Attestation(name, envelope, digest, container=container, sigstore=document)


def _gcloud(document: Mapping[str, Any], name: str, digest: dict[str, str]) -> list[Attestation]:
    summary = document.get("provenance_summary")
    provenance = summary.get("provenance") if isinstance(summary, Mapping) else None
    if not isinstance(provenance, list) or not provenance:
        raise AttestationError(
            f"{name}: $.provenance_summary.provenance", "expected a non-empty array"
        )
    image = document.get("image_summary")
    result = []
    for index, item in enumerate(provenance):
        path = f"{name}: $.provenance_summary.provenance[{index}]"
        if not isinstance(item, Mapping):
            raise AttestationError(path, "expected an object")
        envelope = dsse.Envelope.from_dict(item.get("envelope"), where=f"{path}.envelope")
        build = item.get("build")
        image_map = image if isinstance(image, Mapping) else {}
        gcb = GcbMetadata(
            kind=_string(item.get("kind")),
            resource_uri=_string(item.get("resourceUri")),
            image_digest=_string(image_map.get("digest")),
            fully_qualified_digest=_string(image_map.get("fully_qualified_digest")),
            text=_text_statement(build),
        )
        label = name if len(provenance) == 1 else f"{name}#{index + 1}"
        result.append(Attestation(label, envelope, digest, container="gcloud", gcb=gcb))
    return result


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text_statement(build: object) -> dict[str, Any] | None:
    # gcloud prints the statement beside the envelope (the "text provenance").
    if not isinstance(build, Mapping):
        return None
    statement = build.get("intotoStatement") or build.get("inTotoSlsaProvenanceV1")
    return dict(statement) if isinstance(statement, Mapping) else None
