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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from assay.audit.model import Cvss, Vulnerability
from assay.audit.versions import Comparator
from assay.nvd.cpe import ANY, NA, Cpe, CriteriaRange, InvalidCpe, name_matches

__all__ = ["ComponentName", "NameSet", "evaluate_record", "vulnerability_facts"]

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

    def hits(self, criteria: CriteriaRange, excluding: Cpe | None = None) -> bool:
        """Whether a name other than `excluding` hits the criteria (NVD's ordering)."""
        target = criteria.criteria
        if ANY in (target.vendor, target.product):
            candidates: Iterable[Cpe] = [n for names in self._by_product.values() for n in names]
        else:
            candidates = self._by_product.get((target.vendor, target.product), ())
        return any(
            name != excluding and name_matches(name, criteria)
            for group in (candidates, self._wild)
            for name in group
        )


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


@dataclass(slots=True)
class _Hit:
    criteria: CriteriaRange
    match_criteria_id: str | None


class _Evaluator:
    def __init__(self, component: ComponentName, names: NameSet) -> None:
        self.component = component
        self.names = names
        self.hits: list[_Hit] = []

    def criteria_value(self, match: Mapping[str, Any], negated: bool) -> int:
        try:
            criteria = CriteriaRange.from_json(match)
        except InvalidCpe:
            return _FALSE  # a malformed criteria holds for nothing
        vulnerable = bool(match.get("vulnerable", True))
        if vulnerable and component_hits(self.component, criteria):
            identifier = match.get("matchCriteriaId")
            self.hits.append(_Hit(criteria, identifier if isinstance(identifier, str) else None))
            return _TRUE
        if self.names.hits(criteria, excluding=self.component.cpe):
            return _TRUE
        return _FALSE if negated else _UNKNOWN

    def node_value(self, node: Mapping[str, Any], negated: bool, depth: int) -> int:
        negate = bool(node.get("negate", False))
        inner_negated = negated != negate
        values: list[int] = []
        for match in _list(node.get("cpeMatch")):
            if isinstance(match, Mapping):
                values.append(self.criteria_value(match, inner_negated))
        if depth < MAX_NODE_DEPTH:
            for child in _list(node.get("children")):
                if isinstance(child, Mapping):
                    values.append(self.node_value(child, inner_negated, depth + 1))
        value = _combine(str(node.get("operator", "OR")), values)
        return _TRUE - value if negate else value

    def configuration_value(self, configuration: Mapping[str, Any]) -> int:
        values = [
            self.node_value(node, False, 0)
            for node in _list(configuration.get("nodes"))
            if isinstance(node, Mapping)
        ]
        value = _combine(str(configuration.get("operator", "OR")), values)
        return _TRUE - value if configuration.get("negate") else value


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _combine(operator: str, values: list[int]) -> int:
    if not values:
        return _FALSE
    return min(values) if operator.upper() == "AND" else max(values)


def evaluate_record(
    record: Mapping[str, Any], component: ComponentName, names: NameSet
) -> tuple[bool, CriteriaRange, str | None] | None:
    """(conditional, hit criteria, its matchCriteriaId) when `record` affects the
    component (conditional: only on something the input does not list), else None."""
    best: tuple[int, _Hit] | None = None
    for configuration in _list(record.get("configurations")):
        if not isinstance(configuration, Mapping):
            continue
        evaluator = _Evaluator(component, names)
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
    return value != _TRUE, hit.criteria, hit.match_criteria_id


def _preferred(hits: list[_Hit]) -> _Hit:
    # The narrowest statement of a fix: a hit whose range ends before a fixed version.
    for hit in hits:
        if hit.criteria.version_end_excluding is not None:
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


def vulnerability_facts(
    record: Mapping[str, Any],
    criteria: CriteriaRange,
    match_criteria_id: str | None,
    *,
    conditional: bool,
) -> Vulnerability:
    """The reported facts of one affecting record."""
    cvss, severity = _cvss(record)
    return Vulnerability(
        id=str(record.get("id")),
        severity=severity,
        cvss=cvss,
        kev=bool(record.get("cisaExploitAdd")),
        cwes=_cwes(record),
        match_criteria_id=match_criteria_id,
        fixed_in=criteria.version_end_excluding,
        conditional=conditional,
    )
