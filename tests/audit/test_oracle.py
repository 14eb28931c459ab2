"""The scan's CVE sets against an independent evaluation of NVD's rules, on real records.

The components are CPE names taken from the real configurations of the store's records:
every literal criteria, and for every ranged criteria a name at each of its bounds (so
each inclusive and exclusive edge is on the line). The expected answer is computed here,
record by record, without the scan's code: a record is a candidate for a name when the
CVE API's `cpeName` + `isVulnerable` rule holds (`tests/nvd/oracle.py`); a configuration
holding the name's vulnerable criteria is then evaluated twice over the scan's names,
plainly (a criteria holds when a name hits it) and optimistically (a criteria no name
hits is taken to hold unless a negation is above it). Affected: the plain evaluation is
true; conditional: only the optimistic one is.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from tests.audit.conftest import cyclonedx, real_records
from tests.nvd import oracle

from assay.audit import StoreSource, read_input, scan
from assay.nvd.cpe import Cpe, CriteriaRange, name_matches, parse_cpe
from assay.nvd.storage import open_store

_SPECIAL = re.compile(r"[^a-z0-9._\-]")


_PARSED: dict[int, tuple[dict[str, Any], CriteriaRange]] = {}


def _range(match: dict[str, Any]) -> CriteriaRange:
    """A `cpeMatch` item's criteria and bounds, parsed once. The item is kept with its
    range: an `id` is only unique while its object lives."""
    found = _PARSED.get(id(match))
    if found is None or found[0] is not match:
        found = _PARSED[id(match)] = (match, CriteriaRange.from_json(match))
    return found[1]


def _version_component(version: str) -> str:
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), version.lower())


def _matches(record: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for configuration in record.get("configurations", []):
        stack = list(configuration.get("nodes", []))
        while stack:
            node = stack.pop()
            stack.extend(node.get("children", []))
            found.extend(node.get("cpeMatch", []))
    return found


def component_names(records: list[dict[str, Any]], *, vulnerable_only: bool) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        for match in _matches(record):
            if vulnerable_only and not match.get("vulnerable", True):
                continue
            criteria = parse_cpe(match["criteria"], partial=False)
            if criteria.version != "*":
                names[criteria.formatted()] = None
                continue
            for bound in (
                "versionStartIncluding",
                "versionStartExcluding",
                "versionEndIncluding",
                "versionEndExcluding",
            ):
                if bound in match:
                    version = _version_component(match[bound])
                    names[criteria._replace(version=version).formatted()] = None
    return sorted(names)


class Universe:
    """The scan's names, looked up by vendor and product (all of them for a `*`)."""

    def __init__(self, names: list[Cpe]) -> None:
        self.names = names
        self.by_product: dict[tuple[str, str], list[Cpe]] = defaultdict(list)
        for name in names:
            self.by_product[(name.vendor, name.product)].append(name)

    def holds(self, criteria: CriteriaRange) -> bool:
        target = criteria.criteria
        if "*" in (target.vendor, target.product):
            candidates = self.names
        else:
            candidates = self.by_product.get((target.vendor, target.product), [])
            candidates = candidates + self.by_product.get(("*", "*"), [])
        return any(name_matches(name, criteria) for name in candidates)


def _value(node: dict[str, Any], universe: Universe, negated: bool, optimistic: bool) -> bool:
    negate = bool(node.get("negate", False))
    inner = negated != negate
    values = []
    for match in node.get("cpeMatch", []):
        held = universe.holds(_range(match))
        values.append(held or (optimistic and not inner))
    values.extend(_value(child, universe, inner, optimistic) for child in node.get("children", []))
    value = all(values) if node.get("operator", "OR") == "AND" else any(values)
    return value != negate


def _configuration(configuration: dict[str, Any], universe: Universe, optimistic: bool) -> bool:
    values = [_value(n, universe, False, optimistic) for n in configuration.get("nodes", [])]
    value = all(values) if configuration.get("operator", "OR") == "AND" else any(values)
    return value != bool(configuration.get("negate", False))


def _holds_name(configuration: dict[str, Any], name: Cpe) -> bool:
    stack = list(configuration.get("nodes", []))
    while stack:
        node = stack.pop()
        stack.extend(node.get("children", []))
        for match in node.get("cpeMatch", []):
            if match.get("vulnerable", True) and name_matches(name, _range(match)):
                return True
    return False


def expected(records: list[dict[str, Any]], names: list[str]) -> dict[str, dict[str, bool]]:
    """name -> {CVE id: conditional}, by the rules in the module docstring."""
    parsed = [parse_cpe(n, partial=False) for n in names]
    universe = Universe(parsed)
    by_product: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        products = {
            (
                parse_cpe(m["criteria"], partial=False).vendor,
                parse_cpe(m["criteria"], partial=False).product,
            )
            for m in _matches(record)
        }
        for product in products:
            by_product[product].append(record)
    values: dict[tuple[int, bool], bool] = {}

    def value(configuration: dict[str, Any], optimistic: bool) -> bool:
        # A configuration's value over the universe does not depend on the name judged.
        key = (id(configuration), optimistic)
        if key not in values:
            values[key] = _configuration(configuration, universe, optimistic)
        return values[key]

    answer: dict[str, dict[str, bool]] = {}
    checked = 0
    for text, name in zip(names, parsed, strict=True):
        found: dict[str, bool] = {}
        for record in by_product.get((name.vendor, name.product), []):
            # The CVE API's cpeName + isVulnerable rule (a vulnerable criteria the name
            # hits), held to the shared oracle on the first pairs (it re-parses every
            # criteria of the record on each call: too slow for all of them).
            candidate = any(
                m.get("vulnerable", True) and name_matches(name, _range(m))
                for m in _matches(record)
            )
            if checked < 300:
                checked += 1
                query = f"cpeName={quote(text)}&isVulnerable"
                assert oracle.matches(query, record) is candidate, (text, record["id"])
            if not candidate:
                continue
            holding = [c for c in record["configurations"] if _holds_name(c, name)]
            if any(value(c, False) for c in holding):
                found[record["id"]] = False
            elif any(value(c, True) for c in holding):
                found[record["id"]] = True
        answer[text] = found
    return answer


def scanned(url: str, names: list[str]) -> dict[str, dict[str, bool]]:
    components = [
        {"type": "library", "bom-ref": f"c{i}", "name": n.split(":")[4], "cpe": n}
        for i, n in enumerate(names)
    ]
    store = open_store(url)
    try:
        result = scan([read_input(cyclonedx(components), "bom.json")], StoreSource(store))
    finally:
        store.close()
    assert not result.unidentified
    by_ref = {
        c.component.ref: {v.id: v.conditional for v in c.vulnerabilities} for c in result.components
    }
    return {n: by_ref[f"c{i}"] for i, n in enumerate(names)}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return real_records()


def test_every_configuration_name_gets_exactly_the_oracles_cves(
    audit_store_url: str, records: list[dict[str, Any]]
) -> None:
    names = component_names(records, vulnerable_only=False)
    assert len(names) > 1500
    want = expected(records, names)
    got = scanned(audit_store_url, names)
    assert got == want
    # The sample exercises what the test is about.
    assert sum(len(v) for v in want.values()) > 1000


def test_without_the_platforms_and_nodes_are_conditional(
    audit_store_url: str, records: list[dict[str, Any]]
) -> None:
    names = component_names(records, vulnerable_only=True)
    want = expected(records, names)
    got = scanned(audit_store_url, names)
    assert got == want
    conditional = [(n, cve) for n, found in want.items() for cve, c in found.items() if c]
    assert len(conditional) > 20, "the sample has AND configurations with running-on platforms"


def test_range_edges_are_on_both_sides(records: list[dict[str, Any]]) -> None:
    """The names include, for real ranges, an excluded end and an included start."""
    names = set(component_names(records, vulnerable_only=True))
    excluded_end = included_start = 0
    for record in records:
        for match in _matches(record):
            criteria = parse_cpe(match["criteria"], partial=False)
            if "versionEndExcluding" in match:
                edge = criteria._replace(version=_version_component(match["versionEndExcluding"]))
                excluded_end += edge.formatted() in names
            if "versionStartIncluding" in match:
                edge = criteria._replace(version=_version_component(match["versionStartIncluding"]))
                included_start += edge.formatted() in names
    assert excluded_end > 50
    assert included_start > 20


def test_the_scan_json_round_trips(audit_store_url: str, records: list[dict[str, Any]]) -> None:
    names = component_names(records, vulnerable_only=True)[:50]
    store = open_store(audit_store_url)
    try:
        components = [{"type": "library", "name": "x", "cpe": n} for n in names]
        result = scan([read_input(cyclonedx(components), "bom.json")], StoreSource(store))
    finally:
        store.close()
    assert orjson.loads(orjson.dumps(result.to_dict())) == result.to_dict()
