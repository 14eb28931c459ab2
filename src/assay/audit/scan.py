"""A scan: inventories in, a `ScanResult` out (identification, look-up, evaluation).

    result = scan(read_input(data, "sbom.json"), StoreSource(store))

Every component of the inputs ends up either in `result.components` (identified at or
above `min_confidence`, with what affects it) or in `result.unidentified` (with the
reason): none is dropped. Look-ups go to the source once per distinct CPE name (once
per product for components whose ecosystem orders versions its own way).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from assay.audit.identify import Identifier, parse_purl
from assay.audit.matching import (
    Compiled,
    ComponentName,
    NameSet,
    RecordFacts,
    compile_record,
    evaluate_record,
    record_facts,
    vulnerability_facts,
)
from assay.audit.model import (
    ComponentResult,
    Identification,
    InputSummary,
    Inventory,
    ScanResult,
    Unidentified,
    Vulnerability,
)
from assay.audit.source import Record, VulnerabilitySource
from assay.audit.versions import comparator_for
from assay.errors import InputError
from assay.nvd.cpe import Cpe, parse_cpe

__all__ = ["Progress", "scan", "scan_bytes"]

Progress = Callable[[int, int], None]
"""Called with (components done, components in all) as a scan goes."""

PRODUCT_CACHE: Final = 64
RECORD_CACHE: Final = 32_768


def _purl_type(purl: str | None) -> str | None:
    if not purl:
        return None
    try:
        return parse_purl(purl).type
    except InputError:
        return None


class _Matcher:
    def __init__(self, source: VulnerabilitySource, names: NameSet) -> None:
        self.source = source
        self.names = names
        self._results: dict[tuple[str, str | None], tuple[Vulnerability, ...]] = {}
        self._products: OrderedDict[tuple[str, str, str], Sequence[Record]] = OrderedDict()
        self._compiled: OrderedDict[str, tuple[Compiled, RecordFacts]] = OrderedDict()

    def _compile(self, record: Record) -> tuple[Compiled, RecordFacts]:
        key = str(record.get("id"))
        found = self._compiled.get(key)
        if found is None:
            found = (compile_record(record), record_facts(record))
            self._compiled[key] = found
            if len(self._compiled) > RECORD_CACHE:
                self._compiled.popitem(last=False)
        return found

    def _product_records(self, cpe: Cpe) -> Sequence[Record]:
        key = (cpe.part, cpe.vendor, cpe.product)
        found = self._products.get(key)
        if found is None:
            found = self.source.of_product(*key)
            self._products[key] = found
            if len(self._products) > PRODUCT_CACHE:
                self._products.popitem(last=False)
        else:
            self._products.move_to_end(key)
        return found

    def vulnerabilities(self, cpe: Cpe, ecosystem: str | None) -> tuple[Vulnerability, ...]:
        compare = comparator_for(ecosystem)
        key = (cpe.formatted(), ecosystem if compare is not None else None)
        cached = self._results.get(key)
        if cached is not None:
            return cached
        records = self._product_records(cpe) if compare is not None else self.source.affecting(cpe)
        component = ComponentName(cpe, compare)
        found: list[Vulnerability] = []
        known: dict[int, bool] = {}
        for record in records:
            compiled, facts = self._compile(record)
            outcome = evaluate_record(compiled, component, self.names, known)
            if outcome is not None:
                conditional, criteria, criteria_id = outcome
                found.append(
                    vulnerability_facts(facts, criteria, criteria_id, conditional=conditional)
                )
        result = tuple(found)
        self._results[key] = result
        return result


def _merge(groups: Sequence[tuple[Vulnerability, ...]]) -> tuple[Vulnerability, ...]:
    by_id: dict[str, Vulnerability] = {}
    for group in groups:
        for vulnerability in group:
            known = by_id.get(vulnerability.id)
            if known is None or (known.conditional and not vulnerability.conditional):
                by_id[vulnerability.id] = vulnerability
    return tuple(sorted(by_id.values(), key=lambda v: v.id))


def scan(
    inventories: Sequence[Inventory],
    source: VulnerabilitySource,
    *,
    min_confidence: float = 0.0,
    progress: Progress | None = None,
) -> ScanResult:
    """Identify every component and find what affects it (see the module docstring)."""
    if not 0.0 <= min_confidence <= 1.0:
        raise InputError("min_confidence", f"expected 0 to 1, found {min_confidence}")
    status = source.status()
    identifier = Identifier(source)
    total = sum(len(inventory.components) for inventory in inventories)
    identified: list[tuple[Inventory, int, Identification]] = []
    unidentified: list[Unidentified] = []
    for inventory in inventories:
        for index, component in enumerate(inventory.components):
            outcome = identifier.identify(component)
            if isinstance(outcome, str):
                unidentified.append(Unidentified(component, outcome, inventory.source))
            elif outcome.confidence < min_confidence:
                unidentified.append(
                    Unidentified(
                        component,
                        f"identified as {', '.join(outcome.cpes)} by {outcome.identified_by} "
                        f"with confidence {outcome.confidence}, below the minimum "
                        f"{min_confidence}",
                        inventory.source,
                    )
                )
            else:
                identified.append((inventory, index, outcome))
    names = NameSet(
        parse_cpe(text, partial=True) for _, _, ident in identified for text in ident.cpes
    )
    matcher = _Matcher(source, names)
    results: list[ComponentResult] = []
    for done, (inventory, index, identification) in enumerate(identified, start=1):
        component = inventory.components[index]
        ecosystem = _purl_type(component.purl)
        groups = [
            matcher.vulnerabilities(parse_cpe(text, partial=True), ecosystem)
            for text in identification.cpes
        ]
        results.append(ComponentResult(component, identification, _merge(groups), inventory.source))
        if progress is not None and (done % 50 == 0 or done == len(identified)):
            progress(done + len(unidentified), total)
    summaries = tuple(
        InputSummary(i.source, i.format, len(i.components), i.verified, i.notes)
        for i in inventories
    )
    return ScanResult(tuple(results), tuple(unidentified), status, summaries)


def scan_bytes(
    data: bytes,
    filename: str,
    source: VulnerabilitySource,
    *,
    min_confidence: float = 0.0,
) -> ScanResult:
    """Read one input (any supported format, see `assay.audit.inputs`) and scan it."""
    from assay.audit.inputs import read_input

    return scan([read_input(data, filename)], source, min_confidence=min_confidence)
