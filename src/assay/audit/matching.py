"""Which CVE records affect a component: NVD's configurations evaluated over an input.

Pure. The store's `cpeName` search (`assay.nvd`) finds the records whose vulnerable
criteria a CPE name hits, as NVD's API does, ignoring how the criteria are combined. A
scan knows more than one name: every component of the inputs. So each candidate record's
`configurations` are evaluated here over all of them:

* a criteria (`cpeMatch`) *holds* when some name of the inputs hits it
  (`assay.nvd.cpe.name_matches`); for the component being judged, the version is placed
  in the criteria's range with its ecosystem's ordering when its purl names one
  (`assay.audit.versions`), with NVD's otherwise;
* a node is the OR (or AND) of its criteria and child nodes, inverted when `negate`; a
  configuration the OR (or AND, its `operator`) of its nodes;
* a criteria that no input name hits is *unknown* where the configuration needs it
  (under an even number of negations: a running-on platform the input may simply not
  list) and *false* where it excludes something (under a negation: what the input does
  not list is taken as absent). Three-valued logic (Kleene) carries the unknowns up.

A record affects the component when the component hits one of its vulnerable criteria
and a configuration holding that criteria evaluates to true; when it evaluates only to
unknown, the record is reported as `conditional`. `fixedIn` is the hit criteria's
`versionEndExcluding`; `matchCriteriaId` its id.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from assay.audit.model import Cvss, Vulnerability
from assay.audit.versions import Comparator
from assay.nvd.cpe import ANY, NA, Cpe, CriteriaRange, InvalidCpe, name_matches

__all__ = [
    "Compiled",
    "ComponentName",
    "NameSet",
    "RecordFacts",
    "compile_record",
    "evaluate_record",
    "record_facts",
    "vulnerability_facts",
]

MAX_NODE_DEPTH: Final = 16

# Kleene truth values.
_TRUE, _UNKNOWN, _FALSE = 2, 1, 0


@dataclass(frozen=True, slots=True)
class ComponentName:
    """A component's CPE name, with the version ordering of its ecosystem (if any)."""

    cpe: Cpe
    compare: Comparator | None = None


class NameSet:
    """Every CPE name of the inputs, indexed by (vendor, product) for criteria look-ups."""

    def __init__(self, names: Iterable[Cpe]) -> None:
        self._by_product: dict[tuple[str, str], list[Cpe]] = {}
        self._wild: list[Cpe] = []
        for name in set(names):
            if ANY in (name.vendor, name.product):
                self._wild.append(name)
            else:
                self._by_product.setdefault((name.vendor, name.product), []).append(name)

        self._matching: dict[int, tuple[Cpe, ...]] = {}

    def matching(self, criteria: CriteriaRange, key: int = 0) -> tuple[Cpe, ...]:
        """The names that hit a criteria (NVD's ordering), remembered by `key` (> 0)."""
        found = self._matching.get(key) if key else None
        if found is None:
            target = criteria.criteria
            if ANY in (target.vendor, target.product):
                candidates: Iterable[Cpe] = [n for g in self._by_product.values() for n in g]
            else:
                candidates = self._by_product.get((target.vendor, target.product), ())
            found = tuple(
                name
                for group in (candidates, self._wild)
                for name in group
                if name_matches(name, criteria)
            )
            if key:
                self._matching[key] = found
        return found

    def hits(self, criteria: CriteriaRange, excluding: Cpe | None = None, key: int = 0) -> bool:
        """Whether a name other than `excluding` hits the criteria (NVD's ordering)."""
        return any(name != excluding for name in self.matching(criteria, key))


def _unescaped(version: str) -> str:
    return version.replace("\\", "") if "\\" in version else version


def component_hits(name: ComponentName, criteria: CriteriaRange) -> bool:
    """Whether the component's name hits a criteria (version in the ecosystem's order)."""
    if name.compare is None or name.cpe.version in (ANY, NA):
        return name_matches(name.cpe, criteria)
    if not name_matches(name.cpe._replace(version=ANY), criteria):
        return False
    compare, version = name.compare, _unescaped(name.cpe.version)
    wanted = criteria.criteria.version
    if wanted == NA:
        return False
    if wanted != ANY:
        return compare(version, _unescaped(wanted)) == 0
    start, end = criteria.start, criteria.end
    if start is not None:
        order = compare(version, start[0])
        if order < 0 or (order == 0 and not start[1]):
            return False
    if end is not None:
        order = compare(version, end[0])
        if order > 0 or (order == 0 and not end[1]):
            return False
    return True


@dataclass(frozen=True, slots=True)
class _Match:
    vulnerable: bool
    criteria: CriteriaRange | None
    """None when the criteria is malformed: it holds for nothing."""
    match_criteria_id: str | None
    key: int
    """The same for equal criteria and bounds (a cheap key for per-scan memory)."""


@dataclass(frozen=True, slots=True)
class _Node:
    all_of: bool
    negate: bool
    matches: tuple[_Match, ...]
    children: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Configuration:
    all_of: bool
    negate: bool
    nodes: tuple[_Node, ...]


Compiled = tuple[_Configuration, ...]
"""A record's configurations, parsed once (criteria as `CriteriaRange`s)."""


_KEYS = itertools.count(1)


@lru_cache(maxsize=262_144)
def _criteria(
    text: str, start_in: str | None, start_ex: str | None, end_in: str | None, end_ex: str | None
) -> tuple[CriteriaRange | None, int]:
    return _parsed(text, start_in, start_ex, end_in, end_ex), next(_KEYS)


def _parsed(
    text: str, start_in: str | None, start_ex: str | None, end_in: str | None, end_ex: str | None
) -> CriteriaRange | None:
    try:
        return CriteriaRange.from_json(
            {
                "criteria": text,
                "versionStartIncluding": start_in,
                "versionStartExcluding": start_ex,
                "versionEndIncluding": end_in,
                "versionEndExcluding": end_ex,
            }
        )
    except InvalidCpe:
        return None


def _bound(match: Mapping[str, Any], name: str) -> str | None:
    value = match.get(name)
    return value if isinstance(value, str) else None


def _compile_match(match: Mapping[str, Any]) -> _Match:
    text = match.get("criteria")
    criteria, key = (
        _criteria(
            text,
            _bound(match, "versionStartIncluding"),
            _bound(match, "versionStartExcluding"),
            _bound(match, "versionEndIncluding"),
            _bound(match, "versionEndExcluding"),
        )
        if isinstance(text, str)
        else (None, 0)
    )
    identifier = match.get("matchCriteriaId")
    return _Match(
        bool(match.get("vulnerable", True)),
        criteria,
        identifier if isinstance(identifier, str) else None,
        key,
    )


def _compile_node(node: Mapping[str, Any], depth: int) -> _Node:
    children = (
        tuple(
            _compile_node(child, depth + 1)
            for child in _list(node.get("children"))
            if isinstance(child, Mapping)
        )
        if depth < MAX_NODE_DEPTH
        else ()
    )
    return _Node(
        str(node.get("operator", "OR")).upper() == "AND",
        bool(node.get("negate", False)),
        tuple(_compile_match(m) for m in _list(node.get("cpeMatch")) if isinstance(m, Mapping)),
        children,
    )


def compile_record(record: Mapping[str, Any]) -> Compiled:
    """A record's configurations in the form `evaluate_record` reads."""
    return tuple(
        _Configuration(
            str(c.get("operator", "OR")).upper() == "AND",
            bool(c.get("negate", False)),
            tuple(_compile_node(n, 0) for n in _list(c.get("nodes")) if isinstance(n, Mapping)),
        )
        for c in _list(record.get("configurations"))
        if isinstance(c, Mapping)
    )


class _Evaluator:
    def __init__(self, component: ComponentName, names: NameSet, known: dict[int, bool]) -> None:
        self.component = component
        self.names = names
        self.known = known
        self.hits: list[_Match] = []

    def _component_hits(self, criteria: CriteriaRange, key: int) -> bool:
        found = self.known.get(key)
        if found is None:
            found = component_hits(self.component, criteria)
            self.known[key] = found
        return found

    def match_value(self, match: _Match, negated: bool) -> int:
        criteria = match.criteria
        if criteria is None:
            return _FALSE
        if match.vulnerable and self._component_hits(criteria, match.key):
            self.hits.append(match)
            return _TRUE
        if self.names.hits(criteria, self.component.cpe, match.key):
            return _TRUE
        return _FALSE if negated else _UNKNOWN

    def node_value(self, node: _Node, negated: bool) -> int:
        inner = negated != node.negate
        values = [self.match_value(m, inner) for m in node.matches]
        values.extend(self.node_value(child, inner) for child in node.children)
        value = _combine(node.all_of, values)
        return _TRUE - value if node.negate else value

    def configuration_value(self, configuration: _Configuration) -> int:
        values = [self.node_value(node, False) for node in configuration.nodes]
        value = _combine(configuration.all_of, values)
        return _TRUE - value if configuration.negate else value


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _combine(all_of: bool, values: list[int]) -> int:
    if not values:
        return _FALSE
    return min(values) if all_of else max(values)


def evaluate_record(
    compiled: Compiled,
    component: ComponentName,
    names: NameSet,
    known: dict[int, bool] | None = None,
) -> tuple[bool, CriteriaRange, str | None] | None:
    """(conditional, hit criteria, its matchCriteriaId) when the record affects the
    component (conditional: only on something the input does not list), else None.
    `known` remembers the component's hits across the records of one component."""
    best: tuple[int, _Match] | None = None
    known = {} if known is None else known
    for configuration in compiled:
        evaluator = _Evaluator(component, names, known)
        value = evaluator.configuration_value(configuration)
        if not evaluator.hits or value == _FALSE:
            continue
        hit = _preferred(evaluator.hits)
        if best is None or value > best[0]:
            best = (value, hit)
        if value == _TRUE:
            break
    if best is None:
        return None
    value, hit = best
    assert hit.criteria is not None
    return value != _TRUE, hit.criteria, hit.match_criteria_id


def _preferred(hits: list[_Match]) -> _Match:
    # The narrowest statement of a fix: a hit whose range ends before a fixed version.
    for hit in hits:
        if hit.criteria is not None and hit.criteria.version_end_excluding is not None:
            return hit
    return hits[0]


# -- record facts ----------------------------------------------------------------------

_METRICS: Final = (
    ("cvssMetricV40", "4.0"),
    ("cvssMetricV31", "3.1"),
    ("cvssMetricV30", "3.0"),
    ("cvssMetricV2", "2.0"),
)


def _cvss(record: Mapping[str, Any]) -> tuple[Cvss | None, str | None]:
    metrics = record.get("metrics")
    if not isinstance(metrics, Mapping):
        return None, None
    for key, version in _METRICS:
        entries = [e for e in _list(metrics.get(key)) if isinstance(e, Mapping)]
        if not entries:
            continue
        entries.sort(key=lambda e: 0 if e.get("type") == "Primary" else 1)
        entry = entries[0]
        data = entry.get("cvssData")
        if not isinstance(data, Mapping):
            continue
        score = data.get("baseScore")
        vector = data.get("vectorString")
        severity = data.get("baseSeverity") or entry.get("baseSeverity")
        if not isinstance(score, int | float) or not isinstance(vector, str):
            continue
        return (
            Cvss(version, float(score), vector),
            severity.upper() if isinstance(severity, str) else None,
        )
    return None, None


def _cwes(record: Mapping[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for weakness in _list(record.get("weaknesses")):
        if not isinstance(weakness, Mapping):
            continue
        for description in _list(weakness.get("description")):
            value = description.get("value") if isinstance(description, Mapping) else None
            if isinstance(value, str) and value.startswith("CWE-") and value not in found:
                found.append(value)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What a finding reports of its record, read once per record."""

    id: str
    severity: str | None
    cvss: Cvss | None
    kev: bool
    cwes: tuple[str, ...]


def record_facts(record: Mapping[str, Any]) -> RecordFacts:
    cvss, severity = _cvss(record)
    return RecordFacts(
        str(record.get("id")), severity, cvss, bool(record.get("cisaExploitAdd")), _cwes(record)
    )


def vulnerability_facts(
    facts: RecordFacts,
    criteria: CriteriaRange,
    match_criteria_id: str | None,
    *,
    conditional: bool,
) -> Vulnerability:
    """The reported facts of one affecting record."""
    return Vulnerability(
        id=facts.id,
        severity=facts.severity,
        cvss=facts.cvss,
        kev=facts.kev,
        cwes=facts.cwes,
        match_criteria_id=match_criteria_id,
        fixed_in=criteria.version_end_excluding,
        conditional=conditional,
    )
