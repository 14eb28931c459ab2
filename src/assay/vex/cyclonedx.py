"""CycloneDX VEX: `vulnerabilities[].analysis` with `affects`, alone or inside a BOM (pure).

Each vulnerability with an `analysis.state` is a statement; one without is a finding
(a VDR entry), not a statement, and is skipped. `affects[].ref` is a `bom-ref` of the
same BOM (its component's purl and CPE name count too) or a BOM-Link
(`urn:cdx:SERIAL/VERSION#REF`) to another BOM's `bom-ref`; a fragment that is a purl
names that purl as well. `affects[].versions` is not read: the ref names a component of
one version already. The state is said in OpenVEX's words (`CYCLONEDX_STATUS`);
`detail` is the impact statement of a `not_affected` statement and, with `response`,
the action statement of an `affected` one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote

from assay.vex._fields import MAX_PRODUCTS, Fields, Origin, product_id
from assay.vex.model import (
    CYCLONEDX_STATUS,
    ProductId,
    ProductKind,
    VexStatement,
    VexStatus,
)

MAX_COMPONENT_DEPTH: Final = 32

JUSTIFICATION_TO_OPENVEX: Final = {
    "code_not_present": "vulnerable_code_not_present",
    "code_not_reachable": "vulnerable_code_not_in_execute_path",
    "requires_dependency": "component_not_present",
    "protected_by_compiler": "inline_mitigations_already_exist",
    "protected_at_runtime": "inline_mitigations_already_exist",
    "protected_by_mitigating_control": "inline_mitigations_already_exist",
    "protected_at_perimeter": "vulnerable_code_cannot_be_controlled_by_adversary",
    "requires_configuration": "vulnerable_code_cannot_be_controlled_by_adversary",
    "requires_environment": "vulnerable_code_cannot_be_controlled_by_adversary",
}
"""CycloneDX justifications in OpenVEX's five words (for writing OpenVEX), the nearest
meaning; the finding keeps CycloneDX's own word."""

OPENVEX_TO_JUSTIFICATION: Final = {
    "component_not_present": "requires_dependency",
    "vulnerable_code_not_present": "code_not_present",
    "vulnerable_code_not_in_execute_path": "code_not_reachable",
    "vulnerable_code_cannot_be_controlled_by_adversary": "protected_at_perimeter",
    "inline_mitigations_already_exist": "protected_by_mitigating_control",
}


def is_cyclonedx(document: Mapping[str, Any]) -> bool:
    return document.get("bomFormat") == "CycloneDX"


_COMPONENT_NAMES: Final[dict[str, ProductKind]] = {"purl": "purl", "cpe": "cpe"}


def _top_components(fields: Fields, bom: Mapping[str, Any]) -> list[tuple[Any, str, int]]:
    """The metadata component and the top-level components, with their paths and depth."""
    top: list[tuple[Any, str, int]] = []
    metadata = bom.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("component"), Mapping):
        top.append((metadata["component"], "$.metadata.component", 0))
    for index, item in enumerate(fields.array(bom.get("components"), "$.components", MAX_PRODUCTS)):
        top.append((item, f"$.components[{index}]", 0))
    return top


def _components(fields: Fields, bom: Mapping[str, Any]) -> dict[str, list[ProductId]]:
    """Every `bom-ref` of the BOM (metadata component and nested components) with the
    purl and CPE names of its component."""
    found: dict[str, list[ProductId]] = {}
    stack = _top_components(fields, bom)
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_COMPONENT_DEPTH:
            raise fields.fail(path, f"expected components nested at most {MAX_COMPONENT_DEPTH}")
        data = fields.mapping(item, path)
        names = fields.names(data, path, _COMPONENT_NAMES)
        ref = fields.string(data, "bom-ref", path)
        if ref is not None:
            found[ref] = names
        children = fields.array(data.get("components"), f"{path}.components", MAX_PRODUCTS)
        stack.extend(
            (child, f"{path}.components[{i}]", depth + 1) for i, child in enumerate(children)
        )
    return found


def _name(entity: object) -> str | None:
    if isinstance(entity, Mapping) and isinstance(entity.get("name"), str):
        return str(entity["name"])
    return None


def _author(metadata: Mapping[str, Any]) -> str | None:
    """The first named author, else the manufacturer (`manufacture` before CycloneDX
    1.6) or the supplier."""
    authors = metadata.get("authors")
    candidates = list(authors) if isinstance(authors, list) else []
    candidates += [metadata.get(key) for key in ("manufacturer", "manufacture", "supplier")]
    names = (_name(candidate) for candidate in candidates)
    return next((name for name in names if name is not None), None)


def read_cyclonedx(
    bom: Mapping[str, Any], source: str, first: int = 0
) -> tuple[dict[str, Any], tuple[VexStatement, ...]]:
    """The BOM's facts (`id`, `author`, `timestamp`, `specVersion`) and its statements."""
    fields = Fields(source)
    metadata_value = bom.get("metadata")
    metadata = fields.mapping(metadata_value, "$.metadata") if metadata_value is not None else {}
    origin = Origin(
        fields.string(bom, "serialNumber", "$") or source,
        _author(metadata),
        fields.time(metadata, "timestamp", "$.metadata"),
    )
    statements = _statements(fields, bom, origin)
    if not statements:
        raise fields.fail(
            "$.vulnerabilities", "expected vulnerabilities with an analysis (a VEX), found none"
        )
    statements = [_renumber(s, first + i) for i, s in enumerate(statements)]
    return origin.facts(str(bom.get("specVersion") or "")), tuple(statements)


def _statements(fields: Fields, bom: Mapping[str, Any], origin: Origin) -> list[VexStatement]:
    """A statement of each vulnerability that has an analysis, in order."""
    refs = _components(fields, bom)
    statements: list[VexStatement] = []
    items = fields.array(bom.get("vulnerabilities"), "$.vulnerabilities")
    for index, item in enumerate(items):
        path = f"$.vulnerabilities[{index}]"
        data = fields.mapping(item, path)
        analysis, state = _analysis(fields, data, path)
        if analysis is None or state is None:
            continue
        statements.append(_statement(fields, data, analysis, state, path, refs=refs, origin=origin))
    return statements


def _analysis(
    fields: Fields, data: Mapping[str, Any], path: str
) -> tuple[Mapping[str, Any] | None, str | None]:
    """A vulnerability's analysis and its state; a vulnerability without them is a
    finding, not a VEX statement."""
    value = data.get("analysis")
    if value is None:
        return None, None
    analysis = fields.mapping(value, f"{path}.analysis")
    return analysis, fields.string(analysis, "state", f"{path}.analysis")


def _renumber(statement: VexStatement, order: int) -> VexStatement:
    from dataclasses import replace

    return replace(statement, order=order)


def _aliases(fields: Fields, data: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """The ids of the vulnerability's `references[]`."""
    aliases = []
    for position, reference in enumerate(
        fields.array(data.get("references"), f"{path}.references", MAX_PRODUCTS)
    ):
        at = f"{path}.references[{position}]"
        alias = fields.string(fields.mapping(reference, at), "id", at)
        if alias is not None:
            aliases.append(alias)
    return tuple(aliases)


def _affected_products(
    fields: Fields,
    data: Mapping[str, Any],
    path: str,
    refs: dict[str, list[ProductId]],
    vulnerability: str,
) -> list[ProductId]:
    """The names of every product `affects[]` refers to (a statement names at least one)."""
    products: list[ProductId] = []
    for position, affected in enumerate(
        fields.array(data.get("affects"), f"{path}.affects", MAX_PRODUCTS)
    ):
        at = f"{path}.affects[{position}]"
        ref = fields.required(fields.mapping(affected, at), "ref", at)
        products.extend(_ref_products(ref, refs))
    if not products:
        raise fields.fail(f"{path}.affects", f"statement for {vulnerability} names no product")
    return products


def _status(fields: Fields, state: str, where: str) -> VexStatus:
    return CYCLONEDX_STATUS[fields.one_of(state, CYCLONEDX_STATUS, f"{where}.state")]


def _action(status: VexStatus, responses: tuple[str, ...], detail: str | None) -> str | None:
    """An action statement: the responses and the detail, of a status other than
    `not_affected` (whose detail is its impact statement)."""
    if status is VexStatus.NOT_AFFECTED or not (responses or detail):
        return None
    return "; ".join([*responses, *([detail] if detail else [])])


def _statement(
    fields: Fields,
    data: Mapping[str, Any],
    analysis: Mapping[str, Any],
    state: str,
    path: str,
    *,
    refs: dict[str, list[ProductId]],
    origin: Origin,
) -> VexStatement:
    where = f"{path}.analysis"
    status = _status(fields, state, where)
    vulnerability = fields.required(data, "id", path)
    aliases = _aliases(fields, data, path)
    justification = fields.string(analysis, "justification", where)
    detail = fields.string(analysis, "detail", where)
    responses = fields.strings(analysis, "response", where)
    fields.require_reason(
        status,
        (justification, detail),
        path,
        f"statement for {vulnerability} is {state} (not_affected) without a justification "
        "or a detail (an impact statement is required)",
    )
    products = _affected_products(fields, data, path, refs, vulnerability)
    updated = fields.time(analysis, "lastUpdated", where)
    issued = fields.time(analysis, "firstIssued", where)
    return VexStatement(
        vulnerability,
        aliases,
        tuple(dict.fromkeys(products)),
        status,
        justification,
        detail if status is VexStatus.NOT_AFFECTED else None,
        _action(status, responses, detail),
        updated or issued or origin.time,
        origin.doc_id,
        origin.author,
        f"{fields.source}: {path}",
    )


def _ref_products(ref: str, refs: dict[str, list[ProductId]]) -> list[ProductId]:
    local = ref
    if ref.startswith("urn:cdx:") and "#" in ref:
        local = unquote(ref.split("#", 1)[1])
    names = [ProductId("ref", local)]
    if local != ref:
        names.append(ProductId("ref", ref))
    names.extend(refs.get(local, refs.get(ref, [])))
    if local[:4].lower() in ("pkg:", "cpe:"):
        names.append(product_id(local))
    return names
