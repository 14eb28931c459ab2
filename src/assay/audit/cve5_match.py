"""Findings beyond NVD's analysis: CVE 5 records (CISA-ADP and CNA), KEV and EPSS.

Since April 2026 NVD analyses few new CVEs: most carry no CPE configurations, so NVD's
matching (`assay.audit.matching`) cannot find them. `supplement(result, source)` adds,
for a store that holds CVE 5 records (`assay cve import|sync`):

* the CVEs NVD has not analysed (its record has no configurations, or the store has no
  NVD record) whose CVE 5 `affected[]` entries name a component: CISA-ADP's entries
  first (normalized CPEs, `source: cisa-adp`), then, where no ADP entry speaks of the
  component, the CNA's (`cpes`, `packageURL`, `collectionURL` + `packageName`, vendor and
  product, `source: cve5`: a lower confidence, since the CNA writes free text). A
  component's version is placed in each entry's `versions[]` (`version`, `lessThan`,
  `lessThanOrEqual`, `changes`, else `defaultStatus`) in its ecosystem's order
  (`assay.audit.versions`); only `affected` is a finding;
* to every finding (NVD's too): `kev` when NVD, the KEV catalogue or a CISA-ADP container
  says so, with the catalogue's dates (`kevDetail`), the EPSS score (`epss`), and where
  it comes from (`sources`);
* components the identification left unidentified but whose purl a CVE 5 record names
  (`packageURL`, a registry's `collectionURL` + `packageName`) become identified
  (`identifiedBy: purl`, confidence `CNA_PURL_CONFIDENCE`).

Pure but for the store's reads (a handful of batched queries per scan).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import orjson

from assay.audit.identify import readable_purl
from assay.audit.matching import nvd_cwes
from assay.audit.model import (
    ComponentResult,
    Cvss,
    Epss,
    FindingSource,
    Identification,
    KevDetail,
    ScanResult,
    Unidentified,
    Vulnerability,
    cwe_ids,
)
from assay.audit.severity import (
    CISA_ADP_ORG_ID,
    Rating,
    choose_severity,
    nvd_ratings,
    severity_of_score,
    with_rating,
)
from assay.audit.versions import compare_in
from assay.cve5.index import (
    affected_keys,
    cpe_key,
    cpe_vendor_product,
    purl_key,
    vendor_product_key,
)
from assay.cve5.ranges import AffectedMatch, entry_status
from assay.cve5.record import Affected, Container, CveRecord, read_record

__all__ = [
    "CNA_PURL_CONFIDENCE",
    "AffectedMatch",
    "component_keys",
    "describe",
    "entry_status",
    "supplement",
]

CNA_PURL_CONFIDENCE: Final = 0.7
CHUNK: Final = 200
# -- components ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Wanted:
    version: str
    ecosystem: str | None
    keys: frozenset[str]
    purl_keys: frozenset[str]

    def compare(self, a: str, b: str) -> int:
        return compare_in(self.ecosystem, a, b)


def component_keys(cpes: Iterable[str], purl: str | None) -> tuple[set[str], set[str]]:
    """The look-up keys of a component (`assay.cve5.index`): those of its CPE names, and
    those of its purl."""
    keys: set[str] = set()
    for text in cpes:
        found = cpe_vendor_product(text)
        if found is not None:
            keys.add(cpe_key(*found))
            keys.add(vendor_product_key(*found))
    parsed = readable_purl(purl)
    purl_keys = {purl_key(parsed.type, parsed.namespace, parsed.name)} if parsed else set()
    return keys, purl_keys


def _wanted(cpes: Iterable[str], version: str | None, purl: str | None) -> _Wanted | None:
    if not version:
        return None
    keys, purl_keys = component_keys(cpes, purl)
    if not keys and not purl_keys:
        return None
    parsed = readable_purl(purl)
    ecosystem = parsed.type if parsed else None
    return _Wanted(version, ecosystem, frozenset(keys | purl_keys), frozenset(purl_keys))


# -- records ------------------------------------------------------------------------


def _ratings(record: CveRecord) -> list[Rating]:
    found: list[Rating] = []
    for container in record.containers:
        origin = "cna" if container.kind == "cna" else "adp"
        for cvss in container.cvss:
            severity = cvss.severity or severity_of_score(cvss.base_score, cvss.version)
            found.append(Rating(origin, severity, Cvss(cvss.version, cvss.base_score, cvss.vector)))
    return found


def _source_name(container: Container) -> str:
    return "cisa-adp" if container.org_id == CISA_ADP_ORG_ID else "cve5"


def _cwes(record: CveRecord, nvd: Mapping[str, Any]) -> tuple[str, ...]:
    """The CWE ids of the CVE 5 containers, then NVD's, each once."""
    given = [cwe for container in record.containers for cwe, _ in container.cwes]
    return cwe_ids([*given, *nvd_cwes(nvd)])


def _adp_kev(record: CveRecord) -> str | None:
    for container in record.adp:
        if container.kev is not None:
            return container.kev.date_added or ""
    return None


class _Indexed:
    """A record's `affected[]` entries by look-up key, computed once per scan."""

    __slots__ = ("by_key", "nvd", "record")

    def __init__(self, record: CveRecord, nvd: Mapping[str, Any] | None = None) -> None:
        self.record = record
        self.nvd = nvd
        """NVD's record of the CVE (not analysed), if the store has one."""
        self.by_key: dict[str, list[tuple[int, Container, Affected]]] = {}
        order = 0
        for container in record.containers:
            for affected in container.affected:
                for key in affected_keys(affected):
                    self.by_key.setdefault(key, []).append((order, container, affected))
                order += 1

    def entries(self, keys: Iterable[str]) -> list[tuple[int, Container, Affected]]:
        found = {entry[0]: entry for key in keys for entry in self.by_key.get(key, ())}
        return [found[order] for order in sorted(found)]


def _judge(indexed: _Indexed, wanted: _Wanted) -> tuple[AffectedMatch, FindingSource] | None:
    """The finding (or not) of a record for a component: CISA-ADP's entries first."""
    entries = indexed.entries(wanted.keys)
    for tier in ("adp", "cna"):
        spoken = False
        for _, container, affected in entries:
            if container.kind != tier:
                continue
            spoken = True
            found = entry_status(affected, wanted.version, wanted.compare)
            if found.status == "affected":
                source = FindingSource(
                    _source_name(container), indexed.record.cve_id, affected.path
                )
                return found, source
        if spoken:
            return None  # the ADP's entries speak of the component and do not affect it
    return None


def _finding(
    record: CveRecord,
    nvd: Mapping[str, Any] | None,
    match: AffectedMatch,
    source: FindingSource,
) -> Vulnerability:
    nvd = nvd or {}  # (an empty NVD record has no ratings, CWEs or KEV mark)
    chosen = choose_severity([*_ratings(record), *nvd_ratings(nvd)])
    marked = _adp_kev(record)  # CISA-ADP's KEV mark (the catalogue's entry, when stored, wins)
    unrated = Vulnerability(
        id=record.cve_id,
        severity=None,
        cvss=None,
        kev=bool(nvd.get("cisaExploitAdd")) or marked is not None,
        kev_detail=KevDetail(marked or None) if marked is not None else None,
        cwes=_cwes(record, nvd),
        match_criteria_id=None,
        fixed_in=match.fixed_in,
        conditional=False,
        sources=(source,),
    )
    return with_rating(unrated, chosen)


# -- the pass -----------------------------------------------------------------------


def _store_of(source: object) -> Any:
    store = getattr(source, "store", None)
    return store if hasattr(store, "cve5_lookup") else None  # (None has no cve5_lookup)


def _nvd_records(store: Any, cve_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    from assay.nvd.cve_query import CveQuery

    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(cve_ids), CHUNK):
        chunk = tuple(cve_ids[start : start + CHUNK])
        for raw, _ in store.find_cves([CveQuery(cve_ids=chunk)]):
            record = orjson.loads(raw)
            found[str(record.get("id"))] = record
    return found


def _analysed(record: Mapping[str, Any] | None) -> bool:
    return bool(record and record.get("configurations"))


def holds_cve5(source: object) -> bool:
    """Whether `source` is a store holding CVE 5 records (`--sources cve5` is possible)."""
    store = _store_of(source)
    return store is not None and bool(store.count_cve5())


def supplement(
    result: ScanResult, source: object, *, min_confidence: float = 0.0, cve5: bool = True
) -> ScanResult:
    """`result` with the CVE 5 findings (unless `cve5` is False), KEV details, EPSS scores
    and sources added (see the module docstring); as it is, but for `sources`, when
    `source` has no store."""
    store = _store_of(source)
    components = list(result.components)
    unidentified = list(result.unidentified)
    if cve5 and holds_cve5(source):
        components, unidentified = _match(store, components, unidentified, min_confidence)
    ids = sorted({v.id for c in components for v in c.vulnerabilities})
    if store is not None and ids:
        components = _with_kev_and_epss(components, store.kev_entries(ids), store.epss_scores(ids))
    return replace(result, components=tuple(components), unidentified=tuple(unidentified))


def _with_kev_and_epss(
    components: list[ComponentResult], kev: Mapping[str, Any], epss: Mapping[str, Any]
) -> list[ComponentResult]:
    """The components with their findings' KEV details and EPSS scores."""
    if not (kev or epss):
        return components
    # Findings of one record and hit share one object (`scan._Findings`): annotated once.
    done: dict[int, Vulnerability] = {}

    def annotated(vulnerability: Vulnerability) -> Vulnerability:
        found = done.get(id(vulnerability))
        if found is None:
            found = done[id(vulnerability)] = _annotated(vulnerability, kev, epss)
        return found

    return [
        replace(c, vulnerabilities=tuple(map(annotated, c.vulnerabilities))) for c in components
    ]


def _annotated(
    vulnerability: Vulnerability, kev: Mapping[str, Any], epss: Mapping[str, Any]
) -> Vulnerability:
    entry = kev.get(vulnerability.id)
    scored = epss.get(vulnerability.id)
    if entry is None and scored is None:
        return vulnerability  # (most findings of a large scan: no copy)
    detail = vulnerability.kev_detail
    if entry is not None:
        detail = KevDetail(entry.date_added, entry.due_date, entry.ransomware)
    return replace(
        vulnerability,
        kev=vulnerability.kev or entry is not None,
        kev_detail=detail,
        epss=None if scored is None else Epss(scored[0].score, scored[0].percentile, scored[1]),
    )


def _all_wanted(
    components: Sequence[ComponentResult], unidentified: Sequence[Unidentified]
) -> dict[int, _Wanted]:
    """What to look for, by position: the components, then the unidentified ones (by
    their purl only), numbered after them."""
    wanted: dict[int, _Wanted] = {}
    for index, found in enumerate(components):
        item = _wanted(found.identification.cpes, found.component.version, found.component.purl)
        if item is not None:
            wanted[index] = item
    offset = len(components)
    for index, missing in enumerate(unidentified):
        item = _wanted((), missing.component.version, missing.component.purl)
        if item is not None and item.purl_keys:
            wanted[offset + index] = _Wanted(
                item.version, item.ecosystem, item.purl_keys, item.purl_keys
            )
    return wanted


def _fresh_records(store: Any, candidates: Sequence[str]) -> dict[str, _Indexed]:
    """The published CVE 5 records of the candidates NVD has not analysed."""
    nvd = _nvd_records(store, candidates)
    fresh = [cve_id for cve_id in candidates if not _analysed(nvd.get(cve_id))]
    records: dict[str, _Indexed] = {}
    for cve_id, raw in store.cve5_records(fresh).items():
        record = read_record(raw, f"stored CVE 5 record {cve_id}")
        if record.state == "PUBLISHED":
            records[cve_id] = _Indexed(record, nvd.get(cve_id))
    return records


def _found(
    wanted: Mapping[int, _Wanted], by_key: Mapping[str, list[str]], records: Mapping[str, _Indexed]
) -> dict[int, list[Vulnerability]]:
    """The findings of each wanted position."""
    added: dict[int, list[Vulnerability]] = {}
    for index, item in wanted.items():
        cve_ids = sorted({c for key in item.keys for c in by_key.get(key, ()) if c in records})
        for cve_id in cve_ids:
            indexed = records[cve_id]
            judged = _judge(indexed, item)
            if judged is not None:
                added.setdefault(index, []).append(_finding(indexed.record, indexed.nvd, *judged))
    return added


def _with_findings(current: ComponentResult, new: Sequence[Vulnerability]) -> ComponentResult:
    known = {v.id for v in current.vulnerabilities}
    extra = [v for v in new if v.id not in known]
    merged = sorted([*current.vulnerabilities, *extra], key=lambda v: v.id)
    return replace(current, vulnerabilities=tuple(merged))


_PROMOTED: Final = Identification(
    cpes=(),
    identified_by="purl",
    confidence=CNA_PURL_CONFIDENCE,
    reason="its purl names a package of CVE 5 records' affected[] entries",
)


def _promote(
    unidentified: list[Unidentified], found: Mapping[int, list[Vulnerability]]
) -> tuple[list[ComponentResult], list[Unidentified]]:
    """Unidentified components with findings (by position), identified by their purl."""
    promoted = [
        ComponentResult(
            unidentified[position].component,
            _PROMOTED,
            tuple(sorted(found[position], key=lambda v: v.id)),
            unidentified[position].source,
        )
        for position in sorted(found)
    ]
    left = [u for i, u in enumerate(unidentified) if i not in found]
    return promoted, left


def _cves_by_key(store: Any, wanted: Mapping[int, _Wanted]) -> dict[str, list[str]]:
    """The CVEs whose CVE 5 `affected[]` names each key the components are looked up by."""
    all_keys = sorted({key for item in wanted.values() for key in item.keys})
    by_key: dict[str, list[str]] = {}
    for key, cve_id in store.cve5_lookup(all_keys) if all_keys else ():
        by_key.setdefault(key, []).append(cve_id)
    return by_key


def _match(
    store: Any,
    components: list[ComponentResult],
    unidentified: list[Unidentified],
    min_confidence: float,
) -> tuple[list[ComponentResult], list[Unidentified]]:
    wanted = _all_wanted(components, unidentified)
    by_key = _cves_by_key(store, wanted)
    candidates = sorted({cve_id for ids in by_key.values() for cve_id in ids})
    if not candidates:
        return components, unidentified
    added = _found(wanted, by_key, _fresh_records(store, candidates))
    offset = len(components)
    for index, new in added.items():
        if index < offset:
            components[index] = _with_findings(components[index], new)
    if min_confidence > CNA_PURL_CONFIDENCE:
        return components, unidentified
    promoted, unidentified = _promote(
        unidentified, {i - offset: new for i, new in added.items() if i >= offset}
    )
    return components + promoted, unidentified


def _english(record: Mapping[str, Any]) -> str | None:
    """An NVD record's English description."""
    for description in record.get("descriptions") or ():
        if description.get("lang") == "en" and isinstance(description.get("value"), str):
            return str(description["value"])
    return None


def describe(source: object, cve_ids: Sequence[str]) -> dict[str, str]:
    """The English description of each CVE the store holds (NVD's, else the CNA's in the
    CVE 5 record); none for a source without a store."""
    store = _store_of(source)
    if store is None or not cve_ids:
        return {}
    nvd = _nvd_records(store, sorted(set(cve_ids)))
    found = {
        cve_id: text for cve_id, record in nvd.items() if (text := _english(record)) is not None
    }
    found.update(_cna_descriptions(store, [cve_id for cve_id in cve_ids if cve_id not in found]))
    return found


def _cna_descriptions(store: Any, cve_ids: Sequence[str]) -> dict[str, str]:
    """The CNA's description in each stored CVE 5 record (where it gives one)."""
    found: dict[str, str] = {}
    for cve_id, raw in store.cve5_records(cve_ids).items():
        text = read_record(raw, f"stored CVE 5 record {cve_id}").cna.description
        if text:
            found[cve_id] = text
    return found
