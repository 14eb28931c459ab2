"""Version orderings by ecosystem: properties (Hypothesis) and the cases that differ
from NVD's ordering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from assay.audit.matching import ComponentName, component_hits
from assay.audit.versions import ECOSYSTEMS, comparator_for, compare_in
from assay.nvd.cpe import CriteriaRange, parse_cpe
from assay.nvd.versions import compare_versions

numbers = st.integers(min_value=0, max_value=30)
releases = st.lists(numbers, min_size=1, max_size=4).map(lambda p: ".".join(map(str, p)))
pep440 = st.builds(
    lambda release, pre, post, dev: release + pre + post + dev,
    releases,
    st.sampled_from(["", "a1", "b2", "rc1", "rc10"]),
    st.sampled_from(["", ".post1"]),
    st.sampled_from(["", ".dev0", ".dev3"]),
)
semver = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}{pre}",
    numbers,
    numbers,
    numbers,
    st.sampled_from(["", "-alpha", "-alpha.1", "-beta.2", "-rc.1", "-rc.11"]),
)
maven = st.builds(
    lambda release, qualifier: release + qualifier,
    releases,
    st.sampled_from(["", "-SNAPSHOT", "-alpha-1", "-beta", "-rc1", ".Final", "-sp1"]),
)
anything = st.text(alphabet="0123456789.-abcrv+_", min_size=1, max_size=10)
by_ecosystem = {"pypi": pep440, "npm": semver, "cargo": semver, "maven": maven}


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


@settings(max_examples=60)
@given(st.sampled_from(["pypi", "npm", "maven", "cargo", None]), st.data())
def test_every_order_is_antisymmetric_and_transitive(
    ecosystem: str | None, data: st.DataObject
) -> None:
    versions = by_ecosystem.get(ecosystem or "", anything)
    a, b, c = data.draw(versions), data.draw(versions), data.draw(versions)
    assert compare_in(ecosystem, a, a) == 0
    assert sign(compare_in(ecosystem, a, b)) == -sign(compare_in(ecosystem, b, a))
    if compare_in(ecosystem, a, b) <= 0 and compare_in(ecosystem, b, c) <= 0:
        assert compare_in(ecosystem, a, c) <= 0


@settings(max_examples=80)
@given(pep440, pep440)
def test_pypi_is_pep_440(a: str, b: str) -> None:
    assert compare_in("pypi", a, b) == sign((Version(a) > Version(b)) - (Version(a) < Version(b)))


@settings(max_examples=80)
@given(semver, semver)
def test_npm_puts_prereleases_before_their_release(a: str, b: str) -> None:
    release_a, _, pre_a = a.partition("-")
    release_b, _, pre_b = b.partition("-")
    if release_a == release_b and bool(pre_a) != bool(pre_b):
        assert compare_in("npm", a, b) == (-1 if pre_a else 1)


@settings(max_examples=60)
@given(anything, anything)
def test_unknown_ecosystems_use_nvds_order(a: str, b: str) -> None:
    assert comparator_for("generic") is None
    assert compare_in(None, a, b) == compare_versions(a, b)
    assert compare_in("generic", a, b) == compare_versions(a, b)


@pytest.mark.parametrize(
    ("ecosystem", "smaller", "larger"),
    [
        ("pypi", "1.0rc1", "1.0"),
        ("pypi", "2.0.dev1", "2.0a1"),
        ("npm", "1.0.0-rc.1", "1.0.0"),
        ("maven", "1.0-SNAPSHOT", "1.0"),
        ("maven", "1.0-alpha-1", "1.0-beta"),
        ("golang", "v1.2.0-rc1", "v1.2.0"),
        ("gem", "1.0.0.pre", "1.0.0"),
    ],
)
def test_where_nvds_order_disagrees_the_ecosystem_decides(
    ecosystem: str, smaller: str, larger: str
) -> None:
    assert compare_in(ecosystem, smaller, larger) == -1
    assert compare_in(ecosystem, larger, smaller) == 1


def test_unparsable_versions_fall_back_instead_of_failing() -> None:
    assert compare_in("pypi", "not a version!", "1.0") == compare_versions("not a version!", "1.0")
    assert set(ECOSYSTEMS) >= {"pypi", "npm", "maven", "cargo", "nuget", "gem", "golang"}


def test_a_range_is_read_in_the_ecosystems_order() -> None:
    # Fixed in 1.0: NVD's order puts 1.0rc1 after 1.0, PEP 440 before it.
    criteria = CriteriaRange.from_json(
        {"criteria": "cpe:2.3:a:vendor:product:*:*:*:*:*:*:*:*", "versionEndExcluding": "1.0"}
    )
    name = parse_cpe("cpe:2.3:a:vendor:product:1.0rc1", partial=True)
    assert not component_hits(ComponentName(name, None), criteria)
    assert component_hits(ComponentName(name, comparator_for("pypi")), criteria)
    released = parse_cpe("cpe:2.3:a:vendor:product:1.0", partial=True)
    assert not component_hits(ComponentName(released, comparator_for("pypi")), criteria)
