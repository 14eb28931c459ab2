"""A scan: inventories in, a `ScanResult` out (identification, look-up, evaluation).

    result = scan(read_input(data, "sbom.json"), StoreSource(store))

Every component of the inputs ends up either in `result.components` (identified at or
above `min_confidence`, with what affects it) or in `result.unidentified` (with the
reason): none is dropped.

Matching is batched. The look-ups of all components go to the source at once (one per
distinct CPE name; one per product for components whose ecosystem orders versions its
own way), which answers each record once with the look-ups that found it
(`VulnerabilitySource.find`: a store runs the server's own queries in one snapshot and
streams the records, read ahead by a thread: `assay.audit.read_ahead`). Each record is decoded once (`assay.audit.records`), and its
configurations are evaluated once for all the names that found it
(`assay.audit.matching.evaluate_names`); names of an ecosystem with its own version order
are judged one by one (`evaluate_record`). Only the findings are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from assay.audit.cve5_match import supplement
from assay.audit.identify import Identifier, parse_purl
from assay.audit.matching import (
    Compiler,
    ComponentName,
    Match,
    NameSet,
    evaluate_names,
    evaluate_record,
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
from assay.audit.read_ahead import read_ahead
from assay.audit.records import RecordReader, ScanRecord
from assay.audit.source import Lookup, VulnerabilitySource
from assay.audit.versions import Comparator, comparator_for
from assay.errors import InputError
from assay.nvd.cpe import Cpe, parse_cpe

__all__ = ["Progress", "scan", "scan_bytes"]

Progress = Callable[[int, int], None]
"""Called with (steps done, steps in all) as a scan goes: a step per component
identified, then a step per look-up (where the source reports them)."""


def _purl_type(purl: str | None) -> str | None:
    if not purl:
        return None
    try:
        return parse_purl(purl).type
    except InputError:
        return None


@dataclass(slots=True)
class _Judged:
    """A name judged in its ecosystem's version order (found by a product look-up)."""

    component: ComponentName
    known: dict[int, bool] = field(default_factory=dict)
    found: list[Vulnerability] = field(default_factory=list)


class _Plan:
    """The look-ups of a scan and where their answers go."""

    def __init__(self) -> None:
        self.lookups: list[Lookup] = []
        self._index: dict[Lookup, int] = {}
        self.by_name: dict[Cpe, list[Vulnerability]] = {}
        """Findings of names in NVD's version order."""
        self.judged: dict[tuple[Cpe, str], _Judged] = {}
        self.judged_by_lookup: dict[int, list[_Judged]] = {}

    def _lookup(self, lookup: Lookup) -> int:
        index = self._index.get(lookup)
        if index is None:
            index = self._index[lookup] = len(self.lookups)
            self.lookups.append(lookup)
        return index

    def add(self, name: Cpe, ecosystem: str | None, compare: Comparator | None) -> None:
        if compare is None or ecosystem is None:
            if name not in self.by_name:
                self.by_name[name] = []
                self._lookup(Lookup(name))
            return
        if (name, ecosystem) in self.judged:
            return
        judged = self.judged[(name, ecosystem)] = _Judged(ComponentName(name, compare))
        index = self._lookup(Lookup(name, product_wide=True))
        self.judged_by_lookup.setdefault(index, []).append(judged)

    def findings(self, name: Cpe, ecosystem: str | None) -> list[Vulnerability]:
        judged = self.judged.get((name, ecosystem)) if ecosystem is not None else None
        return judged.found if judged is not None else self.by_name.get(name, [])


class _Findings:
    """One record's findings, a `Vulnerability` made once per hit and outcome."""

    def __init__(self, record: ScanRecord) -> None:
        self.record = record
        self._made: dict[tuple[int, bool], Vulnerability] = {}

    def of(self, hit: Match, conditional: bool) -> Vulnerability:
        key = (id(hit), conditional)
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = vulnerability_facts(
                self.record.facts(), hit, conditional=conditional
            )
        return found


def _match(
    plan: _Plan, source: VulnerabilitySource, names: NameSet, report: Callable[[int], None] | None
) -> None:
    reader = RecordReader(Compiler(names))
    lookups = plan.lookups
    for raw, indexes in read_ahead(source.find(lookups, report)):
        record = reader.read(raw)
        findings = _Findings(record)
        wanted = [lookups[i].name for i in indexes if not lookups[i].product_wide]
        if wanted:
            for name, (conditional, hit) in evaluate_names(record.compiled, set(wanted)).items():
                plan.by_name[name].append(findings.of(hit, conditional))
        for index in indexes:
            for judged in plan.judged_by_lookup.get(index, ()):
                outcome = evaluate_record(record.compiled, judged.component, judged.known)
                if outcome is not None:
                    conditional, hit = outcome
                    judged.found.append(findings.of(hit, conditional))


def _merge(groups: Sequence[Sequence[Vulnerability]]) -> tuple[Vulnerability, ...]:
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
    done = 0
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
            done += 1
            if progress is not None and (done % 50 == 0 or done == total):
                progress(done, total)
    plan = _Plan()
    names: list[Cpe] = []
    ecosystems: list[str | None] = []
    for inventory, index, identification in identified:
        ecosystem = _purl_type(inventory.components[index].purl)
        compare = comparator_for(ecosystem)
        ecosystems.append(ecosystem if compare is not None else None)
        for text in identification.cpes:
            name = parse_cpe(text, partial=True)
            names.append(name)
            plan.add(name, ecosystem, compare)
    steps = total + len(plan.lookups)
    report = None if progress is None else (lambda looked: progress(total + looked, steps))
    _match(plan, source, NameSet(names), report)
    if progress is not None:
        progress(steps, steps)
    results: list[ComponentResult] = []
    for (inventory, index, identification), ecosystem in zip(identified, ecosystems, strict=True):
        groups = [
            plan.findings(parse_cpe(text, partial=True), ecosystem) for text in identification.cpes
        ]
        results.append(
            ComponentResult(
                inventory.components[index], identification, _merge(groups), inventory.source
            )
        )
    summaries = tuple(
        InputSummary(i.source, i.format, len(i.components), i.verified, i.notes)
        for i in inventories
    )
    found = ScanResult(tuple(results), tuple(unidentified), status, summaries)
    # CVEs NVD has not analysed, KEV details, EPSS and sources (`assay.audit.cve5_match`).
    return supplement(found, source, min_confidence=min_confidence)


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
