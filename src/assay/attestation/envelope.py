"""Take payloads out of DSSE envelopes and Sigstore bundles, without verifying them.

Nothing here checks a signature: callers that need authenticity verify the envelope
first (see `assay.dsse`) and only then parse the payload. `EnvelopePayload` says so
in `signatures_checked`, which is always False here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from assay import protocol
from assay.attestation import _json
from assay.attestation.constants import (
    MAX_DOCUMENT_BYTES,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_TYPE_INTOTO,
    PAYLOAD_TYPE_PREFIX,
    PAYLOAD_TYPE_SUFFIX,
)
from assay.errors import AttestationError

Container = Literal["dsse", "sigstore-bundle"]

SIGSTORE_BUNDLE_PREFIX = protocol.BUNDLE_PREFIX


@dataclass(frozen=True, slots=True)
class EnvelopePayload:
    """The unverified content of a DSSE envelope, possibly from a Sigstore bundle."""

    payload: bytes
    payload_type: str
    container: Container
    envelope: dict[str, Any]
    """The DSSE envelope as parsed (`payload`, `payloadType`, `signatures`)."""
    bundle_media_type: str | None = None
    """The Sigstore bundle `mediaType`, when the envelope came from a bundle."""
    signatures_checked: bool = False
    """Always False: extraction never verifies signatures."""


def is_intoto_payload_type(payload_type: str) -> bool:
    """`application/vnd.in-toto+json` or `application/vnd.in-toto.<predicate>+json`."""
    return payload_type == PAYLOAD_TYPE_INTOTO or (
        payload_type.startswith(PAYLOAD_TYPE_PREFIX) and payload_type.endswith(PAYLOAD_TYPE_SUFFIX)
    )


def is_dsse_envelope(document: Mapping[str, Any]) -> bool:
    return "payloadType" in document and "payload" in document


def is_sigstore_bundle(document: Mapping[str, Any]) -> bool:
    media_type = document.get("mediaType")
    return isinstance(media_type, str) and media_type.startswith(SIGSTORE_BUNDLE_PREFIX)


_URL_SAFE: Final = str.maketrans("-_", "+/")


def decode_base64(text: str, *, where: str, limit: int | None = None) -> bytes:
    """Standard or URL-safe base64, padded or not (DSSE allows both alphabets)."""
    limit = MAX_PAYLOAD_BYTES if limit is None else limit
    # Four base64 characters carry three bytes: reject oversize input before decoding.
    if len(text) > (limit // 3 + 1) * 4:
        raise AttestationError(where, f"expected at most {limit} decoded bytes, found more")
    # The URL-safe characters read as the standard ones (as b64decode's altchars would).
    padded = (text + "=" * (-len(text) % 4)).translate(_URL_SAFE)
    try:
        decoded = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise AttestationError(where, "expected base64 text, found invalid base64") from None
    if len(decoded) > limit:
        raise AttestationError(where, f"expected at most {limit} decoded bytes, found more")
    return decoded


def extract_payload(data: bytes | str | Mapping[str, Any]) -> EnvelopePayload:
    """The payload bytes and payloadType of a DSSE envelope or a Sigstore bundle (v0.1-v0.3).

    Does not verify anything and does not check the payloadType: see
    `is_intoto_payload_type`. Raises `AttestationError` on a malformed container.
    """
    document = data if isinstance(data, Mapping) else _json.loads_object(data)
    if is_sigstore_bundle(document):
        envelope = document.get("dsseEnvelope")
        if not isinstance(envelope, dict):
            raise AttestationError(
                "$.dsseEnvelope",
                "expected a DSSE envelope in the Sigstore bundle, found "
                + ("a message signature" if "messageSignature" in document else "none"),
            )
        payload, payload_type = _envelope_fields(envelope, "$.dsseEnvelope")
        return EnvelopePayload(
            payload, payload_type, "sigstore-bundle", envelope, str(document["mediaType"])
        )
    if is_dsse_envelope(document):
        payload, payload_type = _envelope_fields(document, "$")
        return EnvelopePayload(payload, payload_type, "dsse", dict(document))
    raise AttestationError(
        "$",
        "expected a DSSE envelope (payload, payloadType) or a Sigstore bundle (mediaType), "
        f"found an object with fields {sorted(document)[:8]}",
    )


def _envelope_fields(envelope: Mapping[str, Any], where: str) -> tuple[bytes, str]:
    payload_type = envelope.get("payloadType")
    if not isinstance(payload_type, str):
        raise AttestationError(
            f"{where}.payloadType", f"expected a string, found {_json.type_name(payload_type)}"
        )
    text = envelope.get("payload")
    if not isinstance(text, str):
        raise AttestationError(
            f"{where}.payload", f"expected base64 text, found {_json.type_name(text)}"
        )
    if len(text) > MAX_DOCUMENT_BYTES:
        raise AttestationError(
            f"{where}.payload", f"expected at most {MAX_DOCUMENT_BYTES} bytes, found {len(text)}"
        )
    return decode_base64(text, where=f"{where}.payload"), payload_type
