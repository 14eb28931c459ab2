"""The OSV evaluation rules, on real records and as properties against a plain oracle."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.osv.conftest import OSV_ASSETS

from assay.osv.evaluate import affected_hit, commit_hits, range_affects
from assay.osv.record import Affected, Event, OsvRecord, Package, Range, read_record
from assay.osv.versions import SEMVER, version_key


def _record(relative: str) -> OsvRecord:
    path = OSV_ASSETS / relative
    return read_record(path.read_bytes(), str(path))


def _ecosystem_range(entry: Affected) -> Range:
    return next(r for r in entry.ranges if r.type == "ECOSYSTEM")


@pytest.mark.parametrize(
    ("version", "affected"),
    [
        ("0.1", True),
        ("1.26.16", True),
        ("1.26.17", False),
        ("1.26.18", False),
        ("1.99", False),
        ("2.0.0rc1", False),  # a pre-release of the introduced version comes before it
        ("2.0.0", True),
        ("2.0.5", True),
        ("2.0.6", False),
        ("2.1.0", False),
    ],
)
def test_unsorted_events_are_sorted_first(version: str, affected: bool) -> None:
    # PYSEC-2023-192 lists `introduced 2.0.0, fixed 2.0.6, introduced 0, fixed 1.26.17`.
    entry = _record("pypa/vulns/urllib3/PYSEC-2023-192.yaml").affected[0]
    assert (range_affects("PyPI", _ecosystem_range(entry), version) is not None) is affected


def test_the_hit_names_the_range_and_the_next_fix() -> None:
    entry = _record("pypa/vulns/urllib3/PYSEC-2023-192.yaml").affected[0]
    hit = affected_hit(entry, "2.0.1")
    assert hit is not None
    assert hit.fixed == "2.0.6"
    assert hit.rule.startswith("ECOSYSTEM introduced 2.0.0, fixed 2.0.6")


def test_versions_list_alone_makes_a_version_affected() -> None:
    entry = Affected(Package("PyPI", "x"), (), ("1.0", "not-a-pep440-version"), (), None, None)
    hit = affected_hit(entry, "not-a-pep440-version")
    assert hit is not None
    assert hit.rule == "versions[]"
    assert affected_hit(entry, "1.1") is None


def test_last_affected_is_inclusive_in_maven_order() -> None:
    # log4j:log4j, introduced 1.2, last_affected 1.2.17
    entry = _record("ghsa/GHSA-2qrg-x229-3v8q.json").affected[0]
    assert entry.package is not None
    assert entry.package.ecosystem == "Maven"
    ecosystem = _ecosystem_range(entry)
    assert range_affects("Maven", ecosystem, "1.2.17") is not None
    assert range_affects("Maven", ecosystem, "1.2") is not None
    assert range_affects("Maven", ecosystem, "1.2.18") is None
    assert range_affects("Maven", ecosystem, "1.1.3") is None
    assert range_affects("Maven", ecosystem, "1.2-SNAPSHOT") is None  # before 1.2 in Maven


def test_go_semver_ranges_read_v_prefixed_and_pseudo_versions() -> None:
    entry = _record("go/GO-2022-0375.json").affected[0]
    semver = next(r for r in entry.ranges if r.type == "SEMVER")
    assert range_affects("Go", semver, "v0.53.0") is not None
    assert range_affects("Go", semver, "v0.0.0-20210101000000-abcdef123456") is not None
    assert range_affects("Go", semver, "v0.53.1") is None
    assert range_affects("Go", semver, "0.53.1") is None


def test_limit_bounds_a_range() -> None:
    entry = Range("ECOSYSTEM", (Event("introduced", "0"), Event("limit", "2.0")))
    assert range_affects("PyPI", entry, "1.9") is not None
    assert range_affects("PyPI", entry, "2.0") is None
    star = Range("ECOSYSTEM", (Event("introduced", "1.0"), Event("limit", "*")))
    assert range_affects("PyPI", star, "9.0") is not None


def test_git_ranges_match_by_commit_only() -> None:
    entry = _record("misc/dependency-track/osv-git-commit-hash-ranges.json").affected[0]
    (git,) = entry.ranges
    assert commit_hits(entry, "775F2B3D8D6D44F3312F9911DCF70B203268F387") is not None
    assert commit_hits(entry, "2cfc1d7e12adf87a28ac78abb32233cf39c6d54a") is None  # the fix
    assert range_affects("OSS-Fuzz", git, "775f2b3d8d6d44f3312f9911dcf70b203268f387") is None


def test_an_ecosystem_without_an_order_matches_through_versions_only() -> None:
    entry = Affected(
        Package("OSS-Fuzz", "x"),
        (Range("ECOSYSTEM", (Event("introduced", "0"),)),),
        ("abc",),
        (),
        None,
        None,
    )
    assert version_key("OSS-Fuzz", "1.0") is None
    assert affected_hit(entry, "1.0") is None
    assert affected_hit(entry, "abc") is not None


# -- properties: the walk against intervals -----------------------------------------------

_release = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)).map(
    lambda t: ".".join(map(str, t))
)


@given(
    bounds=st.lists(_release, min_size=2, max_size=8, unique=True),
    version=_release,
    ecosystem=st.sampled_from(["PyPI", "npm", "crates.io", "Go", "Maven", "RubyGems", "NuGet"]),
    shuffle=st.randoms(use_true_random=False),
)
def test_disjoint_intervals_in_any_event_order(
    bounds: list[str], version: str, ecosystem: str, shuffle: object
) -> None:
    """Sorted bounds b0 < b1 < ... make intervals [b0, b1), [b2, b3), ...; the events
    given in any order say exactly that."""
    order = sorted(bounds, key=lambda b: version_key(ecosystem, b))
    if len(order) % 2:
        order = order[:-1]
    events = []
    for start, end in zip(order[::2], order[1::2], strict=True):
        events += [Event("introduced", start), Event("fixed", end)]
    shuffle.shuffle(events)  # type: ignore[attr-defined]
    key = version_key(ecosystem, version)
    expected = any(
        version_key(ecosystem, s) <= key < version_key(ecosystem, e)
        for s, e in zip(order[::2], order[1::2], strict=True)
    )
    got = range_affects(ecosystem, Range("ECOSYSTEM", tuple(events)), version)
    assert (got is not None) is expected


@given(introduced=_release, last=_release, version=_release)
def test_last_affected_is_the_inclusive_end(introduced: str, last: str, version: str) -> None:
    assume(version_key(SEMVER, introduced) <= version_key(SEMVER, last))
    key = version_key(SEMVER, version)
    entry = Range("SEMVER", (Event("introduced", introduced), Event("last_affected", last)))
    expected = version_key(SEMVER, introduced) <= key <= version_key(SEMVER, last)
    assert (range_affects("npm", entry, version) is not None) is expected


_identifier = st.one_of(
    st.integers(0, 30).map(str),
    st.text(alphabet="abcrx-", min_size=1, max_size=4),
)
_semver = st.builds(
    lambda core, pre, build: (
        ".".join(map(str, core))
        + (f"-{'.'.join(pre)}" if pre else "")
        + (f"+{build}" if build else "")
    ),
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
    st.lists(_identifier, max_size=3),
    st.sampled_from(["", "meta", "001"]),
)


@given(a=_semver, b=_semver)
def test_semver_keys_order_as_python_semver_compares(a: str, b: str) -> None:
    import semver

    from assay.osv.versions import semver_key

    expected = semver.Version.parse(a).compare(b)
    key_a, key_b = semver_key(a), semver_key(b)
    assert (key_a > key_b) - (key_a < key_b) == expected
    assert semver_key("v" + a) == key_a  # Go's prefix


@pytest.mark.parametrize(
    ("ecosystem", "version", "affected"),
    [
        ("Alpine", "1.0.2p-r0", True),
        ("Alpine", "1.0.2q-r0", False),
        ("Alpine:v3.5", "1.0.2p-r0", True),
        ("Alpine:v3.5", "1.0.2q-r0", False),
        ("Alpine:v9.9", "1.0.2p-r0", False),  # a release the record does not name
        ("Debian", "1.0.2p-r0", False),
    ],
)
def test_distribution_ecosystems_with_and_without_their_release(
    ecosystem: str, version: str, affected: bool
) -> None:
    from assay.osv.evaluate import record_hit

    record = _record("misc/osv-linter/CVE-2018-5407.json")  # openssl, Alpine v3.3-v3.8
    assert (record_hit(record, ecosystem, "openssl", version) is not None) is affected


def test_purls_name_osv_packages() -> None:
    from assay.osv.names import normalized_name, package_of_purl

    def named(purl: str) -> tuple[str, str, str | None] | None:
        found = package_of_purl(purl)
        return None if found is None else (found.ecosystem, found.name, found.version)

    assert named("pkg:pypi/Django@4.2") == ("PyPI", "django", "4.2")  # (purl lowercases it)
    assert normalized_name("PyPI", "Zope.Interface_x") == "zope-interface-x"
    assert named("pkg:npm/%40babel/core@7.0.0") == ("npm", "@babel/core", "7.0.0")
    assert named("pkg:maven/org.apache.commons/commons-text@1.9") == (
        "Maven",
        "org.apache.commons:commons-text",
        "1.9",
    )
    assert named("pkg:golang/golang.org/x/net@v0.1.0") == ("Go", "golang.org/x/net", "v0.1.0")
    assert named("pkg:cargo/smallvec@1.6.0") == ("crates.io", "smallvec", "1.6.0")
    assert named("pkg:composer/laravel/framework@8.0.0") == (
        "Packagist",
        "laravel/framework",
        "8.0.0",
    )
    assert named("pkg:deb/debian/openssl@1.1.1n-0%2Bdeb11u3?distro=debian-11") == (
        "Debian",
        "openssl",
        "1.1.1n-0+deb11u3",
    )
    assert named("pkg:apk/alpine/openssl@1.0.2p-r0") == ("Alpine", "openssl", "1.0.2p-r0")
    assert named("pkg:generic/thing@1") is None
