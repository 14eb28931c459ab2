"""What a CVE 5 `affected[]` entry says of one version (pure).

`entry_status(affected, version, order)` places `version` in the entry's `versions[]`
(CVE Record Format 5.1): a single `version`, or a range from `version` up to `lessThan`
(excluded) or `lessThanOrEqual` (`*`: no end), with `changes` of status inside it; the
first entry that holds the version decides (single versions before ranges), else
`defaultStatus`. `order` compares two versions (the ecosystem's, or NVD's).

What CNAs write beyond the format is read where it is unambiguous: a version written as
constraints (`>= 4.4.0, < 4.9.1`, as GitHub's CNA writes them), a lower edge in words
(`3.0.3 and earlier`: open; `3.1.1 to 3.1.2`: from 3.1.1), a version written as a purl
(`pkg:npm/sysend@1.10.0`). `versionType`s that are commits (`git`) never match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Final, TypeGuard

from assay.cve5.record import Affected, VersionEntry

__all__ = [
    "OPEN_LOWER",
    "UNORDERED_TYPES",
    "AffectedMatch",
    "Compare",
    "bare_version",
    "constraints_of",
    "entry_status",
    "is_bound",
    "lower_bound",
]

Compare = Callable[[str, str], int]
"""-1, 0 or 1 as the first version is before, equal to or after the second."""

UNORDERED_TYPES: Final = frozenset({"git", "original_commit_for_fix"})
"""`versionType`s whose versions are commits, not ordered versions: never matched."""
OPEN_LOWER: Final = frozenset({"", "0", "*", "-", "n/a", "unspecified", "all"})
_OPEN_WORDS: Final = re.compile(r"earlier|prior|before|below|older|all versions", re.IGNORECASE)
_CONSTRAINT: Final = re.compile(r"\s*(<=|>=|<|>|=)\s*([^\s,]+)\s*")


@dataclass(frozen=True, slots=True)
class AffectedMatch:
    """What an `affected[]` entry says of one version."""

    status: str
    """`affected`, `unaffected` or `unknown`."""
    fixed_in: str | None
    """The version the entry says it stops being affected at (`lessThan`, a change)."""


def constraints_of(text: str) -> list[tuple[str, str]] | None:
    """A version written as constraints (`>= 4.4.0, < 4.9.1`, as GitHub's CNA writes
    them), or None for a plain version."""
    if not text or text[0] not in "<>=":
        return None
    found: list[tuple[str, str]] = []
    for part in text.split(","):
        match = _CONSTRAINT.fullmatch(part)
        if match is None:
            return None
        found.append((match.group(1), match.group(2)))
    return found


_HOLDS: Final[dict[str, Callable[[int], bool]]] = {
    "<": lambda order: order < 0,
    "<=": lambda order: order <= 0,
    ">": lambda order: order > 0,
    ">=": lambda order: order >= 0,
    "=": lambda order: order == 0,
}
"""Whether a comparison's outcome meets an operator (anything else: equality)."""


def _holds(operator: str, order: int) -> bool:
    return _HOLDS.get(operator, _HOLDS["="])(order)


def bare_version(version: str) -> str:
    """A version as written, or the version of a purl written as one (`pkg:npm/x@1.0`)."""
    if version.startswith("pkg:") and "@" in version:
        return version.rsplit("@", 1)[1]
    return version.strip()


def lower_bound(text: str) -> str | None:
    """The lower edge of a range, None when open. CNAs write free text there too:
    `3.0.3 and earlier` (open), `3.1.1 to 3.1.2` (from 3.1.1)."""
    text = bare_version(text)
    if text.lower() in OPEN_LOWER:
        return None
    if " " not in text:
        return text
    if _OPEN_WORDS.search(text):
        return None
    return text.split()[0]


def _single(entry: VersionEntry, version: str, compare: Compare) -> AffectedMatch | None:
    """A single version, or constraints (`< 2.0, >= 1.0`) in its place."""
    constraints = constraints_of(entry.version)
    if constraints is None:
        return AffectedMatch(entry.status, None) if compare(version, entry.version) == 0 else None
    if not all(_holds(op, compare(version, bound)) for op, bound in constraints):
        return None
    fixed = next((bound for op, bound in constraints if op == "<"), None)
    return AffectedMatch(entry.status, fixed)


def is_bound(end: str | None) -> TypeGuard[str]:
    """Whether a range's `lessThan` or `lessThanOrEqual` bounds it (`*` does not)."""
    return end is not None and end != "*"


def _outside(entry: VersionEntry, version: str, compare: Compare) -> bool:
    """Whether `version` is outside a range's bounds."""
    lower = lower_bound(entry.version)
    below, through = entry.less_than, entry.less_than_or_equal
    return (
        (lower is not None and compare(version, lower) < 0)
        or (is_bound(below) and compare(version, below) >= 0)
        or (is_bound(through) and compare(version, through) > 0)
    )


def _range(entry: VersionEntry, version: str, compare: Compare) -> AffectedMatch | None:
    """A range, its `changes` applied in version order."""
    if _outside(entry, version, compare):
        return None
    below = entry.less_than
    status, fixed = entry.status, below if is_bound(below) else None

    def by_version(a: tuple[str, str], b: tuple[str, str]) -> int:
        return compare(a[0], b[0])

    changes = sorted(entry.changes, key=cmp_to_key(by_version))
    for at, changed in changes:
        if compare(version, at) >= 0:
            status = changed
        elif changed == "unaffected" and status == "affected":
            fixed = at
            break
    return AffectedMatch(status, fixed)


def _in_entry(entry: VersionEntry, version: str, order: Compare) -> AffectedMatch | None:
    def compare(a: str, b: str) -> int:
        return order(bare_version(a), bare_version(b))

    if entry.version_type and entry.version_type.lower() in UNORDERED_TYPES:
        return None
    return _range(entry, version, compare) if entry.is_range else _single(entry, version, compare)


def entry_status(affected: Affected, version: str, order: Compare) -> AffectedMatch:
    """What an `affected[]` entry says of `version`: the first `versions[]` entry that
    holds it (single versions before ranges), else `defaultStatus`."""
    ordered = sorted(affected.versions, key=lambda entry: entry.is_range)
    for entry in ordered:
        found = _in_entry(entry, version, order)
        if found is not None:
            return found
    return AffectedMatch(affected.default_status, None)
