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


def migrate(statement: JSONView | Mapping[str, Any]) -> Migration:
    """Turn a v0.1 or v0.2 provenance statement into v1 (a v1 one comes back unchanged)."""
    raw = statement._raw if isinstance(statement, JSONView) else statement
    if not isinstance(raw, Mapping):
        raise AttestationError("$", f"expected a statement object, found {_json.type_name(raw)}")
    source = _json.clone(dict(raw))
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
    losses: list[Loss] = []
    notes: list[Note] = []
    if predicate_type == PROVENANCE_V1:
        return Migration(Statement._wrap(source), losses, PROVENANCE_V1)
    if predicate_type == PROVENANCE_V01:
        predicate = v01_to_v02(predicate, losses, notes)
    v1 = v02_to_v1(predicate, losses, notes)
    result: dict[str, Any] = {}
    for key, value in source.items():
        if key == "_type":
            result[key] = STATEMENT_V1
        elif key == "predicateType":
            result[key] = PROVENANCE_V1
        elif key == "predicate":
            result[key] = v1
        else:
            result[key] = value
    return Migration(Statement._wrap(result), losses, str(predicate_type), notes)


def _unknown(
    obj: dict[str, Any], known: frozenset[str], path: str, losses: list[Loss]
) -> dict[str, Any]:
    """Fields outside `known`; v1 names extensions `<vendor>_<field>`, so URIs cannot follow."""
    extra = {k: v for k, v in obj.items() if k not in known}
    for key in extra:
        kind = "URI-named extension" if is_uri(key) else "unknown field"
        losses.append(Loss(child(path, key), f"{kind}; provenance v1 has no place for it"))
    return extra


def v01_to_v02(
    predicate: dict[str, Any], losses: list[Loss], notes: list[Note] | None = None
) -> dict[str, Any]:
    """Provenance v0.1 predicate to v0.2 (spec, "Migrating from 0.1")."""
    out: dict[str, Any] = {}
    if "builder" in predicate:
        out["builder"] = predicate["builder"]
    recipe = predicate.get("recipe")
    materials = predicate.get("materials")
    material_list = materials if isinstance(materials, list) else []
    if isinstance(recipe, dict):
        if "type" in recipe:
            out["buildType"] = recipe["type"]
        invocation: dict[str, Any] = {}
        source: dict[str, Any] = {}
        index = recipe.get("definedInMaterial")
        if index is not None:
            where = child(child(_P, "recipe"), "definedInMaterial")
            if (
                isinstance(index, int)
                and not isinstance(index, bool)
                and 0 <= index < len(material_list)
            ):
                material = material_list[index]
                if isinstance(material, dict):
                    source.update({k: material[k] for k in ("uri", "digest") if k in material})
                if notes is not None:
                    notes.append(
                        Note(
                            where,
                            f"replaced by what it indexed: materials[{index}] became the"
                            " config source",
                        )
                    )
            else:
                losses.append(Loss(where, f"{index!r} does not index materials"))
        if "entryPoint" in recipe:
            source["entryPoint"] = recipe["entryPoint"]
        if source:
            invocation["configSource"] = source
        if recipe.get("arguments") is not None:
            invocation["parameters"] = recipe["arguments"]
        if recipe.get("environment") is not None:
            invocation["environment"] = recipe["environment"]
        if invocation:
            out["invocation"] = invocation
        known = frozenset({"type", "definedInMaterial", "entryPoint", "arguments", "environment"})
        _unknown(recipe, known, child(_P, "recipe"), losses)
    elif recipe is None:
        losses.append(Loss(child(_P, "recipe"), "unset: the build type is unknown"))
    metadata = predicate.get("metadata")
    if isinstance(metadata, dict):
        meta = {k: v for k, v in metadata.items() if k != "completeness"}
        completeness = metadata.get("completeness")
        if isinstance(completeness, dict):
            renamed = {
                ("parameters" if k == "arguments" else k): v for k, v in completeness.items()
            }
            meta["completeness"] = renamed
        out["metadata"] = meta
    if materials is not None:
        out["materials"] = materials
    # v0.2 names extensions by URI as v0.1 does: carry them across unchanged.
    known01 = frozenset({"builder", "recipe", "metadata", "materials"})
    out.update({k: v for k, v in predicate.items() if k not in known01})
    return out


def v02_to_v1(
    predicate: dict[str, Any], losses: list[Loss], notes: list[Note] | None = None
) -> dict[str, Any]:
    """Provenance v0.2 predicate to v1 (spec, "Migrating from 0.2")."""
    definition: dict[str, Any] = {}
    if "buildType" in predicate:
        definition["buildType"] = predicate["buildType"]
        if notes is not None:
            notes.append(
                Note(
                    child(_P, "buildType"),
                    "carried unchanged; a v1 buildType must describe how to read the v1 inputs",
                )
            )
    invocation = predicate.get("invocation")
    invocation = invocation if isinstance(invocation, dict) else {}
    source = invocation.get("configSource")
    source = source if isinstance(source, dict) else {}
    external: dict[str, Any] = {}
    parameters = invocation.get("parameters")
    if isinstance(parameters, dict):
        external.update(parameters)
    source_path = child(child(_P, "invocation"), "configSource")
    for name, key in (("entryPoint", "entryPoint"), ("source", "uri")):
        value = source.get(key)
        if is_empty(value):
            continue
        if name in external:
            losses.append(Loss(child(source_path, key), f"externalParameters already has {name!r}"))
        else:
            external[name] = value
    definition["externalParameters"] = external
    environment = invocation.get("environment")
    if not is_empty(environment):
        definition["internalParameters"] = environment
    dependencies: list[Any] = []
    materials = predicate.get("materials")
    if isinstance(materials, list):
        dependencies.extend(materials)
    config = {k: source[k] for k in ("uri", "digest") if not is_empty(source.get(k))}
    if config and config not in dependencies:
        dependencies.append(config)
    if dependencies:
        definition["resolvedDependencies"] = dependencies
    _unknown(source, frozenset({"uri", "digest", "entryPoint"}), source_path, losses)
    _unknown(
        invocation,
        frozenset({"configSource", "parameters", "environment"}),
        child(_P, "invocation"),
        losses,
    )

    run: dict[str, Any] = {}
    builder = predicate.get("builder")
    if isinstance(builder, dict):
        run["builder"] = {"id": builder["id"]} if "id" in builder else {}
        _unknown(builder, frozenset({"id"}), child(_P, "builder"), losses)
    metadata = predicate.get("metadata")
    if isinstance(metadata, dict):
        meta_path = child(_P, "metadata")
        renamed: dict[str, Any] = {}
        for old, new in (
            ("buildInvocationId", "invocationId"),
            ("buildStartedOn", "startedOn"),
            ("buildFinishedOn", "finishedOn"),
        ):
            if metadata.get(old) is not None:
                renamed[new] = metadata[old]
        if renamed:
            run["metadata"] = renamed
        for key in ("completeness", "reproducible"):
            if key in metadata:
                losses.append(Loss(child(meta_path, key), "removed in v1: implied by builder.id"))
        _unknown(
            metadata,
            frozenset(
                {
                    "buildInvocationId",
                    "buildStartedOn",
                    "buildFinishedOn",
                    "completeness",
                    "reproducible",
                }
            ),
            meta_path,
            losses,
        )
    if predicate.get("buildConfig") is not None:
        losses.append(
            Loss(
                child(_P, "buildConfig"),
                "removed in v1: record its digest under externalParameters.config if it was a"
                " top-level input, or in byproducts if its resolved form matters",
            )
        )
    known = frozenset(
        {"builder", "buildType", "invocation", "buildConfig", "metadata", "materials"}
    )
    _unknown(predicate, known, _P, losses)
    return {"buildDefinition": definition, "runDetails": run}
