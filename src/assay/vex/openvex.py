"""OpenVEX 0.0.1 and 0.2.0 documents (pure).

0.0.1 names a vulnerability by a string and products by strings (with `subcomponents`
beside them); 0.2.0 uses objects (`vulnerability.name`/`aliases`, `products[].@id`/
`identifiers`/`subcomponents`). A product listed with subcomponents stands for those
subcomponents inside it: the statement is about them, so they are its products.

Refused, naming the statement: a status other than OpenVEX's four, a justification
outside OpenVEX's five, and a `not_affected` statement with neither a justification nor
an impact statement (OpenVEX: "MUST include one of justification or impact_statement").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from assay._json_strict import member
from assay.vex._fields import MAX_PRODUCTS, Fields, Origin, product_id
from assay.vex.model import (
    OPENVEX_JUSTIFICATIONS,
    ProductId,
    ProductKind,
    VexStatement,
    VexStatus,
)

CONTEXT_PREFIX: Final = "https://openvex.dev/ns"
_STATUSES: Final = {str(s): s for s in VexStatus}
_IDENTIFIERS: Final[dict[str, ProductKind]] = {"purl": "purl", "cpe23": "cpe", "cpe22": "cpe"}


def is_openvex(document: Mapping[str, Any]) -> bool:
    context = document.get("@context")
    return isinstance(context, str) and context.startswith(CONTEXT_PREFIX)


def spec_version(document: Mapping[str, Any]) -> str:
    """`0.0.1`, `0.2.0`, ... from the `@context` (a bare namespace is 0.0.1's)."""
    context = str(document.get("@context"))
    tail = context[len(CONTEXT_PREFIX) :].strip("/")
    return tail.removeprefix("v") if tail else "0.0.1"


def read_openvex(
    document: Mapping[str, Any], source: str, first: int = 0
) -> tuple[dict[str, Any], tuple[VexStatement, ...]]:
    """The document's facts (`id`, `author`, `timestamp`, `specVersion`) and its
    statements, numbered from `first`."""
    fields = Fields(source)
    doc_id = fields.string(document, "@id", "$") or source
    author = fields.string(document, "author", "$")
    created = fields.time(document, "timestamp", "$")
    origin = Origin(doc_id, author, fields.time(document, "last_updated", "$") or created)
    items = fields.array(document.get("statements"), "$.statements")
    statements = []
    for index, item in enumerate(items):
        path = f"$.statements[{index}]"
        item_fields = fields.mapping(item, path)
        statements.append(_statement(fields, item_fields, path, origin, order=first + index))
    return origin.facts(spec_version(document)), tuple(statements)


def _statement(
    fields: Fields,
    item: Mapping[str, Any],
    path: str,
    origin: Origin,
    *,
    order: int,
) -> VexStatement:
    vulnerability, aliases = _vulnerability(fields, item, path)
    status_text = fields.required(item, "status", path)
    status = _STATUSES[fields.one_of(status_text, _STATUSES, f"{path}.status")]
    justification = _justification(fields, item, path)
    impact = fields.string(item, "impact_statement", path)
    fields.require_reason(
        status,
        (justification, impact),
        path,
        f"statement for {vulnerability} is not_affected without a justification or an "
        "impact_statement (OpenVEX requires one)",
    )
    timestamp = fields.time(item, "timestamp", path)
    updated = fields.time(item, "last_updated", path)
    products = _products(fields, item, path)
    return VexStatement(
        vulnerability,
        aliases,
        products,
        status,
        justification,
        impact,
        fields.string(item, "action_statement", path),
        updated or timestamp or origin.time,
        origin.doc_id,
        fields.string(item, "supplier", path) or origin.author,
        f"{fields.source}: {path}",
        order,
    )


def _justification(fields: Fields, item: Mapping[str, Any], path: str) -> str | None:
    text = fields.string(item, "justification", path)
    return (
        None
        if text is None
        else fields.one_of(text, OPENVEX_JUSTIFICATIONS, f"{path}.justification")
    )


def _vulnerability(
    fields: Fields, item: Mapping[str, Any], path: str
) -> tuple[str, tuple[str, ...]]:
    value = item.get("vulnerability")
    aliases = list(fields.strings(item, "aliases", path))  # 0.0.1 kept them beside
    if isinstance(value, str) and value:
        return value, tuple(aliases)
    where = f"{path}.vulnerability"
    data = fields.mapping(value, where)
    name = fields.string(data, "name", where) or fields.string(data, "@id", where)
    if name is None:
        raise fields.fail(f"{where}.name", "expected the vulnerability's name, found none")
    aliases.extend(fields.strings(data, "aliases", where))
    return name, tuple(aliases)


def _products(fields: Fields, item: Mapping[str, Any], path: str) -> tuple[ProductId, ...]:
    found: list[ProductId] = []
    products = fields.array(item.get("products"), f"{path}.products", MAX_PRODUCTS)
    loose = fields.strings(item, "subcomponents", path)  # 0.0.1: beside the products
    for index, product in enumerate(products):
        found.extend(_listed(fields, product, f"{path}.products[{index}]", bool(loose)))
    found.extend(product_id(text) for text in loose)
    return tuple(dict.fromkeys(found))


def _listed(fields: Fields, product: object, where: str, loose: bool) -> list[ProductId]:
    """The names a listed product stands for: its subcomponents when it has some, else
    its own names (unless subcomponents beside the products, 0.0.1's way, replace it)."""
    if isinstance(product, str):
        return [] if loose else [product_id(product)]
    data = fields.mapping(product, where)
    subs = fields.array(data.get("subcomponents"), f"{where}.subcomponents", MAX_PRODUCTS)
    if not subs:
        return [] if loose else _identifiers(fields, data, where)
    found: list[ProductId] = []
    for position, sub in enumerate(subs):
        at = f"{where}.subcomponents[{position}]"
        found.extend(_identifiers(fields, fields.mapping(sub, at), at))
    return found


def _identifiers(fields: Fields, data: Mapping[str, Any], path: str) -> list[ProductId]:
    names: list[ProductId] = []
    own = fields.string(data, "@id", path)
    if own is not None:
        names.append(product_id(own))
    identifiers = data.get("identifiers")
    if identifiers is not None:
        where = member(path, "identifiers")
        names.extend(fields.names(fields.mapping(identifiers, where), where, _IDENTIFIERS))
    return names
