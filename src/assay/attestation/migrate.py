"""Migrate provenance v0.1 -> v0.2 -> v1, following the spec's migration tables.

`migrate()` returns the v1 statement, a list of `Loss`es: every source field that
has no place in v1 (buildConfig, completeness, reproducible, URI-named extensions, ...),
so nothing disappears silently; and apart from them a list of `Note`s: fields that were
carried over but deserve a look (a buildType kept as it was, an index replaced by what
it pointed to).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.attestation import _json
from assay.attestation._checks import is_empty, is_uri
from assay.attestation._json import child
from assay.attestation.constants import (
    PROVENANCE_V01,
    PROVENANCE_V02,
    PROVENANCE_V1,
    STATEMENT_V1,
)
from assay.attestation.statement import JSONView, Statement
from assay.attestation.views import array
from assay.errors import AttestationError


@dataclass(frozen=True, slots=True)
class Loss:
    """A source field that could not be carried over, and why."""

    path: str
    """JSON path in the source statement."""
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Note:
    """A source field that was carried over, with something its reader should know."""

    path: str
    """JSON path in the source statement."""
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True, slots=True)
class Migration:
    statement: Statement
    """The statement with a provenance v1 predicate."""
    losses: list[Loss] = field(default_factory=list)
    source_predicate_type: str = PROVENANCE_V1
    notes: list[Note] = field(default_factory=list)
    """Fields carried over that deserve a look; none of them is a loss."""


_P = "$.predicate"


def _checked_predicate(source: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The source's predicate type and predicate, refused unless migrate() can read them."""
    predicate_type = source.get("predicateType")
    predicate = source.get("predicate")
    if predicate_type not in (PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1):
        raise AttestationError(
            "$.predicateType",
            f"expected {PROVENANCE_V01!r}, {PROVENANCE_V02!r} or {PROVENANCE_V1!r}, "
            f"found {predicate_type!r}",
        )
    if not isinstance(predicate, dict):
        raise AttestationError(
            _P, f"expected a predicate object, found {_json.type_name(predicate)}"
        )
    return str(predicate_type), predicate


def migrate(statement: JSONView | Mapping[str, Any]) -> Migration:
    """Turn a v0.1 or v0.2 provenance statement into v1 (a v1 one comes back unchanged)."""
    raw = statement._raw if isinstance(statement, JSONView) else statement
    if not isinstance(raw, Mapping):
        raise AttestationError("$", f"expected a statement object, found {_json.type_name(raw)}")
    source = _json.clone(dict(raw))
    predicate_type, predicate = _checked_predicate(source)
    losses: list[Loss] = []
    notes: list[Note] = []
    if predicate_type == PROVENANCE_V1:
        return Migration(Statement._wrap(source), losses, PROVENANCE_V1)
    if predicate_type == PROVENANCE_V01:
        predicate = v01_to_v02(predicate, losses, notes)
    replaced = {
        "_type": STATEMENT_V1,
        "predicateType": PROVENANCE_V1,
        "predicate": v02_to_v1(predicate, losses, notes),
    }
    # Same keys in the same order as the source, three of them replaced.
    result = {key: replaced.get(key, value) for key, value in source.items()}
    return Migration(Statement._wrap(result), losses, predicate_type, notes)


def _unknown(
    obj: dict[str, Any], known: frozenset[str], path: str, losses: list[Loss]
) -> dict[str, Any]:
    """Fields outside `known`; v1 names extensions `<vendor>_<field>`, so URIs cannot follow."""
    extra = {k: v for k, v in obj.items() if k not in known}
    for key in extra:
        kind = "URI-named extension" if is_uri(key) else "unknown field"
        losses.append(Loss(child(path, key), f"{kind}; provenance v1 has no place for it"))
    return extra


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _indexes(index: Any, items: list[Any]) -> bool:
    return isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(items)


_RECIPE = child(_P, "recipe")
_V01_RECIPE_FIELDS = frozenset(
    {"type", "definedInMaterial", "entryPoint", "arguments", "environment"}
)
_V01_FIELDS = frozenset({"builder", "recipe", "metadata", "materials"})
# v0.1 recipe field -> v0.2 invocation field.
_V01_INVOCATION = (("arguments", "parameters"), ("environment", "environment"))


def _material_source(
    recipe: dict[str, Any], materials: list[Any], losses: list[Loss], notes: list[Note] | None
) -> dict[str, Any]:
    """The config source that `recipe.definedInMaterial` points to, if it points anywhere."""
    index = recipe.get("definedInMaterial")
    if index is None:
        return {}
    where = child(_RECIPE, "definedInMaterial")
    if not _indexes(index, materials):
        losses.append(Loss(where, f"{index!r} does not index materials"))
        return {}
    material = _object(materials[index])
    if notes is not None:
        notes.append(
            Note(
                where,
                f"replaced by what it indexed: materials[{index}] became the config source",
            )
        )
    return {k: material[k] for k in ("uri", "digest") if k in material}


def _v01_invocation(recipe: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """The v0.2 invocation: the config source, then the recipe's arguments and environment."""
    invocation: dict[str, Any] = {"configSource": source} if source else {}
    for old, new in _V01_INVOCATION:
        if recipe.get(old) is not None:
            invocation[new] = recipe[old]
    return invocation


def _v01_recipe(
    recipe: dict[str, Any], materials: list[Any], losses: list[Loss], notes: list[Note] | None
) -> dict[str, Any]:
    """The v0.2 buildType and invocation that a v0.1 recipe becomes."""
    out: dict[str, Any] = {}
    if "type" in recipe:
        out["buildType"] = recipe["type"]
    source = _material_source(recipe, materials, losses, notes)
    if "entryPoint" in recipe:
        source["entryPoint"] = recipe["entryPoint"]
    invocation = _v01_invocation(recipe, source)
    if invocation:
        out["invocation"] = invocation
    _unknown(recipe, _V01_RECIPE_FIELDS, _RECIPE, losses)
    return out


def _v01_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in metadata.items() if k != "completeness"}
    completeness = metadata.get("completeness")
    if isinstance(completeness, dict):
        meta["completeness"] = {
            ("parameters" if k == "arguments" else k): v for k, v in completeness.items()
        }
    return meta


def _recipe_fields(
    recipe: Any, materials: Any, losses: list[Loss], notes: list[Note] | None
) -> dict[str, Any]:
    """What a v0.1 recipe becomes in v0.2 (nothing, and a loss, when it is unset)."""
    if isinstance(recipe, dict):
        return _v01_recipe(recipe, array(materials), losses, notes)
    if recipe is None:
        losses.append(Loss(_RECIPE, "unset: the build type is unknown"))
    return {}


def v01_to_v02(
    predicate: dict[str, Any], losses: list[Loss], notes: list[Note] | None = None
) -> dict[str, Any]:
    """Provenance v0.1 predicate to v0.2 (spec, "Migrating from 0.1")."""
    out: dict[str, Any] = {}
    if "builder" in predicate:
        out["builder"] = predicate["builder"]
    materials = predicate.get("materials")
    out.update(_recipe_fields(predicate.get("recipe"), materials, losses, notes))
    metadata = predicate.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = _v01_metadata(metadata)
    if materials is not None:
        out["materials"] = materials
    # v0.2 names extensions by URI as v0.1 does: carry them across unchanged.
    out.update({k: v for k, v in predicate.items() if k not in _V01_FIELDS})
    return out


_INVOCATION = child(_P, "invocation")
_CONFIG_SOURCE = child(_INVOCATION, "configSource")
_V02_FIELDS = frozenset(
    {"builder", "buildType", "invocation", "buildConfig", "metadata", "materials"}
)
_V02_SOURCE_FIELDS = frozenset({"uri", "digest", "entryPoint"})
_V02_INVOCATION_FIELDS = frozenset({"configSource", "parameters", "environment"})
# v0.2 metadata field -> v1 runDetails.metadata field.
_V02_METADATA_RENAMED = (
    ("buildInvocationId", "invocationId"),
    ("buildStartedOn", "startedOn"),
    ("buildFinishedOn", "finishedOn"),
)
_V02_METADATA_DROPPED = ("completeness", "reproducible")
_V02_METADATA_FIELDS = frozenset(
    [old for old, _ in _V02_METADATA_RENAMED] + list(_V02_METADATA_DROPPED)
)


def _external_parameters(
    invocation: dict[str, Any], source: dict[str, Any], losses: list[Loss]
) -> dict[str, Any]:
    external: dict[str, Any] = dict(_object(invocation.get("parameters")))
    for name, key in (("entryPoint", "entryPoint"), ("source", "uri")):
        value = source.get(key)
        if is_empty(value):
            continue
        if name in external:
            losses.append(
                Loss(child(_CONFIG_SOURCE, key), f"externalParameters already has {name!r}")
            )
        else:
            external[name] = value
    return external


def _resolved_dependencies(materials: Any, source: dict[str, Any]) -> list[Any]:
    dependencies: list[Any] = list(materials) if isinstance(materials, list) else []
    config = {k: source[k] for k in ("uri", "digest") if not is_empty(source.get(k))}
    if config and config not in dependencies:
        dependencies.append(config)
    return dependencies


def _v02_build_type(predicate: dict[str, Any], notes: list[Note] | None) -> dict[str, Any]:
    """The buildType, carried as it is (and noted: v1 gives it a different job)."""
    if "buildType" not in predicate:
        return {}
    if notes is not None:
        notes.append(
            Note(
                child(_P, "buildType"),
                "carried unchanged; a v1 buildType must describe how to read the v1 inputs",
            )
        )
    return {"buildType": predicate["buildType"]}


def _v02_build_definition(
    predicate: dict[str, Any], losses: list[Loss], notes: list[Note] | None
) -> dict[str, Any]:
    definition = _v02_build_type(predicate, notes)
    invocation = _object(predicate.get("invocation"))
    source = _object(invocation.get("configSource"))
    definition["externalParameters"] = _external_parameters(invocation, source, losses)
    environment = invocation.get("environment")
    if not is_empty(environment):
        definition["internalParameters"] = environment
    dependencies = _resolved_dependencies(predicate.get("materials"), source)
    if dependencies:
        definition["resolvedDependencies"] = dependencies
    _unknown(source, _V02_SOURCE_FIELDS, _CONFIG_SOURCE, losses)
    _unknown(invocation, _V02_INVOCATION_FIELDS, _INVOCATION, losses)
    return definition


def _v02_run_metadata(metadata: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    meta_path = child(_P, "metadata")
    renamed = {
        new: metadata[old] for old, new in _V02_METADATA_RENAMED if metadata.get(old) is not None
    }
    for key in _V02_METADATA_DROPPED:
        if key in metadata:
            losses.append(Loss(child(meta_path, key), "removed in v1: implied by builder.id"))
    _unknown(metadata, _V02_METADATA_FIELDS, meta_path, losses)
    return renamed


def _v02_run_details(predicate: dict[str, Any], losses: list[Loss]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    builder = predicate.get("builder")
    if isinstance(builder, dict):
        run["builder"] = {"id": builder["id"]} if "id" in builder else {}
        _unknown(builder, frozenset({"id"}), child(_P, "builder"), losses)
    metadata = predicate.get("metadata")
    if isinstance(metadata, dict):
        renamed = _v02_run_metadata(metadata, losses)
        if renamed:
            run["metadata"] = renamed
    return run


def v02_to_v1(
    predicate: dict[str, Any], losses: list[Loss], notes: list[Note] | None = None
) -> dict[str, Any]:
    """Provenance v0.2 predicate to v1 (spec, "Migrating from 0.2")."""
    definition = _v02_build_definition(predicate, losses, notes)
    run = _v02_run_details(predicate, losses)
    if predicate.get("buildConfig") is not None:
        losses.append(
            Loss(
                child(_P, "buildConfig"),
                "removed in v1: record its digest under externalParameters.config if it was a"
                " top-level input, or in byproducts if its resolved form matters",
            )
        )
    _unknown(predicate, _V02_FIELDS, _P, losses)
    return {"buildDefinition": definition, "runDetails": run}
