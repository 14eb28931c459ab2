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
from assay.vex._fields import MAX_PRODUCTS, Fields, product_id
from assay.vex.model import (
    OPENVEX_JUSTIFICATIONS,
    ProductId,
    VexStatement,
    VexStatus,
    parse_time,
)

CONTEXT_PREFIX: Final = "https://openvex.dev/ns"
_STATUSES: Final = {str(s): s for s in VexStatus}


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
    """The document's facts (`id`, `author`, `timestamp`) and its statements, numbered
    from `first`."""
    fields = Fields(source)
    doc_id = fields.string(document, "@id", "$") or source
    author = fields.string(document, "author", "$")
    doc_time = parse_time(document.get("timestamp"), f"{source}: $.timestamp")
    if "last_updated" in document:
        doc_time = parse_time(document.get("last_updated"), f"{source}: $.last_updated") or doc_time
    items = fields.array(document.get("statements"), "$.statements")
    statements = []
    for index, item in enumerate(items):
        path = f"$.statements[{index}]"
        statements.append(
            _statement(
                fields,
                fields.mapping(item, path),
                path,
                doc_id=doc_id,
                author=author,
                doc_time=doc_time,
                order=first + index,
            )
        )
    facts = {"id": doc_id, "author": author, "timestamp": doc_time}
    return facts, tuple(statements)


def _statement(
    fields: Fields,
    item: Mapping[str, Any],
    path: str,
    *,
    doc_id: str,
    author: str | None,
    doc_time: Any,
    order: int,
) -> VexStatement:
    vulnerability, aliases = _vulnerability(fields, item, path)
    status_text = fields.required(item, "status", path)
    status = _STATUSES.get(status_text)
    if status is None:
        raise fields.fail(
            f"{path}.status",
            f"expected one of {', '.join(_STATUSES)}, found {status_text!r}",
        )
    justification = fields.string(item, "justification", path)
    if justification is not None and justification not in OPENVEX_JUSTIFICATIONS:
        raise fields.fail(
            f"{path}.justification",
            f"expected one of {', '.join(OPENVEX_JUSTIFICATIONS)}, found {justification!r}",
        )
    impact = fields.string(item, "impact_statement", path)
    if status is VexStatus.NOT_AFFECTED and justification is None and impact is None:
        raise fields.fail(
            path,
            f"statement for {vulnerability} is not_affected without a justification or an "
            "impact_statement (OpenVEX requires one)",
        )
    timestamp = parse_time(item.get("timestamp"), f"{fields.source}: {path}.timestamp")
    updated = parse_time(item.get("last_updated"), f"{fields.source}: {path}.last_updated")
    products = _products(fields, item, path)
    return VexStatement(
        vulnerability,
        aliases,
        products,
        status,
        justification,
        impact,
        fields.string(item, "action_statement", path),
        updated or timestamp or doc_time,
        doc_id,
        fields.string(item, "supplier", path) or author,
        f"{fields.source}: {path}",
        order,
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
        where = f"{path}.products[{index}]"
        if isinstance(product, str):
            if not loose:
                found.append(product_id(product))
            continue
        data = fields.mapping(product, where)
        subs = fields.array(data.get("subcomponents"), f"{where}.subcomponents", MAX_PRODUCTS)
        if subs:
            for position, sub in enumerate(subs):
                at = f"{where}.subcomponents[{position}]"
                found.extend(_identifiers(fields, fields.mapping(sub, at), at))
        elif not loose:
            found.extend(_identifiers(fields, data, where))
    found.extend(product_id(text) for text in loose)
    return tuple(dict.fromkeys(found))


def _identifiers(fields: Fields, data: Mapping[str, Any], path: str) -> list[ProductId]:
    names: list[ProductId] = []
    own = fields.string(data, "@id", path)
    if own is not None:
        names.append(product_id(own))
    identifiers = data.get("identifiers")
    if identifiers is not None:
        where = member(path, "identifiers")
        ids = fields.mapping(identifiers, where)
        purl = fields.string(ids, "purl", where)
        if purl is not None:
            names.append(ProductId("purl", purl))
        for key in ("cpe23", "cpe22"):
            cpe = fields.string(ids, key, where)
            if cpe is not None:
                names.append(ProductId("cpe", cpe))
    return names
