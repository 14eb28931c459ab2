"""The JSON Schemas agree with validate(): same accepts, same structural rejects."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from assay.attestation import Severity, validate
from assay.attestation.documents import read_documents
from assay.attestation.schema import SCHEMA_NAMES, json_schema, schema_for_predicate_type
from assay.errors import InputError

from .cases import CASES, Case
from .samples import BASES, SLSA_ASSETS, asset_files

VALIDATORS = {name: jsonschema.Draft202012Validator(json_schema(name)) for name in SCHEMA_NAMES}


def _statement_validator(document: Any) -> jsonschema.Draft202012Validator:
    predicate_type = document.get("predicateType") if isinstance(document, dict) else None
    name = schema_for_predicate_type(predicate_type) if isinstance(predicate_type, str) else None
    return VALIDATORS[name or "statement-v1"]


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = json_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_unknown_schema_name() -> None:
    with pytest.raises(InputError, match="provenance-v1"):
        json_schema("provenance-v9")


@pytest.mark.parametrize("name", sorted(BASES))
def test_statement_schemas_accept_the_valid_bases(name: str) -> None:
    document = BASES[name]()
    assert VALIDATORS[f"{name}-statement"].is_valid(document)
    assert VALIDATORS[name].is_valid(document["predicate"])
    statement_schema = "statement-v1" if document["_type"].endswith("v1") else "statement-v0.1"
    assert VALIDATORS[statement_schema].is_valid(document)


def _accepted_real_statements() -> list[tuple[str, Any]]:
    accepted = []
    for name in asset_files():
        try:
            documents = read_documents((SLSA_ASSETS / name).read_bytes())
        except Exception:
            continue
        for document in documents:
            if document.statement is None:
                continue
            if any(f.severity is Severity.ERROR for f in validate(document.statement)):
                continue
            if schema_for_predicate_type(document.predicate_type or "") is None:
                continue
            accepted.append((f"{name} {document.location}".strip(), document.statement))
    return accepted


ACCEPTED = _accepted_real_statements()


def test_many_real_statements_are_accepted() -> None:
    assert len(ACCEPTED) > 200


@pytest.mark.parametrize(("where", "document"), ACCEPTED, ids=[w for w, _ in ACCEPTED])
def test_schemas_accept_what_validate_accepts(where: str, document: Any) -> None:
    errors = [e.message for e in _statement_validator(document).iter_errors(document)]
    assert errors == []


STRUCTURAL = [c for c in CASES if c.severity == "error" and c.structural]
SEMANTIC = [c for c in CASES if c.severity == "warning" or not c.structural]


def _document(case: Case) -> Any:
    return None if case.edits[0][0] == () else case.document()


@pytest.mark.parametrize("case", STRUCTURAL, ids=[c.id for c in STRUCTURAL])
def test_schemas_reject_structural_errors(case: Case) -> None:
    document = _document(case)
    schema = VALIDATORS[f"{case.base}-statement"]
    assert not schema.is_valid(document)


@pytest.mark.parametrize("case", SEMANTIC, ids=[c.id for c in SEMANTIC])
def test_warnings_and_cross_field_rules_are_left_to_validate(case: Case) -> None:
    document = _document(case)
    predicate_type_changed = any(edit[0] == ("predicateType",) for edit in case.edits)
    validator = VALIDATORS["statement-v1" if predicate_type_changed else f"{case.base}-statement"]
    # Warnings never make a schema reject; cross-field errors are beyond a schema.
    assert validator.is_valid(document)
