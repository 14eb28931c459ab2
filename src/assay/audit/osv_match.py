"""Components with a purl against OSV records, and findings of several sources as one.

    lookup = OsvMatcher(source)              # a source that holds OSV records
    known = lookup.load([package, ...])      # one query for every package of the scan
    found = lookup.findings(package, "2.0.1")

A purl names an OSV package (`assay.osv.names.package_of_purl`: `pkg:pypi/URLLib3` is
PyPI `urllib3`, `pkg:maven/org.x/y` is Maven `org.x:y`); each record whose `affected[]`
names that package (same ecosystem, same normalized name) is evaluated as the OSV schema
says (`assay.osv.evaluate`), and each record that affects the version is a finding
whose rule names the `affected[]` entry and its range.

`merge_findings` makes one finding of all those about one vulnerability: findings are
the same vulnerability when their ids or aliases meet (a GHSA and a PYSEC record that
both alias CVE-2023-43804, and NVD's CVE-2023-43804). The merged finding's `id` is the
CVE where there is one, its `aliases` every other id, its severity the one
`assay.audit.severity.choose_severity` takes from all of them, its `sources` all of
theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, runtime_checkable

from assay.audit.model import Component, Cvss, FindingSource, Vulnerability, cwe_ids
from assay.audit.severity import (
    Rating,
    choose_severity,
    cvss3_base_score,
    severity_of_score,
    severity_word,
    with_rating,
)
from assay.errors import InputError
from assay.osv.evaluate import Hit, record_hit
from assay.osv.names import PurlPackage, package_of_purl
from assay.osv.record import Affected, OsvRecord, matching_view, stored_record

__all__ = ["OsvLookup", "OsvMatcher", "component_package", "merge_findings", "osv_findings"]

PackageKey = tuple[str, str]
_CVSS_TYPES: Final = {"CVSS_V3": "3.1", "CVSS_V4": "4.0", "CVSS_V2": "2.0"}
_SOURCE_RANK: Final = {"nvd": 0, "cve5": 1, "cisa-adp": 2, "osv": 3}


@runtime_checkable
class OsvLookup(Protocol):
    """A source that holds OSV records (a store: `assay.nvd.storage.Store`)."""

    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> Mapping[tuple[str, str], Sequence[bytes]]: ...

    def count_osv(self) -> int: ...


def component_package(component: Component) -> PurlPackage | None:
    """The OSV package (and version) a component's purl names, if its type has an OSV
    ecosystem; the component's own version wins over the purl's."""
    if not component.purl:
        return None
    try:
        package = package_of_purl(component.purl)
    except InputError:
        return None
    if package is None:
        return None
    version = component.version or package.version
    return PurlPackage(package.ecosystem, package.name, version)


class OsvMatcher:
    """The OSV records of a scan's packages, read once, each record decoded once."""

    def __init__(self, lookup: OsvLookup) -> None:
        self._lookup = lookup
        self._raw: dict[PackageKey, Sequence[bytes]] = {}
        self._decoded: dict[bytes, OsvRecord] = {}
        self._views: dict[bytes, OsvRecord] = {}

    def load(self, packages: Sequence[PurlPackage]) -> set[PackageKey]:
        """Fetch the records of every package; the keys of those some record names."""
        keys = list(dict.fromkeys((p.ecosystem, p.name) for p in packages))
        if keys:
            self._raw.update(self._lookup.osv_for_packages(keys))
        return {key for key in keys if self._raw.get(key)}

    def findings(self, package: PurlPackage, version: str) -> list[Vulnerability]:
        """A finding for each record that affects `version` of `package` (records are
        first read for matching only, and in whole when they affect it)."""
        found: list[Vulnerability] = []
        for raw in self._raw.get((package.ecosystem, package.name), ()):
            view = self._views.get(raw)
            if view is None:
                view = self._views[raw] = matching_view(raw)
            hit = record_hit(view, package.ecosystem, package.name, version)
            if hit is None:
                continue
            whole = self._decoded.get(raw)
            if whole is None:
                whole = self._decoded[raw] = stored_record(raw)
            found.append(_finding(whole, _rule(hit), hit[2].fixed))
        return found


def osv_findings(
    records: Sequence[OsvRecord], package: PurlPackage, version: str
) -> list[Vulnerability]:
    """A finding for each record that affects `version` of `package`."""
    found: list[Vulnerability] = []
    for record in records:
        hit = record_hit(record, package.ecosystem, package.name, version)
        if hit is not None:
            found.append(_finding(record, _rule(hit), hit[2].fixed))
    return found


def _rule(hit: tuple[int, Affected, Hit]) -> str:
    index, entry, why = hit
    named = entry.package
    assert named is not None  # (`record_hit` matched it by package)
    return f"affected[{index}] {named.ecosystem}/{named.name}: {why.rule}"


def _finding(record: OsvRecord, rule: str, fixed: str | None) -> Vulnerability:
    unrated = Vulnerability(
        id=record.id,
        severity=None,
        cvss=None,
        kev=False,
        cwes=_cwes(record.database_specific),
        match_criteria_id=None,
        fixed_in=fixed,
        conditional=False,
        aliases=tuple(alias for alias in record.aliases if alias != record.id),
        sources=(FindingSource("osv", record.id, rule),),
    )
    return with_rating(unrated, choose_severity(_ratings(record)))


def _severity_rating(severity: Any) -> Rating | None:
    """A `severity[]` entry's rating: a CVSS 3 vector scored, or a severity word."""
    version = _CVSS_TYPES.get(severity.type)
    if version is None:
        word = severity_word(severity.score)
        return None if word is None else Rating("osv-word", word)
    vector = severity.score
    if version == "3.1" and vector.startswith("CVSS:3.0/"):
        version = "3.0"
    score = cvss3_base_score(vector) if version in ("3.0", "3.1") else None
    if score is None:
        return None
    return Rating("osv", severity_of_score(score), Cvss(version, score, vector))


def _severity_words(record: OsvRecord) -> list[Any]:
    """The `severity` of the record's and its entries' `database_specific` and
    `ecosystem_specific` objects (GitHub's and others' words)."""
    words: list[Any] = [_severity_of(record.database_specific)]
    for entry in record.affected:
        words.append(_severity_of(entry.ecosystem_specific))
        words.append(_severity_of(entry.database_specific))
    return words


def _severity_of(specific: Mapping[str, Any] | None) -> Any:
    """The `severity` of a `database_specific` or `ecosystem_specific` object."""
    return (specific or {}).get("severity")


def _ratings(record: OsvRecord) -> list[Rating]:
    severities = [*record.severity, *(s for entry in record.affected for s in entry.severity)]
    worded = filter(None, map(severity_word, _severity_words(record)))
    return [
        *filter(None, map(_severity_rating, severities)),
        *(Rating("osv-word", word) for word in worded),
    ]


def _cwes(database_specific: Mapping[str, Any] | None) -> tuple[str, ...]:
    values = (database_specific or {}).get("cwe_ids")
    if not isinstance(values, list):
        return ()
    return cwe_ids(values)


@dataclass(slots=True)
class _Group:
    parts: list[Vulnerability]
    ids: dict[str, None]


def merge_findings(groups: Sequence[Sequence[Vulnerability]]) -> tuple[Vulnerability, ...]:
    """One finding per vulnerability (see the module docstring), ordered by id."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        root = key
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    findings = [v for group in groups for v in group]
    for finding in findings:
        first = find(finding.id)
        for alias in finding.aliases:
            parent[find(alias)] = first
    merged: dict[str, _Group] = {}
    for finding in findings:
        group = merged.setdefault(find(finding.id), _Group([], {}))
        group.parts.append(finding)
        group.ids.update(dict.fromkeys((finding.id, *finding.aliases)))
    return tuple(sorted((_merged(g) for g in merged.values()), key=lambda v: v.id))


def _first(values: Iterable[str | None]) -> str | None:
    return next((value for value in values if value), None)


def _merged(group: _Group) -> Vulnerability:
    parts = group.parts
    if len(parts) == 1 and not (set(group.ids) - {parts[0].id, *parts[0].aliases}):
        return _named(parts[0], group)
    # NVD's (unconditional first) finding leads where there is one.
    parts = sorted(parts, key=_lead)
    return with_rating(_joined(_named(parts[0], group), parts), _merged_rating(parts))


def _joined(lead: Vulnerability, parts: Sequence[Vulnerability]) -> Vulnerability:
    """The parts' facts as one finding under the lead's id and aliases (unrated): known
    exploited if any part is, conditional only if every part is."""
    return Vulnerability(
        id=lead.id,
        severity=None,
        cvss=None,
        kev=any(p.kev for p in parts),
        cwes=tuple(dict.fromkeys(cwe for p in parts for cwe in p.cwes)),
        match_criteria_id=_first(p.match_criteria_id for p in parts),
        fixed_in=_first(p.fixed_in for p in parts),
        conditional=all(p.conditional for p in parts),
        aliases=lead.aliases,
        sources=tuple(dict.fromkeys(source for p in parts for source in p.sources)),
    )


def _merged_rating(parts: Sequence[Vulnerability]) -> Rating | None:
    """The rating `choose_severity` takes from the parts' ratings (NVD's where a part
    names no rater)."""
    return choose_severity(
        Rating(p.rated_by or "nvd", p.severity, p.cvss) for p in parts if p.severity or p.cvss
    )


def _lead(part: Vulnerability) -> tuple[int, int, str]:
    kind = part.sources[0].source if part.sources else "nvd"
    rank = _SOURCE_RANK.get(kind, len(_SOURCE_RANK))
    return (int(part.conditional), rank, part.id)


def _named(part: Vulnerability, group: _Group) -> Vulnerability:
    """`part` under the group's id (the CVE where there is one) with the others as aliases."""
    name = part.id
    if not name.startswith("CVE-"):
        name = min((i for i in group.ids if i.startswith("CVE-")), default=name)
    aliases = tuple(sorted(i for i in group.ids if i != name))
    if (name, aliases) == (part.id, part.aliases):
        return part
    return replace(part, id=name, aliases=aliases)
