"""Rules of SLSA provenance v1, v0.2 and v0.1 predicates."""

from __future__ import annotations

from typing import Any, Final

from assay.attestation import _checks as c
from assay.attestation._json import child
from assay.attestation.findings import Finding
from assay.attestation.provenance import (
    BuildDefinition,
    Builder,
    BuildMetadata,
    ProvenanceV01,
    ProvenanceV02,
    ProvenanceV1,
    RunDetails,
)

_P: Final = "$.predicate"
_BD: Final = "$.predicate.buildDefinition"
_RD: Final = "$.predicate.runDetails"
_BUILDER: Final = "$.predicate.runDetails.builder"
_META: Final = "$.predicate.runDetails.metadata"


_VERSION_FIELDS: Final = {
    "v1": ProvenanceV1._KNOWN,
    "v0.2": ProvenanceV02._KNOWN,
    "v0.1": ProvenanceV01._KNOWN,
}


def _other_versions(out: list[Finding], predicate: dict[str, Any], version: str) -> frozenset[str]:
    """Fields of another provenance version are errors, named by path: a reader that goes
    by the fields it finds (not by predicateType) would read them, another builder id
    included. Returns the keys reported, for the extension check to skip."""
    own = _VERSION_FIELDS[version]
    found: set[str] = set()
    for other, fields in _VERSION_FIELDS.items():
        for key in sorted((fields - own) & predicate.keys()):
            if key in found:
                continue
            found.add(key)
            c.add(
                out,
                child(_P, key),
                "field-of-other-version",
                c.ERROR,
                f"expected only fields of provenance {version}, found {key!r} of provenance "
                f"{other}: a reader that goes by fields, not predicateType, would read it",
            )
    return frozenset(found)


def _required_object(
    out: list[Finding], obj: dict[str, Any], key: str, path: str
) -> dict[str, Any] | None:
    value = obj.get(key)
    if isinstance(value, dict) and value:
        return value
    if c.is_empty(value):
        c.missing(out, child(path, key), "a non-empty object")
    else:
        c.wrong_type(out, child(path, key), "an object", value)
    return None


def check_v1(out: list[Finding], predicate: dict[str, Any]) -> None:
    """Provenance v1: the build level 1 minimum plus every typed field and extension."""
    foreign = _other_versions(out, predicate, "v1")
    c.extensions(
        out,
        predicate,
        ProvenanceV1._KNOWN | foreign,
        _P,
        "vendor",
        where="the provenance predicate",
    )
    definition = _required_object(out, predicate, "buildDefinition", _P)
    if definition is not None:
        _build_definition(out, definition)
    run = _required_object(out, predicate, "runDetails", _P)
    if run is not None:
        _run_details(out, run)


def _build_definition(out: list[Finding], definition: dict[str, Any]) -> None:
    c.extensions(out, definition, BuildDefinition._KNOWN, _BD, "vendor", where="buildDefinition")
    c.required_str(out, definition, "buildType", _BD, uri=True)
    external = _required_object(out, definition, "externalParameters", _BD)
    if c.optional_object(out, definition, "internalParameters", _BD) and external:
        _parameters_in_both(out, definition["internalParameters"], external)
    c.descriptor_list(out, definition, "resolvedDependencies", _BD, "vendor")


def _parameters_in_both(
    out: list[Finding], internal: dict[str, Any], external: dict[str, Any]
) -> None:
    for name in internal.keys() & external.keys():
        c.add(
            out,
            child(child(_BD, "internalParameters"), name),
            "parameter-in-both",
            c.WARNING,
            f"expected {name!r} in only one of externalParameters and "
            "internalParameters, found it in both",
        )


def _run_details(out: list[Finding], run: dict[str, Any]) -> None:
    c.extensions(out, run, RunDetails._KNOWN, _RD, "vendor", where="runDetails")
    builder = _required_object(out, run, "builder", _RD)
    if builder is not None:
        c.extensions(out, builder, Builder._KNOWN, _BUILDER, "vendor", where="builder")
        c.required_str(out, builder, "id", _BUILDER, uri=True)
        c.descriptor_list(out, builder, "builderDependencies", _BUILDER, "vendor")
        c.string_map(out, builder, "version", _BUILDER)
    if c.optional_object(out, run, "metadata", _RD):
        metadata: dict[str, Any] = run["metadata"]
        c.extensions(out, metadata, BuildMetadata._KNOWN, _META, "vendor", where="metadata")
        c.optional_str(out, metadata, "invocationId", _META)
        c.timestamp(out, metadata, "startedOn", _META)
        c.timestamp(out, metadata, "finishedOn", _META)
    c.descriptor_list(out, run, "byproducts", _RD, "vendor")


def _builder_id(out: list[Finding], predicate: dict[str, Any]) -> None:
    builder: Any = predicate.get("builder")
    path = child(_P, "builder")
    if c.present(out, builder, dict, path, expected="an object", what="an object with id"):
        c.required_str(out, builder, "id", path, uri=True)
        c.extensions(out, builder, frozenset({"id"}), path, "uri", where="builder")


def _materials(out: list[Finding], predicate: dict[str, Any]) -> int:
    """Checks `materials`; returns how many there are."""
    value = predicate.get("materials")
    if value is None:
        return 0
    path = child(_P, "materials")
    if not isinstance(value, list):
        c.wrong_type(out, path, "an array", value)
        return 0
    for where, item in c.objects(out, value, path):
        c.optional_str(out, item, "uri", where)
        if item.get("digest") is not None:
            c.digest_set(out, item["digest"], child(where, "digest"))
        c.extensions(out, item, frozenset({"uri", "digest"}), where, "uri", where="a material")
    return len(value)


def _legacy_metadata(out: list[Finding], predicate: dict[str, Any], claims: frozenset[str]) -> None:
    if not c.optional_object(out, predicate, "metadata", _P):
        return
    metadata: dict[str, Any] = predicate["metadata"]
    path = child(_P, "metadata")
    c.optional_str(out, metadata, "buildInvocationId", path)
    c.timestamp(out, metadata, "buildStartedOn", path)
    c.timestamp(out, metadata, "buildFinishedOn", path)
    c.optional_bool(out, metadata, "reproducible", path)
    if c.optional_object(out, metadata, "completeness", path):
        completeness: dict[str, Any] = metadata["completeness"]
        where = child(path, "completeness")
        for key in claims:
            c.optional_bool(out, completeness, key, where)
        c.extensions(out, completeness, claims, where, "uri", where="completeness")
    known = frozenset(
        {"buildInvocationId", "buildStartedOn", "buildFinishedOn", "completeness", "reproducible"}
    )
    c.extensions(out, metadata, known, path, "uri", where="metadata")


def check_v02(out: list[Finding], predicate: dict[str, Any]) -> None:
    """Provenance v0.2: builder.id and buildType required; URI-named extensions."""
    foreign = _other_versions(out, predicate, "v0.2")
    c.extensions(
        out, predicate, ProvenanceV02._KNOWN | foreign, _P, "uri", where="the provenance predicate"
    )
    _builder_id(out, predicate)
    c.required_str(out, predicate, "buildType", _P, uri=True)
    if c.optional_object(out, predicate, "invocation", _P):
        invocation: dict[str, Any] = predicate["invocation"]
        path = child(_P, "invocation")
        c.extensions(
            out,
            invocation,
            frozenset({"configSource", "parameters", "environment"}),
            path,
            "uri",
            where="invocation",
        )
        if c.optional_object(out, invocation, "configSource", path):
            source: dict[str, Any] = invocation["configSource"]
            where = child(path, "configSource")
            c.optional_str(out, source, "uri", where)
            c.optional_str(out, source, "entryPoint", where)
            if source.get("digest") is not None:
                c.digest_set(out, source["digest"], child(where, "digest"))
            c.extensions(
                out,
                source,
                frozenset({"uri", "digest", "entryPoint"}),
                where,
                "uri",
                where="configSource",
            )
        c.optional_object(out, invocation, "parameters", path)
        c.optional_object(out, invocation, "environment", path)
    c.optional_object(out, predicate, "buildConfig", _P)
    _legacy_metadata(out, predicate, frozenset({"parameters", "environment", "materials"}))
    _materials(out, predicate)


def _material_index(out: list[Finding], index: Any, where: str, count: int) -> None:
    """`recipe.definedInMaterial`: an integer index into the `count` materials."""
    if isinstance(index, str) and index.lstrip("-").isdigit() and index.isascii():
        # Google Cloud Build writes this int64 the protobuf-JSON way, as a decimal
        # string ("-1": no material). Signed by the builder as such: a warning.
        c.add(
            out,
            where,
            "wrong-type",
            c.WARNING,
            f"expected an integer index into materials, found the string {index!r} "
            "(protobuf JSON's int64 form)",
        )
    elif not isinstance(index, int) or isinstance(index, bool):
        c.wrong_type(out, where, "an integer index into materials", index)
    elif not 0 <= index < count:
        c.add(
            out,
            where,
            "material-index",
            c.ERROR,
            f"expected an index from 0 to {count - 1} into materials, found {index}"
            if count
            else f"expected an index into materials, found {index} with no materials",
        )


def check_v01(out: list[Finding], predicate: dict[str, Any]) -> None:
    """Provenance v0.1: builder.id required; recipe.type required within a recipe."""
    foreign = _other_versions(out, predicate, "v0.1")
    c.extensions(
        out, predicate, ProvenanceV01._KNOWN | foreign, _P, "uri", where="the provenance predicate"
    )
    _builder_id(out, predicate)
    count = _materials(out, predicate)
    _legacy_metadata(out, predicate, frozenset({"arguments", "environment", "materials"}))
    if not c.optional_object(out, predicate, "recipe", _P):
        return
    recipe: dict[str, Any] = predicate["recipe"]
    path = child(_P, "recipe")
    c.required_str(out, recipe, "type", path, uri=True)
    c.optional_str(out, recipe, "entryPoint", path)
    c.optional_object(out, recipe, "arguments", path)
    c.optional_object(out, recipe, "environment", path)
    index = recipe.get("definedInMaterial")
    if index is not None:
        _material_index(out, index, child(path, "definedInMaterial"), count)
    c.extensions(
        out,
        recipe,
        frozenset({"type", "definedInMaterial", "entryPoint", "arguments", "environment"}),
        path,
        "uri",
        where="recipe",
    )
