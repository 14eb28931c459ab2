"""Whether a version of a package is affected, exactly as the OSV schema's "Evaluation"
section defines it (https://ossf.github.io/osv-schema/#evaluation). Pure.

For one `affected[]` entry and a version:

1. a version listed in `versions[]` is affected;
2. each SEMVER or ECOSYSTEM range is evaluated in its order (SEMVER: semver; ECOSYSTEM:
   the package's ecosystem's, `assay.osv.versions`): its events are sorted by version
   (`introduced: "0"` first, before everything), then walked: an `introduced` at or below
   the version makes it affected, a `fixed` at or below it, or a `last_affected` below
   it, makes it not affected; the version must also be below one of the range's `limit`s
   if it has any (`"*"` is no limit);
3. GIT ranges are never evaluated against versions: only `commit_hits` reads them.

An event its order cannot read is left out of the walk (it never moves the state), and
a version the order cannot read is affected only through `versions[]`.

`commit_hits` answers for a commit: osv.dev walks the repository's history between the
events; without the repositories, a commit is affected here when it is named by an
`introduced` or `last_affected` event of a GIT range (docs/osv.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from assay.osv.names import normalized_name
from assay.osv.record import Affected, Event, OsvRecord, Range
from assay.osv.versions import SEMVER, base_ecosystem, version_key

__all__ = ["Hit", "affected_hit", "commit_hits", "names_package", "range_affects", "record_hit"]


@dataclass(frozen=True, slots=True)
class Hit:
    """Why a version is affected: the rule that matched and the first fixed version."""

    rule: str
    """`versions[]`, or the range as events (`ECOSYSTEM introduced 4.0, fixed 4.3`)."""
    fixed: str | None
    """The first `fixed` event above the version, if any."""


@lru_cache(maxsize=1 << 16)
def _sorted_events(order: str, events: tuple[Event, ...]) -> tuple[tuple[Any, Event], ...]:
    keyed: list[tuple[int, Any, int, Event]] = []
    for position, event in enumerate(events):
        if event.kind == "limit":
            continue
        if event.kind == "introduced" and event.value == "0":
            keyed.append((0, None, position, event))
            continue
        key = version_key(order, event.value)
        if key is not None:
            keyed.append((1, key, position, event))
    keyed.sort(key=_sort_key)
    return tuple((key, event) for _, key, _, event in keyed)


class _Sortable:
    """Orders keys of one version order; unorderable pairs keep their record order."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: _Sortable) -> bool:
        try:
            return bool(self.key < other.key)
        except TypeError:
            return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Sortable):
            return NotImplemented
        try:
            return bool(self.key == other.key)
        except TypeError:
            return False

    __hash__ = None  # type: ignore[assignment]


def _sort_key(item: tuple[int, Any, int, Event]) -> tuple[int, _Sortable, int]:
    return (item[0], _Sortable(item[1]), item[2])


def _below_limits(order: str, version: Any, events: tuple[Event, ...]) -> bool:
    limits = [event.value for event in events if event.kind == "limit"]
    return not limits or any(_below(order, version, limit) for limit in limits)


def _below(order: str, version: Any, limit: str) -> bool:
    """Whether the version is below one `limit` event (`*`: every version is)."""
    if limit == "*":
        return True
    key = version_key(order, limit)
    return key is not None and _less(version, key)


def _less(a: Any, b: Any) -> bool:
    try:
        return bool(a < b)
    except TypeError:
        return False


def _introduced(affected: bool, current: Any, key: Any) -> bool:
    return affected or key is None or not _less(current, key)


def _fixed(affected: bool, current: Any, key: Any) -> bool:
    return affected and _less(current, key)


def _last_affected(affected: bool, current: Any, key: Any) -> bool:
    return affected and not _less(key, current)


def _unchanged(affected: bool, current: Any, key: Any) -> bool:
    return affected


_EVENTS: Final[dict[str, Callable[[bool, Any, Any], bool]]] = {
    "introduced": _introduced,
    "fixed": _fixed,
    "last_affected": _last_affected,
}
"""What each event does to "affected" as the walk passes it (in version order)."""


def range_affects(order: str, entry: Range, version: str) -> Hit | None:
    """The hit when `version` is in the SEMVER or ECOSYSTEM range `entry`, read in
    `order` (an ecosystem, or `SEMVER`); `None` otherwise (and always for GIT)."""
    if entry.type == "GIT":
        return None
    if entry.type == SEMVER:
        order = SEMVER
    current = version_key(order, version)
    if current is None:
        return None
    walked = _sorted_events(order, entry.events)
    if not _walk(walked, current) or not _below_limits(order, current, entry.events):
        return None
    return Hit(_describe(entry), _fix_after(walked, current))


def _walk(walked: Sequence[tuple[Any, Event]], current: Any) -> bool:
    """Whether the version is affected once every event (in version order) is passed."""
    affected = False
    for key, event in walked:
        affected = _EVENTS.get(event.kind, _unchanged)(affected, current, key)
    return affected


def _fix_after(walked: Sequence[tuple[Any, Event]], current: Any) -> str | None:
    """The first `fixed` event above the version."""
    return next((e.value for key, e in walked if e.kind == "fixed" and _less(current, key)), None)


def _describe(entry: Range) -> str:
    events = ", ".join(f"{event.kind} {event.value}" for event in entry.events)
    return f"{entry.type} {events}"


def affected_hit(entry: Affected, version: str) -> Hit | None:
    """Whether `version` of `entry`'s package is affected (the module docstring's rules)."""
    for candidate in entry.ranges:
        hit = range_affects(_order(entry), candidate, version)
        if hit is not None:
            return hit  # (names the range and its fix, also for a listed version)
    return Hit("versions[]", None) if version in entry.versions else None


def _order(entry: Affected) -> str:
    return entry.package.ecosystem if entry.package is not None else SEMVER


def commit_hits(entry: Affected, commit: str) -> str | None:
    """The GIT range naming `commit` as affected (`introduced` or `last_affected`), as a
    rule text; `None` when none does."""
    wanted = commit.lower()
    for candidate in entry.ranges:
        if candidate.type != "GIT":
            continue
        for event in candidate.events:
            if event.kind in ("introduced", "last_affected") and event.value.lower() == wanted:
                return f"GIT {candidate.repo} {event.kind} {event.value}"
    return None


def names_package(entry: Affected, ecosystem: str, name: str) -> bool:
    """Whether `entry` is about the package: the same normalized name, in `ecosystem`
    (`Debian:12` exactly; `Debian` any of its releases)."""
    package = entry.package
    if package is None:
        return False
    if ":" in ecosystem:
        if package.ecosystem != ecosystem:
            return False
    elif base_ecosystem(package.ecosystem) != ecosystem:
        return False
    return normalized_name(package.ecosystem, package.name) == normalized_name(ecosystem, name)


def record_hit(
    record: OsvRecord, ecosystem: str, name: str, version: str
) -> tuple[int, Affected, Hit] | None:
    """The first `affected[]` entry of `record` about the package that `version` is in:
    its index, the entry and the hit; `None` when none is (or the record is withdrawn)."""
    if record.withdrawn is not None:
        return None
    for index, entry in enumerate(record.affected):
        if names_package(entry, ecosystem, name):
            hit = affected_hit(entry, version)
            if hit is not None:
                return index, entry, hit
    return None
