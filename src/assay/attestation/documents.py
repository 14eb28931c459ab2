"""Find the statements in an input file and check them, container and payload alike.

Accepted forms: a bare statement, a DSSE envelope, a Sigstore bundle (v0.1-v0.3),
JSON Lines bundles (`.intoto.jsonl`) of any of these, the npm registry's
`{"attestations": [{"predicateType", "bundle"}]}` response and `gcloud ... describe
--show-provenance` output. Signatures are never checked here: every `Document`
says so in `signatures_checked`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from assay.attestation import _json
from assay.attestation.constants import (
    MAX_BUNDLE_LINES,
    MAX_FILE_BYTES,
    SIGSTORE_BUNDLE_MEDIA_TYPES,
)
from assay.attestation.envelope import (
    extract_payload,
    is_dsse_envelope,
    is_intoto_payload_type,
    is_sigstore_bundle,
)
from assay.attestation.findings import Finding, Severity
from assay.attestation.validate import validate
from assay.errors import AttestationError

DocumentKind = Literal["statement", "dsse", "sigstore-bundle"]

_STATEMENT_KEYS = frozenset({"_type", "subject", "predicateType"})
# Top-level fields of the predicates: a file with these alone is a predicate, not a statement.
_PREDICATE_KEYS = frozenset(
    {
        "buildDefinition",
        "runDetails",
        "builder",
        "buildType",
        "recipe",
        "verifier",
        "verificationResult",
    }
)


@dataclass(slots=True)
class Document:
    """One statement found in an input, with every finding about it."""

    location: str
    """Where in the input: `""` for the whole file, `"line 3"`, `"attestations[1]"`."""
    kind: DocumentKind
    statement: Any = None
    """The statement's parsed JSON, or None when the payload could not be read."""
    payload_type: str | None = None
    findings: list[Finding] = field(default_factory=list)
    signatures_checked: bool = False
    """Always False: signatures are verified elsewhere (`assay attest verify-signature`)."""

    @property
    def predicate_type(self) -> str | None:
        value = self.statement.get("predicateType") if isinstance(self.statement, dict) else None
        return value if isinstance(value, str) else None


def read_documents(data: bytes) -> list[Document]:
    """Every statement in `data`, validated. Raises `AttestationError` if unreadable."""
    if len(data) > MAX_FILE_BYTES:
        raise AttestationError(
            "input", f"expected at most {MAX_FILE_BYTES} bytes, found {len(data)}"
        )
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        whole = None
        lines = [line for line in data.splitlines() if line.strip()]
        if len(lines) < 2:
            _json.loads(data, where="input", limit=MAX_FILE_BYTES)  # raises, with the reason
    else:
        # One JSON document; wrappers (npm, gcloud) may hold several envelopes.
        return list(_documents(whole, ""))
    if len(lines) > MAX_BUNDLE_LINES:
        raise AttestationError(
            "input", f"expected at most {MAX_BUNDLE_LINES} lines, found {len(lines)}"
        )
    documents: list[Document] = []
    readable = 0
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        location = f"line {number}"
        try:
            value = _json.loads(line, where=location)
        except AttestationError as error:
            documents.append(_broken(location, "not-json", error.reason))
            continue
        readable += 1
        documents.extend(_documents(value, location, in_bundle=True))
    if not readable:
        # Not one JSON line: this is not a JSON Lines bundle but some other file.
        raise AttestationError("input", "expected JSON or JSON Lines, found neither")
    return documents


def _broken(location: str, code: str, message: str, path: str = "$") -> Document:
    return Document(location, "statement", findings=[Finding(path, code, Severity.ERROR, message)])


def _documents(value: Any, location: str, *, in_bundle: bool = False) -> Iterator[Document]:
    where = location or "input"
    if not isinstance(value, dict):
        yield _broken(
            location, "not-object", f"expected a JSON object, found {_json.type_name(value)}"
        )
        return
    if is_sigstore_bundle(value) or is_dsse_envelope(value):
        yield _from_envelope(value, location)
    elif isinstance(value.get("attestations"), list):
        yield from _npm_attestations(value["attestations"], location)
    elif isinstance(value.get("provenance_summary"), dict):
        yield from _gcloud_provenance(value["provenance_summary"], location)
    elif in_bundle and not _STATEMENT_KEYS & value.keys():
        # JSON Lines bundles: consumers ignore lines they do not recognise.
        yield Document(
            location,
            "statement",
            findings=[
                Finding(
                    "$",
                    "unknown-field",
                    Severity.WARNING,
                    f"expected an attestation on {where}, found an object with fields "
                    f"{sorted(value)[:6]} (ignored)",
                )
            ],
        )
    elif not _STATEMENT_KEYS & value.keys() and _PREDICATE_KEYS & value.keys():
        fields = ", ".join(sorted(_PREDICATE_KEYS & value.keys()))
        yield _broken(
            location,
            "not-a-statement",
            "expected an in-toto statement (_type, subject, predicateType, predicate), "
            f"found a bare predicate ({fields})",
        )
    else:
        yield Document(location, "statement", value, findings=validate(value))


def _from_envelope(value: dict[str, Any], location: str) -> Document:
    bundle = is_sigstore_bundle(value)
    kind: DocumentKind = "sigstore-bundle" if bundle else "dsse"
    findings: list[Finding] = []
    if bundle and value["mediaType"] not in SIGSTORE_BUNDLE_MEDIA_TYPES:
        findings.append(
            Finding(
                "$.mediaType",
                "bundle-content",
                Severity.WARNING,
                f"expected a Sigstore bundle v0.1 to v0.3, found {value['mediaType']!r}",
            )
        )
    try:
        extracted = extract_payload(value)
    except AttestationError as error:
        code = "bundle-content" if error.where == "$.dsseEnvelope" else "payload-encoding"
        findings.append(Finding(error.where, code, Severity.ERROR, error.reason))
        return Document(location, kind, findings=findings)
    prefix = "$.dsseEnvelope" if bundle else "$"
    if not is_intoto_payload_type(extracted.payload_type):
        findings.append(
            Finding(
                f"{prefix}.payloadType",
                "payload-type",
                Severity.ERROR,
                f"expected 'application/vnd.in-toto+json', found {extracted.payload_type!r}",
            )
        )
        return Document(location, kind, payload_type=extracted.payload_type, findings=findings)
    try:
        statement = _json.loads(extracted.payload, where=f"{prefix}.payload")
    except AttestationError as error:
        findings.append(Finding(error.where, "payload-encoding", Severity.ERROR, error.reason))
        return Document(location, kind, payload_type=extracted.payload_type, findings=findings)
    findings.extend(validate(statement))
    return Document(location, kind, statement, extracted.payload_type, findings)


def _npm_attestations(entries: list[Any], location: str) -> Iterator[Document]:
    base = f"{location} " if location else ""
    for index, entry in enumerate(entries):
        here = f"{base}attestations[{index}]"
        bundle = entry.get("bundle") if isinstance(entry, dict) else None
        if not isinstance(bundle, dict):
            yield _broken(here, "bundle-content", "expected a Sigstore bundle, found none")
            continue
        document = _from_envelope(bundle, here)
        declared = entry.get("predicateType")
        if declared is not None and document.statement is not None:
            found = document.predicate_type
            if declared != found:
                document.findings.append(
                    Finding(
                        "$.predicateType",
                        "predicate-type-mismatch",
                        Severity.ERROR,
                        f"expected {declared!r} as listed beside the bundle, found {found!r}",
                    )
                )
        yield document


def _gcloud_provenance(summary: dict[str, Any], location: str) -> Iterator[Document]:
    entries = summary.get("provenance")
    base = f"{location} " if location else ""
    if not isinstance(entries, list) or not entries:
        yield _broken(
            f"{base}provenance_summary",
            "bundle-content",
            "expected provenance entries with DSSE envelopes, found none",
        )
        return
    for index, entry in enumerate(entries):
        here = f"{base}provenance_summary.provenance[{index}]"
        envelope = entry.get("envelope") if isinstance(entry, dict) else None
        if not isinstance(envelope, dict):
            yield _broken(here, "bundle-content", "expected a DSSE envelope, found none")
            continue
        yield _from_envelope(envelope, here)
