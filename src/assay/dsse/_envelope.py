"""The DSSE envelope: parsing, PAE and serialisation (no cryptography here)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Final

from assay import protocol
from assay._json_strict import parse_checked, problem_reason
from assay.errors import AttestationError

MAX_ENVELOPE_BYTES: Final = 16 * 1024 * 1024
"""An envelope larger than this is refused before it is parsed."""

MAX_SIGNATURES: Final = 64
"""More signatures than this in one envelope is refused (each one costs a verification)."""

MAX_SIGNATURE_BYTES: Final = 16 * 1024

MAX_DEPTH: Final = 64
"""Nesting deeper than this is refused (as by the reader of attestation files)."""

INTOTO_PAYLOAD_TYPE: Final = protocol.PAYLOAD_TYPE_INTOTO

_URLSAFE = bytes.maketrans(b"-_", b"+/")


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding: `DSSEv1 SP LEN(type) SP type SP LEN(body) SP body`.

    LEN is the decimal length in *bytes* (the type is UTF-8 encoded first).
    """
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


def _standard_alphabet(raw: bytes, where: str) -> bytes:
    """URL-safe base64 in the standard alphabet (a mix of the two is refused)."""
    if b"-" not in raw and b"_" not in raw:
        return raw
    if b"+" in raw or b"/" in raw:
        raise AttestationError(where, "expected standard or URL-safe base64, got a mix of both")
    return raw.translate(_URLSAFE)


def b64decode(text: str, where: str) -> bytes:
    """Decode standard or URL-safe base64 (the DSSE spec says verifiers MUST accept both)."""
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        raise AttestationError(where, "expected base64, got non-ASCII characters") from None
    raw = _standard_alphabet(raw, where)
    raw += b"=" * (-len(raw) % 4)  # padding is optional
    try:
        # strict_mode rejects characters outside the alphabet, like validate=True, but
        # without a separate regular-expression pass over the text.
        return binascii.a2b_base64(raw, strict_mode=True)
    except (binascii.Error, ValueError):
        raise AttestationError(
            where, "expected base64, got characters outside its alphabet"
        ) from None


@dataclass(frozen=True, slots=True)
class Signature:
    """One signature: `keyid` is an unauthenticated hint, `sig` the raw signature bytes."""

    sig: bytes
    keyid: str = ""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A DSSE envelope; `payload` holds the exact signed bytes."""

    payload: bytes
    payload_type: str
    signatures: tuple[Signature, ...]

    def pae(self) -> bytes:
        return pae(self.payload_type, self.payload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "payloadType": self.payload_type,
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "signatures": [
                {"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")}
                for s in self.signatures
            ],
        }

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_dict(cls, data: object, *, where: str = "$") -> Envelope:
        """Read an envelope from parsed JSON; `where` prefixes every error path."""
        if not isinstance(data, dict):
            raise AttestationError(
                where, f"expected a DSSE envelope object, got {type(data).__name__}"
            )
        payload_type = data.get("payloadType")
        if not isinstance(payload_type, str) or not payload_type:
            raise AttestationError(
                f"{where}.payloadType", f"expected a non-empty string, got {payload_type!r}"
            )
        payload_text = data.get("payload")
        if not isinstance(payload_text, str):
            raise AttestationError(
                f"{where}.payload", f"expected a base64 string, got {type(payload_text).__name__}"
            )
        payload = b64decode(payload_text, f"{where}.payload")
        signatures = _signature_list(data.get("signatures"), f"{where}.signatures")
        return cls(payload, payload_type, signatures)

    @classmethod
    def from_json(cls, data: bytes | str, *, where: str = "envelope") -> Envelope:
        """Parse the JSON text of one envelope.

        Refused, naming the JSON path: an object key given twice anywhere, nesting deeper
        than `MAX_DEPTH`, text that is not UTF-8 JSON, more than `MAX_ENVELOPE_BYTES`.
        """
        if len(data) > MAX_ENVELOPE_BYTES:
            raise AttestationError(
                where, f"expected at most {MAX_ENVELOPE_BYTES} bytes, got {len(data)}"
            )
        parsed = _strict_json(data, where)
        return cls.from_dict(parsed, where=_root(where))


class _NotJson(AttestationError):
    """The text is not JSON at all (as opposed to JSON that is not a usable envelope)."""


def _root(where: str) -> str:
    """The JSON path of the document: `where` itself when it is a path, else `where: $`."""
    return where if where.startswith("$") else f"{where}: $"


def _strict_json(data: bytes | str, where: str) -> Any:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value, problem = parse_checked(text, MAX_DEPTH - 1)
    except UnicodeDecodeError as error:
        raise _NotJson(where, f"expected UTF-8 JSON text, got {error}") from None
    except json.JSONDecodeError as error:
        raise _NotJson(where, f"expected JSON, got a parse error: {error}") from None
    except RecursionError:
        raise AttestationError(where, f"expected nesting at most {MAX_DEPTH} deep") from None
    if problem is not None:
        path, kind = problem
        raise AttestationError(_root(where) + path[1:], problem_reason(kind, MAX_DEPTH))
    return value


def read_envelopes(data: bytes, *, where: str = "envelope") -> list[Envelope]:
    """Every envelope in a file: one JSON document, or JSON lines (`.intoto.jsonl`).

    A file that is one JSON document is one envelope (its errors are that document's);
    only text that is not JSON as a whole is read as JSON lines.
    """
    if len(data) > MAX_ENVELOPE_BYTES:
        raise AttestationError(
            where, f"expected at most {MAX_ENVELOPE_BYTES} bytes, got {len(data)}"
        )
    stripped = data.strip()
    try:
        return [Envelope.from_json(stripped, where=where)]
    except _NotJson:
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) <= 1:
            raise
    return [
        Envelope.from_json(line, where=f"{where} line {number}")
        for number, line in enumerate(lines, start=1)
    ]


def _signature_list(raw: object, where: str) -> tuple[Signature, ...]:
    """An envelope's `signatures`: a bounded, non-empty array of signature objects."""
    if not isinstance(raw, list) or not raw:
        raise AttestationError(where, "expected a non-empty array of signatures")
    if len(raw) > MAX_SIGNATURES:
        raise AttestationError(
            where, f"expected at most {MAX_SIGNATURES} signatures, got {len(raw)}"
        )
    return tuple(_signature(item, f"{where}[{index}]") for index, item in enumerate(raw))


def _sig_text(value: object, where: str) -> str:
    """A signature's `sig`: non-empty base64 text of bounded length."""
    if not isinstance(value, str) or not value:
        raise AttestationError(where, f"expected a non-empty base64 string, got {value!r}")
    if len(value) > MAX_SIGNATURE_BYTES:
        raise AttestationError(where, f"expected at most {MAX_SIGNATURE_BYTES} characters")
    return value


def _signature(item: object, path: str) -> Signature:
    if not isinstance(item, dict):
        raise AttestationError(path, f"expected an object, got {type(item).__name__}")
    sig_text = _sig_text(item.get("sig"), f"{path}.sig")
    keyid = item.get("keyid") or ""
    if not isinstance(keyid, str):
        raise AttestationError(f"{path}.keyid", f"expected a string, got {type(keyid).__name__}")
    return Signature(b64decode(sig_text, f"{path}.sig"), keyid)
