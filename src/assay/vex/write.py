"""VEX out: OpenVEX 0.2.0 documents from statements, and the vexctl-style operations.

    document = openvex_document(statements, author="ACME PSIRT", now=now)
    merged = merge_statements(documents, products=["pkg:pypi/lib"], vulnerabilities=[])
    kept, dropped = filter_sarif(sarif, VexIndex(documents), products=[])

Pure. Statements are written in OpenVEX's words whatever their origin: a CycloneDX
justification becomes the nearest of OpenVEX's five (`JUSTIFICATION_TO_OPENVEX`; a
CSAF flag already is one). A document's `@id` is derived from its content
(`urn:assay:vex:<sha256>`) unless one is given, so writing the same statements twice
gives the same document. Merging keeps every statement of every document, ordered by
time (then by the order given), as `vexctl merge` does; `--product` and `--vuln` keep
only the statements that name one of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from assay.vex.cyclonedx import JUSTIFICATION_TO_OPENVEX
from assay.vex.match import EARLIEST, ComponentNames, VexIndex, parse_purl, purl_matches
from assay.vex.model import (
    OPENVEX_JUSTIFICATIONS,
    SUPPRESSING,
    ProductId,
    VexDocument,
    VexError,
    VexStatement,
    VexStatus,
    format_time,
)

__all__ = [
    "OPENVEX_CONTEXT",
    "filter_sarif",
    "merge_statements",
    "new_statement",
    "openvex_document",
    "openvex_justification",
]

OPENVEX_CONTEXT: Final = "https://openvex.dev/ns/v0.2.0"
ID_PREFIX: Final = "urn:assay:vex:"


def openvex_justification(text: str | None) -> str | None:
    """A justification in OpenVEX's words (None when it has no OpenVEX counterpart)."""
    if text is None or text in OPENVEX_JUSTIFICATIONS:
        return text
    return JUSTIFICATION_TO_OPENVEX.get(text)


def _product(product: ProductId) -> dict[str, Any]:
    entry: dict[str, Any] = {"@id": product.value}
    if product.kind == "purl":
        entry["identifiers"] = {"purl": product.value}
    elif product.kind == "cpe":
        entry["identifiers"] = {
            "cpe23" if product.value.startswith("cpe:2.3:") else "cpe22": product.value
        }
    return entry


def _vulnerability(statement: VexStatement) -> dict[str, Any]:
    vulnerability: dict[str, Any] = {"name": statement.vulnerability}
    if statement.aliases:
        vulnerability["aliases"] = list(statement.aliases)
    return vulnerability


def _not_affected_fields(statement: VexStatement) -> dict[str, Any]:
    """A not_affected statement's justification and impact; a justification with no
    OpenVEX counterpart is kept as the impact statement."""
    justification = openvex_justification(statement.justification)
    impact = statement.impact
    if impact is None and justification is None and statement.justification:
        impact = f"justification: {statement.justification}"
    fields = {"justification": justification, "impact_statement": impact}
    return {key: value for key, value in fields.items() if value is not None}


def _action_fields(statement: VexStatement) -> dict[str, Any]:
    """The action statement: OpenVEX's `action_statement` belongs to affected statements
    only, so other statuses keep it as `status_notes`."""
    if not statement.action_statement:
        return {}
    key = "action_statement" if statement.status is VexStatus.AFFECTED else "status_notes"
    return {key: statement.action_statement}


def _statement(statement: VexStatement) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "vulnerability": _vulnerability(statement),
        "products": [_product(p) for p in statement.products],
        "status": str(statement.status),
    }
    if statement.timestamp is not None:
        entry["timestamp"] = format_time(statement.timestamp)
    if statement.status is VexStatus.NOT_AFFECTED:
        entry.update(_not_affected_fields(statement))
    entry.update(_action_fields(statement))
    return entry


def _content_id(document: Mapping[str, Any]) -> str:
    """`urn:assay:vex:<sha256>` of the document without its `@id` and timestamp."""
    canonical = json.dumps(
        {k: v for k, v in document.items() if k not in ("@id", "timestamp")},
        sort_keys=True,
        separators=(",", ":"),
    ).encode()
    return ID_PREFIX + hashlib.sha256(canonical).hexdigest()


def openvex_document(
    statements: Iterable[VexStatement],
    *,
    author: str,
    now: datetime,
    doc_id: str | None = None,
    role: str | None = None,
    tooling: str | None = None,
    version: int = 1,
) -> dict[str, Any]:
    """An OpenVEX 0.2.0 document of the statements (see the module docstring)."""
    body = [_statement(s) for s in statements]
    document: dict[str, Any] = {"@context": OPENVEX_CONTEXT, "@id": ""}
    document["author"] = author
    if role:
        document["role"] = role
    document["timestamp"] = format_time(now)
    document["version"] = version
    if tooling:
        document["tooling"] = tooling
    document["statements"] = body
    document["@id"] = _content_id(document) if doc_id is None else doc_id
    return document


def _status(text: str) -> VexStatus:
    try:
        return VexStatus(text)
    except ValueError:
        raise VexError(
            "status", f"expected one of {', '.join(map(str, VexStatus))}, found {text!r}"
        ) from None


def _check_parts(
    state: VexStatus,
    products: Sequence[str],
    justification: str | None,
    impact: str | None,
    action: str | None,
) -> None:
    """Refuses parts that a reader would refuse in a document, naming the field."""
    problems = (
        (not products, "products", "expected at least one product"),
        (
            justification is not None and justification not in OPENVEX_JUSTIFICATIONS,
            "justification",
            f"expected one of {', '.join(OPENVEX_JUSTIFICATIONS)}, found {justification!r}",
        ),
        (
            state is VexStatus.NOT_AFFECTED and justification is None and impact is None,
            "justification",
            "a not_affected statement needs a justification or an impact statement",
        ),
        (
            state is VexStatus.AFFECTED and not action,
            "action_statement",
            "an affected statement needs an action statement",
        ),
    )
    for failed, field, message in problems:
        if failed:
            raise VexError(field, message)


def new_statement(
    *,
    vulnerability: str,
    products: Sequence[str],
    status: str,
    justification: str | None = None,
    impact: str | None = None,
    action: str | None = None,
    aliases: Sequence[str] = (),
    subcomponents: Sequence[str] = (),
    now: datetime | None = None,
) -> VexStatement:
    """One statement from its parts, checked as a reader checks what it reads
    (`vexctl create`'s flags: `--product`, `--vuln`, `--status`, `--justification`,
    `--impact-statement`, `--action-statement`, `--subcomponents`)."""
    from assay.vex._fields import product_id

    state = _status(status)
    _check_parts(state, products, justification, impact, action)
    named = [product_id(p) for p in (subcomponents or products)]
    return VexStatement(
        vulnerability,
        tuple(aliases),
        tuple(named),
        state,
        justification,
        impact,
        action,
        now,
    )


def _same_package(text: str, product: ProductId) -> bool:
    """Whether a wanted product is the statement's product: the same text, or purls
    that match either way."""
    if product.value == text:
        return True
    target = parse_purl(text)
    found = parse_purl(product.value) if product.kind == "purl" else None
    if target is None or found is None:
        return False
    return purl_matches(target, found) or purl_matches(found, target)


def _names_product(statement: VexStatement, wanted: Sequence[str]) -> bool:
    return any(_same_package(text, p) for text in wanted for p in statement.products)


def _wanted(statement: VexStatement, vulnerabilities: set[str], products: Sequence[str]) -> bool:
    """Whether a statement names one of the (upper-cased) vulnerabilities and one of the
    products; an empty filter keeps every statement."""
    if vulnerabilities and not any(i.upper() in vulnerabilities for i in statement.ids):
        return False
    return not products or _names_product(statement, products)


def merge_statements(
    documents: Sequence[VexDocument],
    *,
    products: Sequence[str] = (),
    vulnerabilities: Sequence[str] = (),
) -> list[VexStatement]:
    """Every statement of the documents, oldest first, filtered as asked."""
    wanted = {v.upper() for v in vulnerabilities}
    found = [s for d in documents for s in d.statements if _wanted(s, wanted, products)]
    return sorted(found, key=lambda s: (s.timestamp or EARLIEST, s.order))


def _logical_names(location: object) -> list[ComponentNames]:
    """The components a SARIF location names (its logical locations)."""
    logicals = location.get("logicalLocations") if isinstance(location, Mapping) else None
    return [
        ComponentNames(str(logical.get("name") or ""), _purl(logical.get("fullyQualifiedName")))
        for logical in logicals or []
        if isinstance(logical, Mapping)
    ]


def _purl(text: object) -> str | None:
    """`text` when it is a package URL."""
    return text if isinstance(text, str) and text.startswith("pkg:") else None


def _sarif_names(result: Mapping[str, Any], products: Sequence[str]) -> list[ComponentNames]:
    if products:
        return [ComponentNames(p, _purl(p)) for p in products]
    return [n for location in result.get("locations") or [] for n in _logical_names(location)]


def _suppresses(verdict: tuple[VexStatement, VexDocument] | None) -> bool:
    return verdict is not None and verdict[0].status in SUPPRESSING


def _suppressed(result: object, index: VexIndex, products: Sequence[str]) -> bool:
    """Whether VEX says a SARIF result's finding is `not_affected` or `fixed` for every
    product it names (by its rule id alone when it names none)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("ruleId"), str):
        return False
    ids = (result["ruleId"],)
    names = _sarif_names(result, products)
    if not names:
        return _suppresses(index.any_statement_for(ids))
    return all(_suppresses(index.statement_for(ids, n)) for n in names)


def filter_sarif(
    sarif: Mapping[str, Any], index: VexIndex, *, products: Sequence[str] = ()
) -> tuple[dict[str, Any], int]:
    """The SARIF log without the results VEX says are `not_affected` or `fixed`, and how
    many were dropped. A result's product is `products` when given, else its logical
    locations (assay's SARIF names each component); a result with neither is matched by
    its rule id alone, as `vexctl filter` does."""
    filtered = [_filtered_run(run, index, products) for run in sarif.get("runs") or []]
    runs = [run for run, _ in filtered]
    return {**sarif, "runs": runs}, sum(dropped for _, dropped in filtered)


def _filtered_run(run: Any, index: VexIndex, products: Sequence[str]) -> tuple[Any, int]:
    """A SARIF run without its suppressed results, and how many it lost (a run that is
    not an object is kept as it is)."""
    if not isinstance(run, Mapping):
        return run, 0
    results = run.get("results") or []
    kept = [result for result in results if not _suppressed(result, index, products)]
    return {**run, "results": kept}, len(results) - len(kept)
