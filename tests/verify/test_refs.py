from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.policy.refs import (
    is_commit_digest,
    is_release_tag,
    normalize_repository,
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
