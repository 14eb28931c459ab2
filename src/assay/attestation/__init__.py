"""SLSA provenance, verification summaries and in-toto statements: models and checks.

Pure code: no network, no database, no signature checks. Public API:

Reading and typed access
    `parse_statement(data) -> Statement`: parse payload bytes (no validation).
    `Statement`: `.type`, `.subject` (`ResourceDescriptor`s), `.predicate_type`,
    `.predicate`, `.provenance_v1()`, `.provenance_v02()`, `.provenance_v01()`,
    `.verification_summary_v1()`, `.typed_predicate()`, `.to_dict()`, `.to_json()`.
    `ResourceDescriptor` (`uri`, `digest`, `name`, ...), `DigestSet`.
    `ProvenanceV1` (`builder_id`, `build_type`, `external_parameters`,
    `internal_parameters`, `resolved_dependencies`, `build_definition`, `run_details`),
    `ProvenanceV02` (`builder_id`, `build_type`, `invocation`, `materials`, `metadata`,
    `build_config`), `ProvenanceV01` (`builder_id`, `recipe`, `materials`, `metadata`),
    `VerificationSummaryV1`.

Building a verification summary
    `VerificationSummaryV1(verifier_id=..., resource_uri=..., policy=ResourceDescriptor(...),
    verification_result="PASSED", verified_levels=[...], time_verified=datetime, ...)`,
    then `build_vsa_statement(subject, summary).to_json()` gives the bytes to sign.

Checking
    `validate(statement) -> list[Finding]` (path, code, severity, message);
    `has_errors(findings, strict=...)`; `require_valid(statement)` raises
    `InvalidAttestation`.

Envelopes (not verified here)
    `extract_payload(data) -> EnvelopePayload` for a DSSE envelope or a Sigstore bundle
    v0.1-v0.3 (`payload`, `payload_type`, `container`, `envelope`, `signatures_checked`
    is always False); `is_intoto_payload_type(payload_type)`.

Files, migration and schemas
    `read_documents(data) -> list[Document]`: every statement in a file (bare statement,
    DSSE envelope, Sigstore bundle, JSON Lines, npm or gcloud wrappers), validated.
    `migrate(statement) -> Migration` (`.statement` in provenance v1, `.losses`, `.notes`).
    `json_schema(name)` for each of `SCHEMA_NAMES` (Draft 2020-12).

JSON
    `loads_strict(data, where=...)`: one JSON document, bounded in size and depth, with
    duplicate keys and non-RFC 8259 text refused (`AttestationError` naming the path);
    `dump_json(value, pretty=...) -> bytes`.

Constants
    `STATEMENT_V1`, `STATEMENT_V01`, `PROVENANCE_V1`, `PROVENANCE_V02`, `PROVENANCE_V01`,
    `VSA_V1`, `PAYLOAD_TYPE_INTOTO`, size limits `MAX_*`.
"""

from __future__ import annotations

from assay.attestation._json import dumps as dump_json
from assay.attestation._json import loads_strict
from assay.attestation.constants import (
    MAX_DOCUMENT_BYTES,
    MAX_FILE_BYTES,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_TYPE_INTOTO,
    PREDICATE_TYPES,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_V01,
    STATEMENT_V1,
    VSA_V1,
)
from assay.attestation.documents import Document, read_documents
from assay.attestation.envelope import EnvelopePayload, extract_payload, is_intoto_payload_type
from assay.attestation.findings import CODES, Finding, Severity, has_errors
from assay.attestation.migrate import Loss, Migration, Note, migrate
from assay.attestation.provenance import (
    BuildDefinition,
    Builder,
    BuildMetadata,
    Completeness,
    ConfigSource,
    Invocation,
    LegacyMetadata,
    Material,
    ProvenanceV01,
    ProvenanceV02,
    ProvenanceV1,
    Recipe,
    RunDetails,
)
from assay.attestation.schema import SCHEMA_NAMES, json_schema
from assay.attestation.statement import (
    DigestSet,
    ResourceDescriptor,
    Statement,
    build_vsa_statement,
    parse_statement,
)
from assay.attestation.validate import InvalidAttestation, require_valid, validate
from assay.attestation.vsa import VerificationSummaryV1, Verifier, format_timestamp

__all__ = [
    "CODES",
    "MAX_DOCUMENT_BYTES",
    "MAX_FILE_BYTES",
    "MAX_PAYLOAD_BYTES",
    "PAYLOAD_TYPE_INTOTO",
    "PREDICATE_TYPES",
    "PROVENANCE_V01",
    "PROVENANCE_V02",
    "PROVENANCE_V1",
    "SCHEMA_NAMES",
    "STATEMENT_V01",
    "STATEMENT_V1",
    "VSA_V1",
    "BuildDefinition",
    "BuildMetadata",
    "Builder",
    "Completeness",
    "ConfigSource",
    "DigestSet",
    "Document",
    "EnvelopePayload",
    "Finding",
    "InvalidAttestation",
    "Invocation",
    "LegacyMetadata",
    "Loss",
    "Material",
    "Migration",
    "Note",
    "ProvenanceV01",
    "ProvenanceV02",
    "ProvenanceV1",
    "Recipe",
    "ResourceDescriptor",
    "RunDetails",
    "Severity",
    "Statement",
    "VerificationSummaryV1",
    "Verifier",
    "build_vsa_statement",
    "dump_json",
    "extract_payload",
    "format_timestamp",
    "has_errors",
    "is_intoto_payload_type",
    "json_schema",
    "loads_strict",
    "migrate",
    "parse_statement",
    "read_documents",
    "require_valid",
    "validate",
]
