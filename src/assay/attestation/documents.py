"""Find the statements in an input file and check them, container and payload alike.

Accepted forms: a bare statement, a DSSE envelope, a Sigstore bundle (v0.1-v0.3),
JSON Lines bundles (`.intoto.jsonl`) of any of these, the npm registry's
`{"attestations": [{"predicateType", "bundle"}]}` response, PyPI's PEP 740 attestations
and `gcloud ... describe --show-provenance` output, as `assay.attestation.files` (the
reader every command shares) reads them. Signatures are never checked here: every `Document`
says so in `signatures_checked`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.attestation import _json
from assay.attestation.constants import SIGSTORE_BUNDLE_MEDIA_TYPES
from assay.attestation.envelope import (
    EnvelopePayload,
    extract_payload,
    is_intoto_payload_type,
    is_sigstore_bundle,
)
from assay.attestation.files import Record, parse_file
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


def read_documents(data: bytes, name: str = "input") -> list[Document]:
    """Every statement in `data`, validated. Raises `AttestationError` naming `name` if
    the file is unusable.

    The file is read by `assay.attestation.files`, the reader every command shares
    (duplicate keys, depth, size and shapes decided once); this adds the findings.
    """
    documents: list[Document] = []
    for record in parse_file(data, name):
        documents.extend(_document(record))
    return documents


def _declared_type_check(record: Record, document: Document) -> None:
    """npm lists a predicate type beside each bundle: it must be the statement's."""
    declared = record.declared_predicate_type
    if declared is None or document.statement is None:
        return
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


def _ignored_line(record: Record) -> Document:
    # JSON Lines bundles: consumers ignore lines they do not recognise.
    return Document(
        record.location,
        "statement",
        findings=[
            Finding(
                "$",
                "unknown-field",
                Severity.WARNING,
                f"expected an attestation on {record.label}, found an object with fields "
                f"{sorted(record.document)[:6]} (ignored)",
            )
        ],
    )


def _document(record: Record) -> Iterator[Document]:
    location, value = record.location, record.document
    if record.kind in ("dsse", "sigstore-bundle"):
        document = _from_envelope(value, location)
        _declared_type_check(record, document)
        yield document
    elif record.kind == "unknown":
        yield _ignored_line(record)
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


def _broken(location: str, code: str, message: str, path: str = "$") -> Document:
    return Document(location, "statement", findings=[Finding(path, code, Severity.ERROR, message)])


def _from_envelope(value: dict[str, Any], location: str) -> Document:
    bundle = is_sigstore_bundle(value)
    kind: DocumentKind = "sigstore-bundle" if bundle else "dsse"
    findings = _bundle_version(value) if bundle else []
    try:
        extracted = extract_payload(value)
    except AttestationError as error:
        code = "bundle-content" if error.where == "$.dsseEnvelope" else "payload-encoding"
        findings.append(Finding(error.where, code, Severity.ERROR, error.reason))
        return Document(location, kind, findings=findings)
    statement, problems = _payload_statement(extracted, "$.dsseEnvelope" if bundle else "$")
    findings.extend(problems)
    if problems:
        return Document(location, kind, payload_type=extracted.payload_type, findings=findings)
    findings.extend(validate(statement))
    return Document(location, kind, statement, extracted.payload_type, findings)


def _bundle_version(value: dict[str, Any]) -> list[Finding]:
    """A warning for a bundle media type other than v0.1 to v0.3."""
    if value["mediaType"] in SIGSTORE_BUNDLE_MEDIA_TYPES:
        return []
    message = f"expected a Sigstore bundle v0.1 to v0.3, found {value['mediaType']!r}"
    return [Finding("$.mediaType", "bundle-content", Severity.WARNING, message)]


def _payload_statement(extracted: EnvelopePayload, prefix: str) -> tuple[Any, list[Finding]]:
    """The statement an envelope's payload holds, or the findings saying why it holds
    none (a payload type other than in-toto's, or a payload that is not JSON)."""
    payload_type = extracted.payload_type
    if not is_intoto_payload_type(payload_type):
        message = f"expected 'application/vnd.in-toto+json', found {payload_type!r}"
        return None, [Finding(f"{prefix}.payloadType", "payload-type", Severity.ERROR, message)]
    try:
        return _json.loads(extracted.payload, where=f"{prefix}.payload"), []
    except AttestationError as error:
        return None, [Finding(error.where, "payload-encoding", Severity.ERROR, error.reason)]
