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
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from assay.audit.model import (
    Cvss,
    FindingSource,
    Vulnerability,
    cwe_ids,
    list_of,
    string_of,
)
from assay.audit.severity import Rating, choose_severity, nvd_ratings
from assay.audit.versions import Comparator
from assay.nvd.cpe import ANY, NA, Cpe, CriteriaRange, InvalidCpe, name_matches

__all__ = [
    "MAX_NODE_DEPTH",
    "UNMATCHED",
    "Compiled",
    "Compiler",
    "ComponentName",
    "Configuration",
    "Match",
    "NameSet",
    "Node",
    "Outcome",
    "RecordFacts",
    "bounds_well_formed",
    "compile_record",
    "evaluate_names",
    "evaluate_record",
    "nvd_cwes",
    "rating_parts",
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

    def may_hit(self, vendor: str, product: str) -> bool:
        """Whether some name could hit a criteria of this (plain) vendor and product."""
        return bool(self._wild) or (vendor, product) in self._by_product

    def matching(self, criteria: CriteriaRange, key: int = 0) -> tuple[Cpe, ...]:
        """The names that hit a criteria (NVD's ordering), remembered by `key` (> 0)."""
        found = self._matching.get(key) if key else None
        if found is None:
            candidates = (*self._candidates(criteria.criteria), *self._wild)
            found = tuple(name for name in candidates if name_matches(name, criteria))
            if key:
                self._matching[key] = found
        return found

    def _candidates(self, target: Cpe) -> Iterable[Cpe]:
        """The plain names that could hit a criteria naming `target`'s vendor and product."""
        if ANY in (target.vendor, target.product):
            return [name for group in self._by_product.values() for name in group]
        return self._by_product.get((target.vendor, target.product), ())

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
    return _within(compare, version, criteria)


def _within(compare: Comparator, version: str, criteria: CriteriaRange) -> bool:
    """Whether `version` lies between the criteria's start and end (each inclusive or not)."""
    # (bound, the sign of a comparison that puts the version outside it)
    for bound, outside in ((criteria.start, -1), (criteria.end, 1)):
        if bound is None:
            continue
        order = compare(version, bound[0])
        if order * outside > 0 or (order == 0 and not bound[1]):
            return False
    return True


@dataclass(frozen=True, slots=True)
class Match:
    """One `cpeMatch` of a record, compiled for a scan's names."""

    vulnerable: bool
    criteria: CriteriaRange | None
    """None when malformed (it then holds for nothing), or when no name of the scan can
    hit it (its vendor and product are none of theirs: not even parsed)."""
    match_criteria_id: str | None
    key: int
    """The same for equal criteria and bounds (a cheap key for per-scan memory)."""
    hitters: tuple[Cpe, ...]
    """The scan's names that hit it, in NVD's version order."""
    malformed: bool = False


@dataclass(frozen=True, slots=True)
class Node:
    all_of: bool
    negate: bool
    matches: tuple[Match, ...]
    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Configuration:
    all_of: bool
    negate: bool
    nodes: tuple[Node, ...]


Compiled = tuple[Configuration, ...]
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


_PLAIN_PART = re.compile(r"[a-z0-9._\-]+")
_SIMPLE_CRITERIA = re.compile(r"cpe:2\.3:[aoh*]?:[a-z0-9._\-]+:[a-z0-9._\-]+(?::[a-z0-9._\-*]*){8}")


def _simple_product(text: str) -> tuple[str, str] | None:
    """The vendor and product of a criteria that `parse_cpe` would take as written: 11
    components of lower-case letters, digits, `.`, `_`, `-` (or `*`), a valid part, and
    a plain vendor and product (their normalized form is then the text itself)."""
    if not _SIMPLE_CRITERIA.fullmatch(text):
        return None
    parts = text.split(":", 5)
    return parts[3], parts[4]


def bounds_well_formed(
    start_in: str | None, start_ex: str | None, end_in: str | None, end_ex: str | None
) -> bool:
    """Whether a criteria's bounds are as `CriteriaRange` takes them: non-empty, and
    not both Including and Excluding on one side."""
    return (
        (start_in is None or start_ex is None)
        and (end_in is None or end_ex is None)
        and "" not in (start_in, start_ex, end_in, end_ex)
    )


UNMATCHED: Final = Match(True, None, None, 0, ())
"""A well-formed `cpeMatch` whose vendor and product no name of the scan has: it holds
for no name, and is never a component's hit."""


MatchKey = tuple[object, str | None, str | None, str | None, str | None, bool, str | None]
"""A `cpeMatch` as (criteria, versionStartIncluding, versionStartExcluding,
versionEndIncluding, versionEndExcluding, vulnerable, matchCriteriaId)."""


class Compiler:
    """Compiles records' configurations for one scan's names: each distinct `cpeMatch`
    once (its criteria parsed, the names hitting it found), then remembered."""

    def __init__(self, names: NameSet) -> None:
        self.names = names
        self._matches: dict[MatchKey, Match] = {}
        self._unmatched: dict[str, bool] = {}

    def match(self, key: MatchKey) -> Match:
        """The compiled form of a `cpeMatch` given as (criteria, versionStartIncluding,
        versionStartExcluding, versionEndIncluding, versionEndExcluding, vulnerable,
        matchCriteriaId)."""
        text = key[0]
        if not isinstance(text, str):
            return Match(key[5], None, key[6], 0, (), malformed=True)
        found = self._matches.get(key)
        if found is None:
            found = self._matches[key] = self._compile_match(key, text)
        return found

    def unmatched(self, text: str) -> bool:
        """Whether `text` is a well-formed criteria of a vendor and product that no name
        of the scan has (any `cpeMatch` of it with well-formed bounds is `UNMATCHED`:
        no need to parse it)."""
        found = self._unmatched.get(text)
        if found is None:
            product = _simple_product(text)
            found = product is not None and not self.names.may_hit(*product)
            self._unmatched[text] = found
        return found

    def _compile_match(self, key: MatchKey, text: str) -> Match:
        _, start_in, start_ex, end_in, end_ex, vulnerable, identifier = key
        if self.unmatched(text) and bounds_well_formed(start_in, start_ex, end_in, end_ex):
            return UNMATCHED
        criteria, number = _criteria(text, start_in, start_ex, end_in, end_ex)
        if criteria is None:
            return Match(vulnerable, None, identifier, 0, (), malformed=True)
        return Match(
            vulnerable, criteria, identifier, number, self.names.matching(criteria, number)
        )

    def _dict_match(self, match: Mapping[str, Any]) -> Match:
        identifier = match.get("matchCriteriaId")
        return self.match(
            (
                match.get("criteria"),
                string_of(match.get("versionStartIncluding")),
                string_of(match.get("versionStartExcluding")),
                string_of(match.get("versionEndIncluding")),
                string_of(match.get("versionEndExcluding")),
                bool(match.get("vulnerable", True)),
                string_of(identifier),
            )
        )

    def _dict_node(self, node: Mapping[str, Any], depth: int) -> Node:
        children = (
            tuple(
                self._dict_node(child, depth + 1)
                for child in list_of(node.get("children"))
                if isinstance(child, Mapping)
            )
            if depth < MAX_NODE_DEPTH
            else ()
        )
        return Node(
            str(node.get("operator", "OR")).upper() == "AND",
            bool(node.get("negate", False)),
            tuple(
                self._dict_match(m) for m in list_of(node.get("cpeMatch")) if isinstance(m, Mapping)
            ),
            children,
        )

    def record(self, record: Mapping[str, Any]) -> Compiled:
        """A record's configurations (decoded JSON, read leniently) in the form
        `evaluate_record` and `evaluate_names` read."""
        return tuple(
            Configuration(
                str(c.get("operator", "OR")).upper() == "AND",
                bool(c.get("negate", False)),
                tuple(
                    self._dict_node(n, 0) for n in list_of(c.get("nodes")) if isinstance(n, Mapping)
                ),
            )
            for c in list_of(record.get("configurations"))
            if isinstance(c, Mapping)
        )

    def node(
        self, all_of: bool, negate: bool, matches: Sequence[Match], children: Sequence[Node]
    ) -> Node:
        """A node built from parts already compiled (typed records, `assay.audit.records`)."""
        return Node(all_of, negate, tuple(matches), tuple(children))

    def configuration(self, all_of: bool, negate: bool, nodes: Sequence[Node]) -> Configuration:
        return Configuration(all_of, negate, tuple(nodes))


def compile_record(record: Mapping[str, Any], names: NameSet) -> Compiled:
    """A record's configurations compiled for `names` (see `Compiler.record`)."""
    return Compiler(names).record(record)


class _TreeEvaluator:
    """NVD's AND/OR/negate tree over three-valued leaves (`match_value`, per subclass)."""

    def match_value(self, match: Match, negated: bool) -> int:
        raise NotImplementedError

    def node_value(self, node: Node, negated: bool) -> int:
        inner = negated != node.negate
        values = [self.match_value(m, inner) for m in node.matches]
        values.extend(self.node_value(child, inner) for child in node.children)
        value = _combine(node.all_of, values)
        return _TRUE - value if node.negate else value

    def configuration_value(self, configuration: Configuration) -> int:
        values = [self.node_value(node, False) for node in configuration.nodes]
        value = _combine(configuration.all_of, values)
        return _TRUE - value if configuration.negate else value


class _Evaluator(_TreeEvaluator):
    """One component's evaluation of a record: its own hits in its ecosystem's order."""

    def __init__(self, component: ComponentName, known: dict[int, bool]) -> None:
        self.component = component
        self.known = known
        self.hits: list[Match] = []

    def _component_hits(self, criteria: CriteriaRange, key: int) -> bool:
        found = self.known.get(key)
        if found is None:
            found = component_hits(self.component, criteria)
            self.known[key] = found
        return found

    def match_value(self, match: Match, negated: bool) -> int:
        if match.malformed:
            return _FALSE
        criteria = match.criteria
        if criteria is not None and self._component_hits(criteria, match.key):
            if match.vulnerable:
                self.hits.append(match)
            return _TRUE
        if any(name != self.component.cpe for name in match.hitters):
            return _TRUE
        return _FALSE if negated else _UNKNOWN


def _combine(all_of: bool, values: list[int]) -> int:
    if not values:
        return _FALSE
    return min(values) if all_of else max(values)


Outcome = tuple[bool, Match]
"""(conditional, the hit match) of a record that affects a name."""


def evaluate_record(
    compiled: Compiled,
    component: ComponentName,
    known: dict[int, bool] | None = None,
) -> Outcome | None:
    """(conditional, hit match) when the record affects the component (conditional:
    only on something the input does not list), else None. `known` remembers the
    component's own hits across the records of one scan.

    A component judged alone: its own hits are placed in its ecosystem's version order
    (`ComponentName.compare`); every other name of the scan in NVD's."""
    best_value, best_hit = _FALSE, None
    known = {} if known is None else known
    for configuration in compiled:
        evaluator = _Evaluator(component, known)
        value = evaluator.configuration_value(configuration)
        if evaluator.hits and value > best_value:
            best_value, best_hit = value, _preferred(evaluator.hits)
        if best_value == _TRUE:
            break
    if best_hit is None:
        return None
    return best_value != _TRUE, best_hit


class _NamesEvaluator(_TreeEvaluator):
    """A record's configurations evaluated once over every name of the scan, noting the
    first hits of the names asked about (those in NVD's version order)."""

    def __init__(self, wanted: Collection[Cpe]) -> None:
        self.wanted = wanted
        self.first: dict[Cpe, Match] = {}
        self.fixed: dict[Cpe, Match] = {}

    def match_value(self, match: Match, negated: bool) -> int:
        if match.malformed:
            return _FALSE
        hitters = match.hitters
        if not hitters:
            return _FALSE if negated else _UNKNOWN
        if match.vulnerable:
            self._note(match)
        return _TRUE

    def _note(self, match: Match) -> None:
        """A vulnerable match as the first hit (and first fixed hit) of the wanted names
        that hit it."""
        assert match.criteria is not None
        narrow = match.criteria.version_end_excluding is not None
        for name in match.hitters:
            if name in self.wanted:
                self.first.setdefault(name, match)
                if narrow:
                    self.fixed.setdefault(name, match)


def evaluate_names(compiled: Compiled, wanted: Collection[Cpe]) -> dict[Cpe, Outcome]:
    """`evaluate_record` for every name of `wanted` at once (names compared in NVD's
    version order, no ecosystem's): each configuration is walked once, not once per
    name. A name's own hits then equal its NVD hits, so a criteria holds exactly when
    some name of the scan hits it, whichever name is judged; the outcomes equal
    `evaluate_record`'s name by name."""
    best: dict[Cpe, tuple[int, Match]] = {}
    for configuration in compiled:
        evaluator = _NamesEvaluator(wanted)
        value = evaluator.configuration_value(configuration)
        # A false configuration, or one no better than a name's best so far (a true
        # one settles the name), leaves that name's outcome as it is.
        for name, first in evaluator.first.items():
            if value > best.get(name, (_FALSE, first))[0]:
                best[name] = (value, evaluator.fixed.get(name, first))
    return {name: (value != _TRUE, hit) for name, (value, hit) in best.items()}


def _preferred(hits: list[Match]) -> Match:
    # The narrowest statement of a fix: a hit whose range ends before a fixed version.
    for hit in hits:
        if hit.criteria is not None and hit.criteria.version_end_excluding is not None:
            return hit
    return hits[0]


# -- record facts ----------------------------------------------------------------------


def rating_parts(chosen: Rating | None) -> tuple[Cvss | None, str | None, str | None]:
    """The rating that gives the severity (`assay.audit.severity.choose_severity`): its
    CVSS, its severity and who gave it (all None when none does)."""
    if chosen is None:
        return None, None, None
    return chosen.cvss, chosen.severity, chosen.source


def nvd_cwes(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The CWE ids of an NVD record's `weaknesses[].description[]`, each once."""
    return cwe_ids(
        description.get("value") if isinstance(description, Mapping) else None
        for weakness in list_of(record.get("weaknesses"))
        if isinstance(weakness, Mapping)
        for description in list_of(weakness.get("description"))
    )


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What a finding reports of its record, read once per record."""

    id: str
    severity: str | None
    cvss: Cvss | None
    kev: bool
    cwes: tuple[str, ...]
    rated_by: str | None = None


def record_facts(record: Mapping[str, Any]) -> RecordFacts:
    cvss, severity, rated_by = rating_parts(choose_severity(nvd_ratings(record)))
    return RecordFacts(
        str(record.get("id")),
        severity,
        cvss,
        bool(record.get("cisaExploitAdd")),
        nvd_cwes(record),
        rated_by,
    )


def vulnerability_facts(facts: RecordFacts, hit: Match, *, conditional: bool) -> Vulnerability:
    """The reported facts of one affecting record, found through `hit`."""
    return Vulnerability(
        id=facts.id,
        severity=facts.severity,
        cvss=facts.cvss,
        kev=facts.kev,
        cwes=facts.cwes,
        match_criteria_id=hit.match_criteria_id,
        fixed_in=None if hit.criteria is None else hit.criteria.version_end_excluding,
        conditional=conditional,
        sources=(FindingSource("nvd", facts.id, hit.match_criteria_id or ""),),
        rated_by=facts.rated_by,
    )
