from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.policy.refs import (
    is_commit_digest,
    is_release_tag,
    normalize_repository,
    parse_semver,
    parse_version,
    split_ref,
    split_source_uri,
    versioned_tag_matches,
)


@pytest.mark.parametrize(
    ("expected", "tag", "matches"),
    [
        ("v1", "v1.4.2", True),
        ("v1.4", "v1.4.2", True),
        ("v1.4.2", "v1.4.2", True),
        ("v1.4.3", "v1.4.2", False),
        ("v1.5", "v1.4.2", False),
        ("v2", "v1.4.2", False),
        ("v14.2", "refs/tags/v14.2", True),
        ("v14.2.1", "v14.2", False),
        ("v14.2.0", "v14.2", True),
        ("v0", "v14", False),
        ("v1.4.2", "v1.4.2+build.7", True),
        ("v1.4.2-rc.1", "v1.4.2", False),
    ],
)
def test_versioned_tag_matching(expected: str, tag: str, matches: bool) -> None:
    assert versioned_tag_matches(expected, tag) is matches


@pytest.mark.parametrize(
    ("ref", "release"),
    [
        ("refs/tags/v1.2.3", True),
        ("v1.2.3", False),  # a bare tag is refused, as slsa-verifier does
        ("refs/tags/v1.2", False),
        ("refs/tags/v1.2.3-rc1", False),
        ("refs/tags/v1.2.3+meta", False),
        ("refs/tags/1.2.3", False),
        ("refs/heads/main", False),
    ],
)
def test_release_tag(ref: str, release: bool) -> None:
    assert is_release_tag(ref) is release


def test_versions_and_commits() -> None:
    assert parse_version("v1.x") is None
    assert parse_version("v3") is not None
    assert is_commit_digest("a" * 40)
    assert not is_commit_digest("A" * 40)
    assert not is_commit_digest("a" * 39)


def test_builder_and_source_splitting() -> None:
    assert split_ref("https://b/x.yml@refs/tags/v1.0.0") == ("https://b/x.yml", "refs/tags/v1.0.0")
    assert split_ref("https://cloudbuild.googleapis.com/GoogleHostedWorker@v0.2")[1] == "v0.2"
    assert split_ref("https://b/x.yml") == ("https://b/x.yml", None)
    assert split_source_uri("git+https://github.com/o/r@refs/heads/main") == (
        "github.com/o/r",
        "refs/heads/main",
    )
    assert normalize_repository("https://github.com/o/r.git/") == "github.com/o/r"


@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(0, 2))
def test_versioned_tag_properties(major: int, minor: int, patch: int, given_parts: int) -> None:
    tag = f"v{major}.{minor}.{patch}"
    parts = [major, minor, patch][: given_parts + 1]
    expectation = "v" + ".".join(map(str, parts))
    assert versioned_tag_matches(expectation, tag)
    assert versioned_tag_matches(expectation, f"refs/tags/{tag}+build.1")
    assert not versioned_tag_matches(f"v{major + 1}", tag)


# -- slsa-verifier's `--source-versioned-tag` ----------------------------------------------
#
# A model of slsa-verifier's `VerifyVersionedTag` (golang.org/x/mod/semver: `IsValid`,
# `Canonical`, `Major`, then the minor and patch compared as the dot-separated parts of
# the expectation and the canonical tag), written from its documented behaviour to hold
# assay to it.

_GO_NUM = r"(?:0|[1-9][0-9]*)"
_GO_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_GO_SEMVER = re.compile(
    rf"v({_GO_NUM})(?:\.({_GO_NUM})(?:\.({_GO_NUM})"
    rf"(-{_GO_PRE_ID}(?:\.{_GO_PRE_ID})*)?(\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)?)?"
)


def _go_canonical(text: str) -> str | None:
    match = _GO_SEMVER.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, _build = match.groups()
    return f"v{major}.{minor or 0}.{patch or 0}{pre or ''}"


def _go_build(text: str) -> str:
    match = _GO_SEMVER.fullmatch(text)
    return (match.group(5) or "") if match else ""


def slsa_verifier_accepts(expected: str, tag: str) -> bool:
    if _go_canonical(expected) is None:
        return False
    canonical = _go_canonical(tag)
    if canonical is None:
        return False
    if expected.split(".", maxsplit=1)[0] != canonical.split(".")[0]:  # semver.Major
        return False
    want = expected.split(".")
    have = canonical.split(".")
    if len(want) > 1 and want[1] != have[1]:
        return False
    return not (len(want) > 2 and want[2].removesuffix(_go_build(expected)) != have[2])


@pytest.mark.parametrize(
    ("expected", "tag", "matches"),
    [
        ("v1.4.2", "v1.4.2-rc1", False),  # slsa-verifier rejects it (issue 24)
        ("v1.4.2", "refs/tags/v1.4.2-rc.1", False),
        ("v1.4", "v1.4.2-rc1", True),  # no patch expected: the pre-release is not compared
        ("v1", "v1.4.2-rc1", True),
        ("v1.4.2-rc1", "v1.4.2-rc1", True),
        ("v1.4.2-rc1", "v1.4.2-rc2", False),
        ("v1.4.2-rc1", "v1.4.2", False),
        ("v1.4.2-rc1", "v1.4.2-rc1+build.5", True),
        ("v1.4.2+build.5", "v1.4.2", True),
        ("v1.4.2", "1.4.2", False),  # no `v`: not a Go semantic version
        ("v1.4.2", "v01.4.2", False),
        ("v1.4.2", "v1.4.2-01", False),  # a numeric pre-release identifier with a leading 0
        ("v1.4.2", "v1.4.2-", False),
        ("v1", "v1-rc1", False),  # a pre-release needs all three parts
        ("v1", "v1.4", True),
        ("v1.0", "v1", True),  # canonical v1.0.0
        ("v1.0.0", "v1", True),
    ],
)
def test_versioned_tags_as_slsa_verifier_matches_them(
    expected: str, tag: str, matches: bool
) -> None:
    assert versioned_tag_matches(expected, tag) is matches


@pytest.mark.parametrize("expected", ["1.4.2", "v1.4.2-", "v01", "v1-rc1", "v1.x", "v1.2.3.4"])
def test_expectations_that_are_not_go_semantic_versions_are_refused(expected: str) -> None:
    assert parse_semver(expected) is None
    assert not versioned_tag_matches(expected, "v1.4.2")


_ident = st.sampled_from(["0", "1", "01", "rc", "rc1", "a-b", "", "7"])
_versions = st.builds(
    lambda v, parts, pre, build: (
        v
        + ".".join(parts)
        + (("-" + ".".join(pre)) if pre is not None else "")
        + (("+" + ".".join(build)) if build is not None else "")
    ),
    st.sampled_from(["v", "v", "v", ""]),
    st.lists(st.sampled_from(["0", "1", "2", "01", "10"]), min_size=1, max_size=4),
    st.none() | st.lists(_ident, min_size=1, max_size=2),
    st.none() | st.lists(_ident, min_size=1, max_size=2),
)


@given(_versions, _versions, st.booleans())
def test_versioned_tag_matching_is_slsa_verifiers(expected: str, tag: str, ref: bool) -> None:
    """Equal to slsa-verifier's verdict, except that assay compares a pre-release whole
    and ignores build metadata: slsa-verifier compares only the expectation's third
    dot-separated part, so `v1.4.2-rc.1` accepted `v1.4.2-rc.2` and `v1.4.2+b.1` nothing."""
    ours = versioned_tag_matches(expected, f"refs/tags/{tag}" if ref else tag)
    theirs = slsa_verifier_accepts(expected, tag)
    dotted = expected.count(".") > 2
    if not dotted:
        assert ours == theirs, (expected, tag)
    elif ours:
        assert _go_canonical(expected) is not None
        assert _go_canonical(tag) is not None
    assert (parse_semver(expected) is not None) == (_go_canonical(expected) is not None)
