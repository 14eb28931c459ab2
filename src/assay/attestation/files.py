"""The one reader of attestation files: what a file contains, for every command.

    data = read_file("provenance.intoto.jsonl")        # bounded: pipes, /dev/stdin, "-"
    records = parse_file(data, "provenance.intoto.jsonl")
    [(r.label, r.kind) for r in records]

`assay attest validate`, `attest verify-signature`, `verify` (and its
`--attestation-dir`), `verify-vsa`, `verify-artifact` and `verify-bundle` all read their
input here, so the same file means the same statements everywhere; each command then
decides what it can use (a bare statement cannot be verified, a key-signed envelope has
no certificate). Accepted: a bare in-toto statement, a DSSE envelope, a Sigstore bundle
(v0.1-v0.3), JSON Lines of any of these (`.intoto.jsonl`; lines that are JSON objects
but no attestation are kept as `unknown` and ignored by every command), npm's
attestations document (`{"attestations": [{"predicateType", "bundle"}]}`), PyPI's PEP
740 attestation objects and provenance files (read as the v0.3 bundles they are), and
`gcloud artifacts docker images describe --show-provenance` output.

Refused, as a whole and naming the file (and the line or JSON path): more than
`MAX_FILE_BYTES`, a JSON object key given twice anywhere, nesting deeper than
`MAX_DEPTH`, a statement field spelled in another case (`predicatetype`), text that is
neither JSON nor JSON Lines, a line that is not JSON, a document that is not an object,
more than `MAX_RECORDS` records. Nothing here checks a signature.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from assay import protocol
from assay._bounded import read_bounded
from assay._json_strict import case_variant, parse_checked, problem_reason, type_name
from assay.attestation.envelope import decode_base64
from assay.errors import AttestationError

MAX_FILE_BYTES: Final = 16 * 1024 * 1024
MAX_DEPTH: Final = 64
"""Containers nested deeper than this in a file are refused (a bundle needs about 8)."""
MAX_RECORDS: Final = 1000
MAX_LINES: Final = 10_000

RecordKind = Literal["statement", "dsse", "sigstore-bundle", "unknown"]
Wrapper = Literal["none", "jsonl", "npm", "pypi", "gcloud"]

_STATEMENT_FIELDS: Final = ("_type", "subject", "predicateType", "predicate")
_BUNDLE_PREFIX: Final = protocol.BUNDLE_PREFIX
_BUNDLE_V03: Final = protocol.BUNDLE_V03_ALT
_INTOTO: Final = protocol.PAYLOAD_TYPE_INTOTO


@dataclass(frozen=True, slots=True)
class Record:
    """One attestation (or ignored object) found in a file."""

    label: str
    """The file name, with `line N` or `$.attestations[i]` when the file holds several."""
    location: str
    """Where in the file: `""` for the whole file, `"line 3"`, `"attestations[1]"`."""
    kind: RecordKind
    document: dict[str, Any]
    """The statement, the DSSE envelope or the Sigstore bundle (a PEP 740 attestation
    converted to its v0.3 bundle), as read."""
    wrapper: Wrapper = "none"
    declared_predicate_type: str | None = None
    """npm's `predicateType` listed beside the bundle, when there was one."""
    gcloud: dict[str, Any] | None = None
    """For gcloud output: the provenance entry and `image_summary` (unsigned metadata)."""

    @property
    def envelope(self) -> dict[str, Any] | None:
        """The DSSE envelope: the document itself, or a bundle's `dsseEnvelope`."""
        if self.kind == "dsse":
            return self.document
        if self.kind == "sigstore-bundle":
            envelope = self.document.get("dsseEnvelope")
            return envelope if isinstance(envelope, dict) else None
        return None

    @property
    def certified(self) -> bool:
        """A Sigstore bundle, or an envelope whose signature carries a certificate."""
        if self.kind == "sigstore-bundle":
            return True
        signatures = self.document.get("signatures") if self.kind == "dsse" else None
        return isinstance(signatures, list) and any(
            isinstance(s, dict) and isinstance(s.get("cert"), str) for s in signatures
        )


def read_file(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """At most `limit` bytes of `path` (`-` is standard input). The limit is on what is
    read, not on what the file system says, so pipes and /dev/stdin are bounded too."""
    return read_bounded(path, limit, AttestationError)


def parse_file(data: bytes, name: str) -> list[Record]:
    """Every record of a file's bytes; `name` labels records and errors."""
    if len(data) > MAX_FILE_BYTES:
        raise AttestationError(name, f"expected at most {MAX_FILE_BYTES} bytes, found {len(data)}")
    text = data.strip()
    if not text:
        raise AttestationError(name, "expected JSON, found an empty file")
    try:
        whole = _loads(text, name)
    except _NotJson as error:
        reason = error.reason  # not one JSON document: perhaps JSON Lines
    else:
        return _bounded(_records(whole, name, "", "none"), name)
    return _json_lines(_lines_of(text, name, reason), name)


def _lines_of(text: bytes, name: str, reason: str) -> list[tuple[int, bytes]]:
    """The numbered non-blank lines of text that is not one JSON document; refused with
    `reason` when it cannot be JSON Lines either (one line, or a pretty-printed object)."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) < 2 or lines[0][1].strip() == b"{":
        raise AttestationError(name, reason)
    return lines


def _json_lines(lines: list[tuple[int, bytes]], name: str) -> list[Record]:
    if len(lines) > MAX_LINES:
        raise AttestationError(name, f"expected at most {MAX_LINES} lines, found {len(lines)}")
    records: list[Record] = []
    for number, line in lines:
        where = f"{name} line {number}"
        try:
            value = _loads(line, where)
        except _NotJson as error:
            raise AttestationError(where, error.reason) from None
        records.extend(_records(value, name, f"line {number}", "jsonl"))
        if len(records) > MAX_RECORDS:
            break
    return _bounded(records, name)


def _bounded(records: list[Record], name: str) -> list[Record]:
    if len(records) > MAX_RECORDS:
        raise AttestationError(name, f"expected at most {MAX_RECORDS} attestations, found more")
    for record in records:
        _check_payload(record)
    return records


def _in_toto_payload(envelope: Mapping[str, Any]) -> str | None:
    payload_type = envelope.get("payloadType")
    payload = envelope.get("payload")
    if not isinstance(payload, str) or not isinstance(payload_type, str):
        return None
    return payload if payload_type.startswith("application/vnd.in-toto") else None


def _parsed_payload(payload: str, where: str) -> tuple[Any, tuple[str, str] | None] | None:
    """The payload's JSON value and its first problem; None when it does not decode."""
    try:
        data = decode_base64(payload, where=where, limit=MAX_FILE_BYTES)
        return parse_checked(data.decode("utf-8"), MAX_DEPTH - 1)
    except (AttestationError, ValueError, UnicodeDecodeError):
        return None
    except RecursionError:
        raise AttestationError(where, f"expected nesting at most {MAX_DEPTH} deep") from None


def _check_payload(record: Record) -> None:
    """An in-toto payload with a repeated key, a case-variant statement field or nesting
    too deep makes the file unusable, whoever signed it: two readers could take it for
    two statements. (Undecodable payloads are left to each command to report.)"""
    envelope = record.envelope
    payload = None if envelope is None else _in_toto_payload(envelope)
    if payload is None:
        return
    where = f"{record.label}: payload"
    parsed = _parsed_payload(payload, where)
    if parsed is None:
        return
    value, problem = parsed
    if problem is not None:
        path, kind = problem
        raise AttestationError(f"{where} {path}", problem_reason(kind, MAX_DEPTH))
    if isinstance(value, dict):
        _case_variants(value, where)


class _NotJson(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _loads(text: bytes, where: str) -> Any:
    try:
        value, problem = parse_checked(text.decode("utf-8"), MAX_DEPTH - 1)
    except UnicodeDecodeError as error:
        raise _NotJson(f"expected UTF-8 JSON text: {error}") from None
    except json.JSONDecodeError as error:
        raise _NotJson(
            f"expected JSON or JSON Lines, found invalid JSON (line {error.lineno} "
            f"column {error.colno}: {error.msg})"
        ) from None
    except RecursionError:
        raise AttestationError(where, f"expected nesting at most {MAX_DEPTH} deep") from None
    if problem is not None:
        path, kind = problem
        raise AttestationError(f"{where}: {path}", problem_reason(kind, MAX_DEPTH))
    return value


def _label(name: str, location: str) -> str:
    return f"{name} {location}" if location else name


def _single_record(
    value: dict[str, Any], here: str, location: str, wrapper: Wrapper
) -> Record | None:
    """The record of a bundle, an envelope or a PEP 740 attestation, else None."""
    if _is_bundle(value):
        return Record(here, location, "sigstore-bundle", value, wrapper)
    if _is_envelope(value):
        return Record(here, location, "dsse", value, wrapper)
    if _is_pep740(value):
        return Record(here, location, "sigstore-bundle", _pep740_bundle(value, here), "pypi")
    return None


def _records(value: Any, name: str, location: str, wrapper: Wrapper) -> list[Record]:
    here = _label(name, location)
    if not isinstance(value, dict):
        raise AttestationError(here, f"expected a JSON object, found {type_name(value)}")
    _case_variants(value, here)
    single = _single_record(value, here, location, wrapper)
    if single is not None:
        return [single]
    for key, kind, read in _CONTAINERS:
        if isinstance(value.get(key), kind):
            return read(value, name, location)
    if wrapper == "jsonl" and not set(_STATEMENT_FIELDS) & value.keys():
        return [Record(here, location, "unknown", value, wrapper)]
    return [Record(here, location, "statement", value, wrapper)]


def _case_variants(value: Mapping[str, Any], where: str) -> None:
    variant = case_variant(value, _STATEMENT_FIELDS)
    if variant is not None:
        key, known = variant
        raise AttestationError(
            f"{where}: $.{key}",
            f"expected the statement field {known!r}, found {key!r} (differs in case)",
        )


def _is_envelope(value: Mapping[str, Any]) -> bool:
    return "payloadType" in value and "payload" in value


def _is_bundle(value: Mapping[str, Any]) -> bool:
    media_type = value.get("mediaType")
    return isinstance(media_type, str) and media_type.startswith(_BUNDLE_PREFIX)


def _is_pep740(value: Mapping[str, Any]) -> bool:
    return (
        value.get("version") == 1
        and isinstance(value.get("verification_material"), dict)
        and isinstance(value.get("envelope"), dict)
    )


def _pep740_bundle(document: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A PEP 740 attestation as the v0.3 bundle it is (same certificate, log entries,
    statement and signature; nothing re-signed)."""
    material = document["verification_material"]
    envelope = document["envelope"]
    certificate = material.get("certificate")
    entries = material.get("transparency_entries")
    statement = envelope.get("statement")
    signature = envelope.get("signature")
    for field, value, kind in (
        ("verification_material.certificate", certificate, str),
        ("verification_material.transparency_entries", entries, list),
        ("envelope.statement", statement, str),
        ("envelope.signature", signature, str),
    ):
        if not isinstance(value, kind):
            raise AttestationError(f"{where}: $.{field}", f"expected a {kind.__name__}")
    return {
        "mediaType": _BUNDLE_V03,
        "verificationMaterial": {"certificate": {"rawBytes": certificate}, "tlogEntries": entries},
        "dsseEnvelope": {
            "payload": statement,
            "payloadType": _INTOTO,
            "signatures": [{"sig": signature}],
        },
    }


def _members(
    entries: list[Any], name: str, location: str, array: str, member: tuple[str, type, str]
) -> Iterator[tuple[int, str, Any, Any]]:
    """Each entry of the `array` (at most MAX_RECORDS): its index, where it stands, the
    entry and its `member`, which must be of the given type (else refused as expected)."""
    key, kind, expected = member
    base = f"{location} " if location else ""
    for index, entry in enumerate(entries[:MAX_RECORDS]):
        inner = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(inner, kind):
            raise AttestationError(
                f"{_label(name, location)}: $.{array}[{index}].{key}", f"expected {expected}"
            )
        yield index, f"{base}{array}[{index}]", entry, inner


def _pypi(document: Mapping[str, Any], name: str, location: str) -> list[Record]:
    groups = document["attestation_bundles"]
    records = []
    member = ("attestations", list, "an array")
    for _, group_at, _, items in _members(groups, name, location, "attestation_bundles", member):
        for j, item in enumerate(items[:MAX_RECORDS]):
            where = f"{group_at}.attestations[{j}]"
            label = f"{name} {where}"
            if not isinstance(item, dict) or not _is_pep740(item):
                raise AttestationError(label, "expected a PEP 740 attestation object")
            records.append(
                Record(label, where, "sigstore-bundle", _pep740_bundle(item, label), "pypi")
            )
    return records


def _npm(document: Mapping[str, Any], name: str, location: str) -> list[Record]:
    member = ("bundle", dict, "a Sigstore bundle")
    records = []
    for _, where, entry, bundle in _members(
        document["attestations"], name, location, "attestations", member
    ):
        declared = entry.get("predicateType")
        records.append(
            Record(
                f"{name} {where}",
                where,
                "sigstore-bundle" if _is_bundle(bundle) else "dsse",
                bundle,
                "npm",
                declared if isinstance(declared, str) else None,
            )
        )
    return records


def _gcloud(document: Mapping[str, Any], name: str, location: str) -> list[Record]:
    entries = document["provenance_summary"].get("provenance")
    if not isinstance(entries, list) or not entries:
        raise AttestationError(
            f"{_label(name, location)}: $.provenance_summary.provenance",
            "expected a non-empty array of DSSE envelopes",
        )
    image = document.get("image_summary")
    image_summary = image if isinstance(image, dict) else {}
    member = ("envelope", dict, "a DSSE envelope")
    records = []
    for index, where, entry, envelope in _members(
        entries, name, location, "provenance_summary.provenance", member
    ):
        label = name if len(entries) == 1 and not location else f"{name}#{index + 1}"
        gcloud = {"entry": entry, "image_summary": image_summary}
        records.append(Record(label, where, "dsse", envelope, "gcloud", gcloud=gcloud))
    return records


# Documents that wrap several attestations: the key that tells them, its type, the reader.
_CONTAINERS: Final[
    tuple[tuple[str, type, Callable[[Mapping[str, Any], str, str], list[Record]]], ...]
] = (
    ("attestation_bundles", list, _pypi),
    ("attestations", list, _npm),
    ("provenance_summary", dict, _gcloud),
)
