"""Matching rules for refs, tags, semantic versions and repository URIs (pure functions).

Semantics follow slsa-verifier, so that a policy can say what its flags say:

- a *builder tag pin* is `refs/tags/vX.Y.Z` (or `vX.Y.Z`): exactly three numeric parts,
  no pre-release, no build metadata;
- a *versioned tag* expectation (`v1`, `v1.4`, `v1.4.2`, `v1.4.2-rc.1`) and the tag are
  Go semantic versions (golang.org/x/mod/semver, which slsa-verifier uses: a `v`, no
  leading zeros, a pre-release or build only after all three numbers); the tag matches
  when its major is equal, its minor when the expectation gives one, and its patch and
  pre-release when the expectation gives a patch (so `v1.4.2` refuses `v1.4.2-rc1`, as
  slsa-verifier does); build metadata is ignored. One deliberate difference: the
  pre-release is compared whole, where slsa-verifier compares the expectation's third
  dot-separated part (`v1.4.2-rc.1` accepted `v1.4.2-rc.2` there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

# Whole-string matches only (`fullmatch`: no `$` before a trailing newline) and ASCII
# digits only (`\d` would take any Unicode digit).
_SEMVER: Final = re.compile(
    r"v?(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(?:\.(0|[1-9][0-9]*))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?"
)
_COMMIT: Final = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_NUMBER: Final = r"(?:0|[1-9][0-9]*)"
_PRE_ID: Final = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_GO_SEMVER: Final = re.compile(
    rf"v({_NUMBER})(?:\.({_NUMBER})(?:\.({_NUMBER})"
    rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?)?)?"
)
"""golang.org/x/mod/semver's grammar: vMAJOR[.MINOR[.PATCH[-PRERELEASE][+BUILD]]]."""


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int | None
    patch: int | None
    prerelease: str | None
    build: str | None


def parse_version(text: str) -> Version | None:
    """A semantic version with optional `v` prefix and optional minor/patch, or None."""
    match = _SEMVER.fullmatch(text)
    if not match:
        return None
    version = _version(match)
    if version.patch is not None and version.minor is None:
        return None
    return version


def parse_semver(text: str) -> Version | None:
    """A Go semantic version (`semver.IsValid`: `v` required, no leading zeros, a
    pre-release or build only after MAJOR.MINOR.PATCH), or None."""
    match = _GO_SEMVER.fullmatch(text)
    if not match:
        return None
    return _version(match)


def _version(match: re.Match[str]) -> Version:
    major, minor, patch, pre, build = match.groups()
    return Version(
        int(major),
        int(minor) if minor is not None else None,
        int(patch) if patch is not None else None,
        pre,
        build,
    )


def tag_name(ref: str) -> str:
    """`refs/tags/v1.2.3` -> `v1.2.3`; other text unchanged."""
    return ref.removeprefix("refs/tags/")


def is_release_tag(ref: str) -> bool:
    """True for `refs/tags/vX.Y.Z` (three parts, no pre-release, no build).

    A bare `vX.Y.Z` after a builder id's `@` is refused, as slsa-verifier refuses it.
    """
    if not ref.startswith("refs/tags/"):
        return False
    name = tag_name(ref)
    if not name.startswith("v"):
        return False
    version = parse_version(name)
    return (
        version is not None
        and version.patch is not None
        and version.prerelease is None
        and version.build is None
    )


def is_commit_digest(ref: str) -> bool:
    """A full git commit id (SHA-1 or SHA-256 object name), lower-case hex."""
    return bool(_COMMIT.fullmatch(ref))


def versioned_tag_matches(expected: str, tag: str) -> bool:
    """slsa-verifier's `--source-versioned-tag`: both Go semantic versions; major equal,
    minor if given, patch and pre-release if a patch is given; build metadata ignored."""
    want = parse_semver(expected)
    have = parse_semver(tag_name(tag))
    if want is None or have is None:
        return False
    pinned = _pinned_fields(want)
    return _fields(want)[:pinned] == _fields(have)[:pinned]


def _fields(version: Version) -> tuple[int, int, int, str | None]:
    """(major, minor, patch, pre-release), an absent minor or patch read as 0."""
    return (version.major, version.minor or 0, version.patch or 0, version.prerelease)


def _pinned_fields(expected: Version) -> int:
    """How many of `_fields` an expected version pins: the major, the minor if given,
    the patch and pre-release if a patch is given."""
    if expected.minor is None:
        return 1
    return 2 if expected.patch is None else 4


def split_ref(builder_id: str) -> tuple[str, str | None]:
    """`name@ref` -> (`name`, `ref`); no `@` gives (`builder_id`, None)."""
    name, sep, ref = builder_id.rpartition("@")
    if not sep or ("/" in ref and not ref.startswith("refs/")):
        return builder_id, None
    return name, ref


def normalize_repository(uri: str) -> str:
    """Compare repositories by host and path: no scheme, `git+`, `.git`, ref or slash."""
    text = uri.strip()
    text = text.removeprefix("git+")
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    text = text.split("@", 1)[0] if "@" in text and "/" in text.split("@", 1)[0] else text
    return text.rstrip("/").removesuffix(".git")


def split_source_uri(uri: str) -> tuple[str, str | None]:
    """`git+https://github.com/o/r@refs/heads/main` -> (`github.com/o/r`, `refs/heads/main`)."""
    text = uri.strip().removeprefix("git+")
    body = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    repo, sep, ref = body.partition("@")
    return normalize_repository(repo), (ref if sep else None)
