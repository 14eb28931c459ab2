"""JSON Schemas (Draft 2020-12) for the statements and predicates.

No official JSON Schema exists for these formats; these are written from the spec and
kept in step with `validate()`: a document `validate()` accepts is accepted here, and
the structural errors it rejects (missing or empty required fields, wrong types,
malformed digests and timestamps, inexact type strings, reserved level names) are
rejected here too. Cross-field rules (a name in both parameter objects, one level per
track, FAILED against verificationResult, definedInMaterial in range) are beyond a
schema and stay with `validate()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from assay.attestation._checks import HEX_LENGTHS
from assay.attestation.constants import (
    COSIGN_VULN_V1,
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_V01,
    STATEMENT_V1,
    VERIFIED_PROPERTIES,
    VSA_V1,
    VULNS_V01,
    VULNS_V02,
)
from assay.errors import InputError

Schema = dict[str, Any]

DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"

_TIMESTAMP: Final = (
    r"^(|\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?Z)$"
)
_LEVEL: Final = (
    r"^((?!SLSA_).+|SLSA_[A-Z][A-Z0-9]*_LEVEL_(\d+|UNEVALUATED)|"
    + "|".join(sorted(VERIFIED_PROPERTIES))
    + ")$"
)


def _nullable(kind: str, **extra: Any) -> Schema:
    return {"type": [kind, "null"], **extra}


def _hex(lengths: tuple[int, ...]) -> Schema:
    body = "|".join(f"[0-9a-f]{{{n}}}" for n in lengths)
    return {"type": "string", "pattern": f"^({body})$"}


def _defs() -> Schema:
    non_empty_string: Schema = {"type": "string", "minLength": 1}
    timestamp = _nullable("string", pattern=_TIMESTAMP)
    digest_values: Schema = {
        "type": "object",
        "properties": {name: _hex(lengths) for name, lengths in HEX_LENGTHS.items()},
        "additionalProperties": non_empty_string,
    }
    return {
        "nonEmptyString": non_empty_string,
        "timestamp": timestamp,
        "digestSet": {**digest_values, "minProperties": 1},
        "resourceDescriptor": {
            "type": "object",
            "properties": {
                "uri": _nullable("string"),
                "digest": {"anyOf": [{"type": "null"}, digest_values]},
                "name": _nullable("string"),
                "downloadLocation": _nullable("string"),
                "mediaType": _nullable("string"),
                "content": _nullable("string", pattern=r"^[A-Za-z0-9+/_-]*={0,2}$"),
                "annotations": _nullable("object"),
            },
            "anyOf": [
                {"required": ["uri"], "properties": {"uri": {"minLength": 1}}},
                {
                    "required": ["digest"],
                    "properties": {"digest": {"type": "object", "minProperties": 1}},
                },
                {"required": ["content"], "properties": {"content": {"minLength": 1}}},
            ],
        },
        # An empty entry reads as unset in v1: validate() warns, the schema lets it pass.
        "descriptors": _nullable(
            "array",
            items={
                "anyOf": [
                    {"type": "null"},
                    {"type": "object", "maxProperties": 0},
                    {"$ref": "#/$defs/resourceDescriptor"},
                ]
            },
        ),
        "subject": {
            "allOf": [{"$ref": "#/$defs/resourceDescriptor"}],
            "required": ["digest"],
            "properties": {"digest": {"$ref": "#/$defs/digestSet"}},
        },
        "stringMap": _nullable("object", additionalProperties={"type": "string"}),
        "level": {"type": "string", "minLength": 1, "pattern": _LEVEL},
        "material": {
            "type": "object",
            "properties": {
                "uri": _nullable("string"),
                "digest": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/digestSet"}]},
            },
        },
        "materials": _nullable("array", items={"$ref": "#/$defs/material"}),
    }


def _required_object(properties: Schema, required: list[str]) -> Schema:
    return {"type": "object", "minProperties": 1, "required": required, "properties": properties}


def _provenance_v1() -> Schema:
    return _required_object(
        {
            "buildDefinition": _required_object(
                {
                    "buildType": {"$ref": "#/$defs/nonEmptyString"},
                    "externalParameters": {"type": "object", "minProperties": 1},
                    "internalParameters": _nullable("object"),
                    "resolvedDependencies": {"$ref": "#/$defs/descriptors"},
                },
                ["buildType", "externalParameters"],
            ),
            "runDetails": _required_object(
                {
                    "builder": _required_object(
                        {
                            "id": {"$ref": "#/$defs/nonEmptyString"},
                            "builderDependencies": {"$ref": "#/$defs/descriptors"},
                            "version": {"$ref": "#/$defs/stringMap"},
                        },
                        ["id"],
                    ),
                    "metadata": _nullable(
                        "object",
                        properties={
                            "invocationId": _nullable("string"),
                            "startedOn": {"$ref": "#/$defs/timestamp"},
                            "finishedOn": {"$ref": "#/$defs/timestamp"},
                        },
                    ),
                    "byproducts": {"$ref": "#/$defs/descriptors"},
                },
                ["builder"],
            ),
        },
        ["buildDefinition", "runDetails"],
    )


def _legacy_metadata(claims: list[str]) -> Schema:
    return _nullable(
        "object",
        properties={
            "buildInvocationId": _nullable("string"),
            "buildStartedOn": {"$ref": "#/$defs/timestamp"},
            "buildFinishedOn": {"$ref": "#/$defs/timestamp"},
            "reproducible": _nullable("boolean"),
            "completeness": _nullable(
                "object", properties={name: _nullable("boolean") for name in claims}
            ),
        },
    )


def _builder_ref() -> Schema:
    return {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"$ref": "#/$defs/nonEmptyString"}},
    }


def _provenance_v02() -> Schema:
    return {
        "type": "object",
        "required": ["builder", "buildType"],
        "properties": {
            "builder": _builder_ref(),
            "buildType": {"$ref": "#/$defs/nonEmptyString"},
            "invocation": _nullable(
                "object",
                properties={
                    "configSource": _nullable(
                        "object",
                        properties={
                            "uri": _nullable("string"),
                            "entryPoint": _nullable("string"),
                            "digest": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/digestSet"}]},
                        },
                    ),
                    "parameters": _nullable("object"),
                    "environment": _nullable("object"),
                },
            ),
            "buildConfig": _nullable("object"),
            "metadata": _legacy_metadata(["parameters", "environment", "materials"]),
            "materials": {"$ref": "#/$defs/materials"},
        },
    }


def _provenance_v01() -> Schema:
    return {
        "type": "object",
        "required": ["builder"],
        "properties": {
            "builder": _builder_ref(),
            "recipe": _nullable(
                "object",
                required=["type"],
                properties={
                    "type": {"$ref": "#/$defs/nonEmptyString"},
                    # Cloud Build writes the int64 as a decimal string (protobuf JSON).
                    "definedInMaterial": {
                        "anyOf": [
                            _nullable("integer", minimum=0),
                            {"type": "string", "pattern": "^-?[0-9]+$"},
                        ]
                    },
                    "entryPoint": _nullable("string"),
                    "arguments": _nullable("object"),
                    "environment": _nullable("object"),
                },
            ),
            "metadata": _legacy_metadata(["arguments", "environment", "materials"]),
            "materials": {"$ref": "#/$defs/materials"},
        },
    }


def _vsa_v1() -> Schema:
    return {
        "type": "object",
        "required": ["verifier", "resourceUri", "policy", "verificationResult", "verifiedLevels"],
        "properties": {
            "verifier": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"$ref": "#/$defs/nonEmptyString"},
                    "version": {"$ref": "#/$defs/stringMap"},
                },
            },
            # Required by VSA 1.0, optional since 1.1.
            "timeVerified": {"$ref": "#/$defs/timestamp"},
            "resourceUri": {"$ref": "#/$defs/nonEmptyString"},
            "policy": {
                "allOf": [{"$ref": "#/$defs/resourceDescriptor"}],
                "required": ["uri"],
                "properties": {"uri": {"$ref": "#/$defs/nonEmptyString"}},
            },
            "inputAttestations": _nullable(
                "array",
                items={
                    "allOf": [{"$ref": "#/$defs/resourceDescriptor"}],
                    "required": ["digest"],
                    "properties": {"digest": {"$ref": "#/$defs/digestSet"}},
                },
            ),
            "verificationResult": {"enum": ["PASSED", "FAILED"]},
            "verifiedLevels": {"type": "array", "items": {"$ref": "#/$defs/level"}},
            "dependencyLevels": _nullable(
                "object",
                propertyNames={"$ref": "#/$defs/level"},
                additionalProperties={"type": "integer", "minimum": 0},
            ),
            "slsaVersion": _nullable("string", pattern=r"^\d+\.\d+$"),
        },
    }


def _vulns(*, strict_result: bool, invocation: bool, uri: bool = True) -> Schema:
    """The vulnerability scan predicates (`assay.attestation._validate_vulns`)."""
    timestamp: Schema = {"type": "string", "pattern": _TIMESTAMP, "minLength": 1}
    severity: Schema = {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["method", "score"],
            "properties": {
                "method": {"$ref": "#/$defs/nonEmptyString"},
                "score": {"$ref": "#/$defs/nonEmptyString"},
            },
        },
    }
    result: Schema = (
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "severity"],
                "properties": {
                    "id": {"$ref": "#/$defs/nonEmptyString"},
                    "severity": severity,
                    "annotations": {"type": "array", "items": {"type": "object"}},
                },
            },
        }
        if strict_result
        else {}
    )
    db: Schema = {
        "type": "object",
        "properties": {
            "uri": _nullable("string"),
            "version": _nullable("string"),
            "lastUpdate": timestamp if strict_result else {"$ref": "#/$defs/timestamp"},
        },
    }
    if strict_result:
        db["required"] = ["lastUpdate"]
    scanner: Schema = {
        "type": "object",
        "required": ["uri", "result"] if strict_result else (["uri"] if uri else []),
        "properties": {
            "uri": {"$ref": "#/$defs/nonEmptyString"} if uri else _nullable("string"),
            "version": _nullable("string"),
            "db": db,
            "result": result,
        },
    }
    properties: Schema = {
        "scanner": scanner,
        "metadata": {
            "type": "object",
            "required": ["scanStartedOn", "scanFinishedOn"],
            "properties": {"scanStartedOn": timestamp, "scanFinishedOn": timestamp},
        },
    }
    if invocation:
        properties["invocation"] = _nullable(
            "object",
            properties={
                "uri": _nullable("string"),
                "event_id": _nullable("string"),
                "builder.id": _nullable("string"),
            },
        )
    return {"type": "object", "required": ["scanner", "metadata"], "properties": properties}


def _statement(
    statement_types: list[str], predicate_type: str | None, predicate: Schema | None
) -> Schema:
    properties: Schema = {
        "_type": {"enum": statement_types},
        "subject": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/subject"}},
        "predicateType": (
            {"const": predicate_type} if predicate_type else {"$ref": "#/$defs/nonEmptyString"}
        ),
    }
    required = ["_type", "subject", "predicateType"]
    if predicate is not None:
        properties["predicate"] = predicate
        required.append("predicate")
    else:
        properties["predicate"] = _nullable("object")
    return {"type": "object", "required": required, "properties": properties}


_PREDICATES: Final = {
    "provenance-v1": (PROVENANCE_V1, _provenance_v1),
    "provenance-v0.2": (PROVENANCE_V02, _provenance_v02),
    "provenance-v0.1": (PROVENANCE_V01, _provenance_v01),
    "vsa-v1": (VSA_V1, _vsa_v1),
    "vulns-v0.2": (VULNS_V02, lambda: _vulns(strict_result=True, invocation=False)),
    "vulns-v0.1": (VULNS_V01, lambda: _vulns(strict_result=False, invocation=True)),
    "cosign-vuln-v1": (
        COSIGN_VULN_V1,
        lambda: _vulns(strict_result=False, invocation=True, uri=False),
    ),
}
_BOTH: Final = [STATEMENT_V1, STATEMENT_V01]


_FIXED: Final[dict[str, tuple[Callable[[], Schema], str]]] = {
    "statement-v1": (
        lambda: _statement([STATEMENT_V1], None, None),
        "in-toto Statement v1 (any predicate)",
    ),
    "statement-v0.1": (
        lambda: _statement([STATEMENT_V01], None, None),
        "in-toto Statement v0.1 (any predicate)",
    ),
    "resource-descriptor": (
        lambda: {"$ref": "#/$defs/resourceDescriptor"},
        "in-toto ResourceDescriptor",
    ),
    "digest-set": (lambda: {"$ref": "#/$defs/digestSet"}, "in-toto DigestSet"),
}
"""The schemas that are not of one predicate: how each is made, and its title."""


def _body(name: str) -> tuple[Schema, str]:
    """A schema's body and title, by name (see `SCHEMA_NAMES`)."""
    if name in _FIXED:
        make, title = _FIXED[name]
        return make(), title
    if name in _PREDICATES:
        predicate_type, make = _PREDICATES[name]
        return make(), f"predicate of {predicate_type}"
    carried = name.removesuffix("-statement")
    if name.endswith("-statement") and carried in _PREDICATES:
        predicate_type, make = _PREDICATES[carried]
        return (
            _statement(_BOTH, predicate_type, make()),
            f"in-toto Statement carrying {predicate_type}",
        )
    raise InputError("NAME", f"expected one of {', '.join(SCHEMA_NAMES)}, found {name!r}")


def _build(name: str) -> Schema:
    body, title = _body(name)
    return {
        "$schema": DRAFT,
        "$id": f"urn:assay:schema:{name}",
        "title": title,
        **body,
        "$defs": _defs(),
    }


SCHEMA_NAMES: Final = (
    "statement-v1",
    "statement-v0.1",
    "provenance-v1",
    "provenance-v0.2",
    "provenance-v0.1",
    "vsa-v1",
    "provenance-v1-statement",
    "provenance-v0.2-statement",
    "provenance-v0.1-statement",
    "vsa-v1-statement",
    "vulns-v0.2",
    "vulns-v0.1",
    "cosign-vuln-v1",
    "vulns-v0.2-statement",
    "vulns-v0.1-statement",
    "cosign-vuln-v1-statement",
    "resource-descriptor",
    "digest-set",
)


def json_schema(name: str) -> Schema:
    """The schema called `name` (one of `SCHEMA_NAMES`); raises `InputError` otherwise."""
    return _build(name)


def schema_for_predicate_type(predicate_type: str) -> str | None:
    """The name of the statement schema for a predicate type, if there is one."""
    for name, (known, _) in _PREDICATES.items():
        if known == predicate_type:
            return f"{name}-statement"
    return None
