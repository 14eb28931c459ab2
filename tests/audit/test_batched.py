"""The batched scan against a per-component evaluation, and the streamed JSON contract.

`scan` gathers every component's look-ups in one `find` of the source and evaluates each
record once for all the names that found it. Here the same findings are worked out the
slow way, component by component: the component's own look-up through the CVE search
the server answers (`StoreSource.affecting`, or `of_product` for a purl whose ecosystem
orders versions its own way), and each record it returns judged for that component
alone (`evaluate_record`) over the names of the whole input.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.audit.conftest import cyclonedx, real_records
from tests.audit.test_oracle import component_names

from assay.audit import StoreSource, read_input, scan
from assay.audit.json_stream import json_chunks
from assay.audit.matching import (
    Compiler,
    ComponentName,
    NameSet,
    evaluate_names,
    evaluate_record,
    record_facts,
    vulnerability_facts,
)
from assay.audit.rules import evaluate, parse_fail_on
from assay.audit.versions import comparator_for
from assay.nvd.cpe import parse_cpe
from assay.nvd.storage import open_store

ECOSYSTEMS = (None, None, "pypi", "npm", "maven", "golang")
NAMESPACES = {"pypi": "", "npm": "", "maven": "org.example/", "golang": "example.com/"}
PLAIN_VERSION = re.compile(r"[a-z0-9][a-z0-9._\-]*")
_NAMES: list[str] = []


def _names() -> list[str]:
    if not _NAMES:
        _NAMES.extend(component_names(real_records(), vulnerable_only=False))
    return _NAMES


def _components(draw: st.DrawFn) -> list[tuple[str, str | None]]:
    names = _names()
    indexes = draw(st.lists(st.integers(0, len(names) - 1), min_size=1, max_size=40))
    return [(names[i], draw(st.sampled_from(ECOSYSTEMS))) for i in indexes]


def _bom(components: list[tuple[str, str | None]]) -> bytes:
    entries = []
    for i, (name, ecosystem) in enumerate(components):
        product, version = name.split(":")[4], name.split(":")[5]
        entry: dict[str, Any] = {"type": "library", "bom-ref": f"c{i}", "name": product}
        entry["cpe"] = name
        plain = PLAIN_VERSION.fullmatch(version) and PLAIN_VERSION.fullmatch(product)
        if ecosystem is not None and plain:
            entry["purl"] = f"pkg:{ecosystem}/{NAMESPACES[ecosystem]}{product}@{version}"
        entries.append(entry)
    return cyclonedx(entries)


def _one_by_one(source: StoreSource, document: bytes) -> dict[str, list[dict[str, Any]]]:
    """ref -> findings, each component evaluated alone (see the module docstring)."""
    inventory = read_input(document, "bom.json")
    names = NameSet(parse_cpe(c.cpes[0], partial=True) for c in inventory.components)
    answer: dict[str, list[dict[str, Any]]] = {}
    for component in inventory.components:
        name = parse_cpe(component.cpes[0], partial=True)
        ecosystem = component.purl.split(":")[1].split("/")[0] if component.purl else None
        compare = comparator_for(ecosystem)
        records = (
            source.of_product(name.part, name.vendor, name.product)
            if compare is not None
            else source.affecting(name)
        )
        found = {}
        for record in records:
            outcome = evaluate_record(Compiler(names).record(record), ComponentName(name, compare))
            if outcome is not None:
                conditional, hit = outcome
                finding = vulnerability_facts(record_facts(record), hit, conditional=conditional)
                found[finding.id] = finding.to_dict()
        answer[component.ref] = [found[key] for key in sorted(found)]
    return answer


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_the_batched_scan_agrees_with_one_component_at_a_time(
    audit_store_url: str, data: st.DataObject
) -> None:
    document = _bom(data.draw(st.composite(_components)()))
    store = open_store(audit_store_url)
    try:
        source = StoreSource(store)
        result = scan([read_input(document, "bom.json")], source)
        want = _one_by_one(source, document)
    finally:
        store.close()
    got = {c.component.ref: [v.to_dict() for v in c.vulnerabilities] for c in result.components}
    assert got == want


@pytest.mark.parametrize("fail_on", [[], ["severity>=HIGH"], ["kev", "cvss>=9.0"]])
@pytest.mark.parametrize("size", [0, 1, 60])
def test_the_streamed_json_is_byte_for_byte_the_contract(
    audit_sqlite_url: str, size: int, fail_on: list[str]
) -> None:
    names = _names()[:size]
    components = [
        {"type": "library", "bom-ref": f"c{i}", "name": n.split(":")[4], "cpe": n}
        for i, n in enumerate(names)
    ]
    if size:
        components.append({"type": "library", "bom-ref": "unknown", "name": "no-such-thing"})
    store = open_store(audit_sqlite_url)
    try:
        result = scan([read_input(cyclonedx(components), "bom.json")], StoreSource(store))
    finally:
        store.close()
    if size > 1:
        assert sum(len(c.vulnerabilities) for c in result.components) > 50
    verdict = evaluate(result, [parse_fail_on(r) for r in fail_on], (), today=date(2026, 1, 1))
    whole = orjson.dumps(
        {**result.to_dict(), "verdict": verdict.to_dict()}, option=orjson.OPT_INDENT_2
    )
    assert b"".join(json_chunks(result, verdict)) == whole + b"\n"


@pytest.mark.parametrize("ecosystem", [None, "pypi"])
def test_the_batched_scan_agrees_on_every_configuration_name(
    audit_store_url: str, ecosystem: str | None
) -> None:
    document = _bom([(name, ecosystem) for name in _names()])
    store = open_store(audit_store_url)
    try:
        source = StoreSource(store)
        result = scan([read_input(document, "bom.json")], source)
        want = _one_by_one(source, document)
    finally:
        store.close()
    got = {c.component.ref: [v.to_dict() for v in c.vulnerabilities] for c in result.components}
    assert got == want
    assert sum(len(found) for found in want.values()) > 1000


# -- the two evaluations on arbitrary configurations -------------------------------------

PRODUCTS = ("a:acme:widget", "o:acme:os", "a:other:thing", "a:*:widget")
VERSIONS = ("0.9", "1.0", "1.5", "2.0", "3.0")
BOUNDS = ("versionStartIncluding", "versionStartExcluding", "versionEndIncluding")


@st.composite
def _cpe_match(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(("*", "-", *VERSIONS)))
    match: dict[str, Any] = {
        "criteria": f"cpe:2.3:{draw(st.sampled_from(PRODUCTS))}:{version}:*:*:*:*:*:*:*",
        "vulnerable": draw(st.booleans()),
        "matchCriteriaId": draw(st.sampled_from(("A", "B", "C"))),
    }
    if version == "*":
        # Both sides of a bound now and then: a malformed criteria holds for nothing.
        for bound in (*BOUNDS, "versionEndExcluding"):
            if draw(st.integers(0, 3)) == 0:
                match[bound] = draw(st.sampled_from(VERSIONS))
    return match


def _node(children: st.SearchStrategy[list[dict[str, Any]]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "operator": st.sampled_from(("OR", "AND")),
            "negate": st.booleans(),
            "cpeMatch": st.lists(_cpe_match(), max_size=4),
            "children": children,
        }
    )


NODES = st.recursive(
    _node(st.just([])), lambda inner: _node(st.lists(inner, max_size=3)), max_leaves=8
)
CONFIGURATIONS = st.lists(
    st.fixed_dictionaries(
        {
            "operator": st.sampled_from(("OR", "AND")),
            "negate": st.booleans(),
            "nodes": st.lists(NODES, min_size=1, max_size=3),
        }
    ),
    min_size=1,
    max_size=3,
)
NAMES = st.lists(
    st.builds(
        lambda product, version: parse_cpe(f"cpe:2.3:{product}:{version}", partial=True),
        st.sampled_from(("a:acme:widget", "o:acme:os", "a:other:thing", "a:acme:*")),
        st.sampled_from(("*", "-", *VERSIONS, "1.2", "2.5")),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(configurations=CONFIGURATIONS, names=NAMES)
def test_evaluating_once_for_all_names_equals_evaluating_each(
    configurations: list[dict[str, Any]], names: list[Any]
) -> None:
    compiled = Compiler(NameSet(names)).record({"configurations": configurations})
    together = evaluate_names(compiled, set(names))
    for name in set(names):
        assert together.get(name) == evaluate_record(compiled, ComponentName(name, None))
