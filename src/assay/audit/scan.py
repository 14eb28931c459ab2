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

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Final

from assay.audit.cve5_match import holds_cve5, supplement
from assay.audit.identify import Identifier, readable_purl
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
    Component,
    ComponentResult,
    Identification,
    InputSummary,
    Inventory,
    ScanResult,
    SourceStatus,
    Unidentified,
    Vulnerability,
)
from assay.audit.osv_match import OsvLookup, OsvMatcher, component_package, merge_findings
from assay.audit.read_ahead import read_ahead
from assay.audit.records import RecordReader, ScanRecord
from assay.audit.source import Lookup, VulnerabilitySource
from assay.audit.versions import Comparator, comparator_for
from assay.errors import InputError
from assay.nvd.cpe import Cpe, parse_cpe
from assay.osv.names import PurlPackage

__all__ = ["SOURCES", "Progress", "available_sources", "scan", "scan_bytes"]

Progress = Callable[[int, int], None]
"""Called with (steps done, steps in all) as a scan goes: a step per component
identified, then a step per look-up (where the source reports them)."""


def _ordered_ecosystem(purl: str | None) -> str | None:
    """The ecosystem a purl names when its versions have a known order (else None)."""
    parsed = readable_purl(purl)
    ecosystem = parsed.type if parsed else None
    return ecosystem if comparator_for(ecosystem) is not None else None


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
        findings = _Findings(reader.read(raw))
        wanted = [lookups[i].name for i in indexes if not lookups[i].product_wide]
        if wanted:
            _match_names(plan, findings, set(wanted))
        for index in indexes:
            _match_components(findings, plan.judged_by_lookup.get(index, ()))


def _match_names(plan: _Plan, findings: _Findings, wanted: set[Cpe]) -> None:
    """The record's findings for names looked up alone (in NVD's version order)."""
    for name, (conditional, hit) in evaluate_names(findings.record.compiled, wanted).items():
        plan.by_name[name].append(findings.of(hit, conditional))


def _match_components(findings: _Findings, judged: Iterable[_Judged]) -> None:
    """The record's findings for components judged in their ecosystem's version order."""
    for item in judged:
        outcome = evaluate_record(findings.record.compiled, item.component, item.known)
        if outcome is not None:
            conditional, hit = outcome
            item.found.append(findings.of(hit, conditional))


SOURCES: Final = ("nvd", "osv", "cve5")
"""The sources a scan can read here (`--sources`): NVD's analysed CVEs, OSV records, and
the CVE 5 records (the CNA's and CISA-ADP's `affected[]`) of CVEs NVD has not analysed.
`assay.audit.osv_match` merges what they find."""


def available_sources(source: VulnerabilitySource, status: SourceStatus) -> tuple[str, ...]:
    """The sources `source` holds data of: NVD's CVEs, OSV records, CVE 5 records."""
    found: list[str] = []
    if status.cve_count is None or status.cve_count > 0:
        found.append("nvd")
    if status.osv_count:
        found.append("osv")
    if holds_cve5(source):
        found.append("cve5")
    return tuple(found)


@dataclass(frozen=True, slots=True)
class _Identified:
    """A component identified, with what its look-ups need."""

    component: Component
    identification: Identification
    package: PurlPackage | None
    ecosystem: str | None
    """Its purl type when that orders versions its own way (`comparator_for`)."""
    source: str


class _Osv:
    """The OSV side of a scan: the records of every package, fetched at once."""

    def __init__(self, matcher: OsvMatcher | None, packages: Sequence[PurlPackage | None]) -> None:
        self.matcher = matcher
        wanted = [p for p in packages if p is not None and p.version]
        self.known = matcher.load(wanted) if matcher is not None and wanted else set()

    def names(self, package: PurlPackage | None) -> bool:
        """Whether some OSV record names the (versioned) package."""
        return (
            package is not None
            and bool(package.version)
            and (package.ecosystem, package.name) in self.known
        )

    def why_not(self, package: PurlPackage | None) -> str:
        """What to add to an unidentified component's reason."""
        if package is None or self.matcher is None or not package.version:
            return ""
        return f"; no OSV record names {package.ecosystem} package {package.name!r}"

    def findings(self, item: _Identified) -> list[Vulnerability] | None:
        package = item.package
        if self.matcher is None or item.identification.osv_package is None or package is None:
            return None
        return self.matcher.findings(package, package.version or "")


class _Ticker:
    """Reports (done, total) every 50 components and at the end."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0

    def tick(self) -> None:
        self.done += 1
        if self.progress is not None and (self.done % 50 == 0 or self.done == self.total):
            self.progress(self.done, self.total)


def _check_sources(
    source: VulnerabilitySource, sources: Collection[str] | None
) -> tuple[SourceStatus, OsvMatcher | None]:
    """The source's status naming the sources a scan reads, and the OSV matcher if any."""
    status = source.status()
    used = tuple(available_sources(source, status) if sources is None else dict.fromkeys(sources))
    unknown = [name for name in used if name not in SOURCES]
    if unknown:
        raise InputError("sources", f"expected some of {', '.join(SOURCES)}, found {unknown[0]!r}")
    matcher = None
    if "osv" in used:
        if not isinstance(source, OsvLookup):
            raise InputError("sources", "osv: this vulnerability source holds no OSV records")
        matcher = OsvMatcher(source)
    return replace(status, sources=used), matcher


def _identify_all(
    inventories: Sequence[Inventory], identify: Callable[[Component], Identification | str],
    osv: _Osv, packages: list[PurlPackage | None], ticker: _Ticker,
) -> tuple[list[_Identified], list[Unidentified]]:  # fmt: skip
    """Every component identified (CPE names, OSV package) or listed with the reason."""
    identified: list[_Identified] = []
    unidentified: list[Unidentified] = []
    found = iter(packages)
    for inventory in inventories:
        for component in inventory.components:
            package = next(found)
            outcome = identify(component)
            if osv.names(package) and package is not None:
                outcome = _with_osv(outcome, package)
            if isinstance(outcome, str):
                reason = outcome + osv.why_not(package)
                unidentified.append(Unidentified(component, reason, inventory.source))
            else:
                ordered = _ordered_ecosystem(component.purl)
                identified.append(
                    _Identified(component, outcome, package, ordered, inventory.source)
                )
            ticker.tick()
    return identified, unidentified


def _plan(identified: Sequence[_Identified]) -> tuple[_Plan, list[Cpe]]:
    """The look-ups of every identified name, and the names."""
    plan = _Plan()
    names: list[Cpe] = []
    for item in identified:
        compare = comparator_for(item.ecosystem)
        for text in item.identification.cpes:
            name = parse_cpe(text, partial=True)
            names.append(name)
            plan.add(name, item.ecosystem, compare)
    return plan, names


def _look_up(plan: _Plan, names: list[Cpe], source: VulnerabilitySource, ticker: _Ticker) -> None:
    """Run the plan's look-ups, reporting a step per look-up after the components."""
    progress, total = ticker.progress, ticker.total
    steps = total + len(plan.lookups)
    report = None if progress is None else (lambda looked: progress(total + looked, steps))
    if plan.lookups:
        _match(plan, source, NameSet(names), report)
    if progress is not None:
        progress(steps, steps)


def _result(item: _Identified, plan: _Plan, osv: _Osv) -> ComponentResult:
    groups = [
        plan.findings(parse_cpe(text, partial=True), item.ecosystem)
        for text in item.identification.cpes
    ]
    from_osv = osv.findings(item)
    if from_osv is not None:
        groups.append(from_osv)
    return ComponentResult(item.component, item.identification, merge_findings(groups), item.source)


def scan(
    inventories: Sequence[Inventory],
    source: VulnerabilitySource,
    *,
    min_confidence: float = 0.0,
    progress: Progress | None = None,
    sources: Collection[str] | None = None,
) -> ScanResult:
    """Identify every component and find what affects it (see the module docstring).
    `sources`: which of `SOURCES` to read (default: every one `source` holds)."""
    if not 0.0 <= min_confidence <= 1.0:
        raise InputError("min_confidence", f"expected 0 to 1, found {min_confidence}")
    status, matcher = _check_sources(source, sources)
    packages = [component_package(c) for inventory in inventories for c in inventory.components]
    osv = _Osv(matcher, packages)
    identifier = Identifier(source)
    use_nvd = "nvd" in status.sources
    ticker = _Ticker(progress, len(packages))
    identified, unidentified = _identify_all(
        inventories,
        partial(_identify, identifier, min_confidence=min_confidence, use_nvd=use_nvd),
        osv,
        packages,
        ticker,
    )
    plan, names = _plan(identified)
    _look_up(plan, names, source, ticker)
    results = tuple(_result(item, plan, osv) for item in identified)
    summaries = tuple(
        InputSummary(i.source, i.format, len(i.components), i.verified, i.notes)
        for i in inventories
    )
    found = ScanResult(results, tuple(unidentified), status, summaries)
    # CVEs NVD has not analysed, KEV details, EPSS and sources (`assay.audit.cve5_match`).
    return supplement(found, source, min_confidence=min_confidence, cve5="cve5" in status.sources)


def _identify(
    identifier: Identifier, component: Component, *, min_confidence: float, use_nvd: bool
) -> Identification | str:
    """The component's CPE identification, or why it has none."""
    if not use_nvd:
        return "CPE names not looked up (NVD is not among the scan's sources)"
    outcome = identifier.identify(component)
    if isinstance(outcome, str) or outcome.confidence >= min_confidence:
        return outcome
    return (
        f"identified as {', '.join(outcome.cpes)} by {outcome.identified_by} "
        f"with confidence {outcome.confidence}, below the minimum {min_confidence}"
    )


def _with_osv(outcome: Identification | str, package: PurlPackage) -> Identification:
    """An identification that also names the OSV package of the purl (an exact match of
    ecosystem and name: confidence 1.0, whatever the CPE names' confidence)."""
    key = (package.ecosystem, package.name)
    why = f"OSV records name {package.ecosystem} package {package.name!r}"
    if isinstance(outcome, str):
        return Identification((), "purl", 1.0, f"{why}; no CPE name: {outcome}", key)
    return replace(outcome, confidence=1.0, reason=f"{outcome.reason}; {why}", osv_package=key)


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
