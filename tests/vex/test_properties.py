"""Properties: OpenVEX purl matching, and what assay writes assay reads back the same."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.vex import ProductId, VexError, VexStatement, VexStatus, read_vex
from assay.vex.match import parse_purl, purl_matches
from assay.vex.model import OPENVEX_JUSTIFICATIONS
from assay.vex.write import openvex_document

_SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
_VERSION = st.text("0123456789.abc-", min_size=1, max_size=10)
_QUALIFIERS = st.dictionaries(
    st.sampled_from(["arch", "distro", "os", "type"]), _SEGMENT, max_size=3
)


def _purl(kind: str, name: str, version: str | None, qualifiers: dict[str, str]) -> str:
    text = f"pkg:{kind}/{name}"
    if version is not None:
        text += f"@{version}"
    if qualifiers:
        text += "?" + "&".join(f"{k}={v}" for k, v in sorted(qualifiers.items()))
    return text


@settings(max_examples=50)
@given(
    st.sampled_from(["npm", "pypi", "golang", "deb", "maven"]),
    _SEGMENT,
    _VERSION,
    _QUALIFIERS,
)
def test_openvex_purl_matching(
    kind: str, name: str, version: str, qualifiers: dict[str, str]
) -> None:
    component = parse_purl(_purl(kind, name, version, qualifiers))
    assert component is not None
    for statement in (
        _purl(kind, name, version, qualifiers),  # itself
        _purl(kind, name, None, {}),  # every version
        _purl(kind, name, version, {}),  # no qualifier asked
        _purl(kind, name, None, dict(list(qualifiers.items())[:1])),  # some of its qualifiers
    ):
        parsed = parse_purl(statement)
        assert parsed is not None
        assert purl_matches(parsed, component), statement
    other_version = parse_purl(_purl(kind, name, version + "0", {}))
    assert other_version is not None
    assert not purl_matches(other_version, component)
    more = parse_purl(_purl(kind, name, None, {**qualifiers, "repository_url": "x"}))
    assert more is not None
    assert not purl_matches(more, component)
    other_name = parse_purl(_purl(kind, name + "x", None, {}))
    assert other_name is not None
    assert not purl_matches(other_name, component)


_STATUS = st.sampled_from(list(VexStatus))


@st.composite
def _statements(draw: st.DrawFn) -> VexStatement:
    status = draw(_STATUS)
    justification = impact = action = None
    if status is VexStatus.NOT_AFFECTED:
        justification = draw(st.sampled_from(OPENVEX_JUSTIFICATIONS))
        impact = draw(st.none() | st.text(min_size=1, max_size=20).filter(str.strip))
    elif status is VexStatus.AFFECTED:
        action = draw(st.text(min_size=1, max_size=20).filter(str.strip))
    products = draw(
        st.lists(
            st.builds(lambda n, v: ProductId("purl", f"pkg:npm/{n}@{v}"), _SEGMENT, _VERSION),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    return VexStatement(
        "CVE-" + str(draw(st.integers(1999, 2030))) + "-" + str(draw(st.integers(1000, 99999))),
        tuple(
            draw(
                st.lists(
                    st.from_regex(r"GHSA-[a-z0-9]{4}", fullmatch=True), max_size=2, unique=True
                )
            )
        ),
        tuple(products),
        status,
        justification,
        impact,
        action,
        datetime(2026, 1, 1, tzinfo=UTC),
    )


@settings(max_examples=50)
@given(st.lists(_statements(), min_size=1, max_size=5))
def test_what_assay_writes_it_reads_back(statements: list[VexStatement]) -> None:
    document = openvex_document(statements, author="a", now=datetime(2026, 2, 1, tzinfo=UTC))
    read = read_vex(json.dumps(document).encode(), "out.json")
    assert read.id == document["@id"]
    fields = [
        (
            s.vulnerability,
            s.aliases,
            s.products,
            s.status,
            s.justification,
            s.impact,
            s.action_statement,
            s.timestamp,
        )
        for s in read.statements
    ]
    assert fields == [
        (
            s.vulnerability,
            s.aliases,
            s.products,
            s.status,
            s.justification,
            s.impact,
            s.action_statement,
            s.timestamp,
        )
        for s in statements
    ]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_SEEDS = [
    "vex/openvex/openvex-go-vex/pkg/vex/testdata/v0.2.0.json",
    "vex/openvex/openvex-go-vex/pkg/vex/testdata/v0.0.1.json",
    "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-3/vex.json",
    "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-03-ms-001.json",
    "vex/csaf/aquasecurity-trivy/pkg/vex/testdata/csaf-relationships.json",
]


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*path, index)))
    return found


@settings(max_examples=150)
@given(st.sampled_from(_SEEDS), st.data())
def test_any_value_anywhere_is_read_or_refused_by_name(seed: str, data: st.DataObject) -> None:
    from .samples import REAL

    document = json.loads((REAL / seed).read_bytes())
    path = data.draw(st.sampled_from(_paths(document)[1:]))
    target = document
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = data.draw(_JSON)  # type: ignore[index]
    where = "fuzzed.json"
    try:
        read_vex(json.dumps(document).encode(), "fuzzed.json")
    except VexError as error:  # anything else fails the test: a crash, not a refusal
        where = error.where
    assert where.startswith("fuzzed.json")
