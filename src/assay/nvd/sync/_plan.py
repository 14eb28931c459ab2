"""What a mirror run reads and where it resumes. Pure: no clock, no network, no store.

Each record kind is a *listing* of the upstream, one of the five operations of
`assay.nvd.operations`. A kind's state is one `Checkpoint` (`assay.nvd.checkpoint`),
kept in the store's meta table under its `checkpoint_key` (`sync.<kind>`):

* no checkpoint (or one taken from another upstream): a **full load** reads the whole
  listing, page by page, from `startIndex` 0; the checkpoint remembers `since`, the
  upstream time at which the load started, and the next `startIndex`;
* **incremental**: `since` is the upstream time up to which the mirror is complete; a run
  reads `lastModified` windows (`created` for the change history) of at most 120 days
  from `since - overlap` to the upstream's current time; while a window is being read
  the checkpoint holds it and the next `startIndex`.

`advance` steps a position through a listing. A listing whose `totalResults` shrinks
between two pages lost records *before* the position (in a `lastModified` window, a
record modified meanwhile leaves the window), which shifts the later records down: the
position then steps back by the shrinkage, so that nothing is skipped; upserts absorb
the records read twice.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from assay.errors import InputError
from assay.nvd.checkpoint import (
    CHECKPOINT_VERSION,
    Checkpoint,
    CheckpointError,
    Position,
    Window,
    same_upstream,
    utc_text,
)
from assay.nvd.client import MAX_DATE_RANGE, split_window
from assay.nvd.defaults import KINDS, Kind
from assay.nvd.ingest.clock import FUTURE_MARGIN
from assay.nvd.operations import OPERATIONS, Operation

__all__ = [
    "CHECKPOINT_VERSION",
    "KINDS",
    "SPECS",
    "Checkpoint",
    "CheckpointError",
    "Kind",
    "KindSpec",
    "Listing",
    "Position",
    "UpstreamInconsistent",
    "UpstreamRunaway",
    "WalkGuard",
    "Window",
    "advance",
    "catch_up",
    "parse_kinds",
    "plan",
    "same_upstream",
]


SPECS: Final = OPERATIONS
"""Each kind's operation (`assay.nvd.operations`): what is read, how, and where its
checkpoint is kept. `KindSpec` is its type."""
KindSpec = Operation

_ALIASES: Final[dict[str, Kind]] = {
    "cve": "cves",
    "cves": "cves",
    "history": "cvehistory",
    "cvehistory": "cvehistory",
    "changes": "cvehistory",
    "cpe": "cpes",
    "cpes": "cpes",
    "cpematch": "cpematch",
    "matchstrings": "cpematch",
    "source": "source",
    "sources": "source",
}


def parse_kinds(text: str) -> tuple[Kind, ...]:
    """`cves,cpes` → the kinds named, in mirror order (aliases: history, cpe, ...)."""
    wanted: set[Kind] = set()
    for part in text.split(","):
        name = part.strip().lower()
        if not name:
            continue
        kind = _ALIASES.get(name)
        if kind is None:
            raise InputError(
                "--kinds", f"expected some of {', '.join(KINDS)} (comma-separated), got {part!r}"
            )
        wanted.add(kind)
    if not wanted:
        raise InputError("--kinds", "expected at least one of " + ", ".join(KINDS))
    return tuple(kind for kind in KINDS if kind in wanted)


# --- positions in a listing ---------------------------------------------------------------


class UpstreamInconsistent(InputError):
    """The upstream's pages contradict each other (an empty page before the end)."""


def advance(position: Position, *, start_index: int, received: int, total: int) -> Position:
    """The position after a page of `received` records fetched at `start_index`.

    If `totalResults` shrank by k since the previous page, k records before the position
    left the listing and every later record moved down by k: the next page starts k
    records earlier (the records read twice are harmless). A page that grew the total
    (new records appended) needs nothing special.
    """
    if position.total is not None and total < position.total:
        return Position(max(0, start_index - (position.total - total)), total)
    if received == 0 and start_index < total:
        raise UpstreamInconsistent(
            f"startIndex={start_index}",
            f"expected records up to totalResults={total}, found an empty page",
        )
    return Position(start_index + received, total)


# --- what a run reads -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Listing:
    """One listing to read: the whole of it (`window` None) or one window, from `start`."""

    window: Window | None
    start: Position


@dataclass(frozen=True, slots=True)
class Plan:
    """What one kind's run does: an optional full load, then incremental windows."""

    full: Listing | None
    """The full load to run (or resume), if any."""
    started: datetime
    """When the full load started (its checkpoint's `since`), or the incremental `since`."""
    reason: str
    """Why the run does what it does, for a person."""


def plan(checkpoint: Checkpoint | None, *, upstream: str, now: datetime) -> Plan:
    """Decide whether a kind needs a full load (fresh or resumed) before catching up.

    A checkpoint later than `now` plus `FUTURE_MARGIN` is not trusted: a full load."""
    if checkpoint is None:
        return Plan(Listing(None, Position()), now, "first run: full load")
    if not same_upstream(checkpoint.upstream, upstream):
        return Plan(
            Listing(None, Position()),
            now,
            f"last mirrored from {checkpoint.upstream}: full load from {upstream}",
        )
    latest = now + FUTURE_MARGIN
    ends = (
        [checkpoint.since] if checkpoint.window is None else [checkpoint.since, *checkpoint.window]
    )
    if max(ends) > latest:
        # Taken from a clock far ahead (an older assay kept what the upstream said): a
        # checkpoint past the clocks would end every incremental read before it starts.
        return Plan(
            Listing(None, Position()),
            now,
            f"the checkpoint ({utc_text(max(ends))}) is later than the upstream's time "
            f"({utc_text(now)}) plus {FUTURE_MARGIN}: full load",
        )
    if checkpoint.phase == "full":
        return Plan(
            Listing(None, checkpoint.position),
            checkpoint.since,
            f"resuming the full load at record {checkpoint.next_index}",
        )
    return Plan(None, checkpoint.since, f"changes since {utc_text(checkpoint.since)}")


def catch_up(
    checkpoint: Checkpoint,
    *,
    now: datetime,
    overlap: timedelta,
    max_range: timedelta = MAX_DATE_RANGE,
) -> list[Listing]:
    """The windows an incremental checkpoint still needs, up to the upstream time `now`.

    A window under way is finished first, with its original bounds (positions are only
    meaningful in the same listing); then consecutive windows of at most `max_range` run
    from its end, or from `since - overlap`, to `now`.
    """
    listings: list[Listing] = []
    if checkpoint.window is not None:
        listings.append(Listing(checkpoint.window, checkpoint.position))
        begin = checkpoint.window[1]
    else:
        begin = checkpoint.since - overlap
    if begin < now:
        listings.extend(
            Listing(window, Position()) for window in split_window(begin, now, max_range=max_range)
        )
    return listings


def utc(moment: datetime) -> datetime:
    """`moment` as an aware UTC datetime (naive means UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# --- listings that never end --------------------------------------------------------------


class UpstreamRunaway(InputError):
    """The upstream's pages would never end: it repeats pages (ignoring `startIndex`) or
    its `totalResults` keeps growing."""


RECENT_PAGES: Final = 16
"""Pages whose ids a walk remembers to recognise a repeated page."""


@dataclass
class WalkGuard:
    """Stops a walk through one listing whose pages would never end.

    * `totalResults` may grow while a listing is read (records are added upstream), but
      not by more than a page or a tenth of the total first seen, whichever is larger:
      an upstream that keeps growing it with fresh records would fill the disk.
    * A page starting past every index read so far holds records not read yet: records
      that leave a listing move the later ones down, never up, and new ones come at its
      end. Such a page made only of records of the last `RECENT_PAGES` pages is a
      repeat (the upstream ignores `startIndex`). A page read again after the position
      stepped back (`advance`, when the total shrank) starts below that index.
    """

    page_size: int
    first_total: int | None = None
    read_up_to: int = 0
    """The highest `startIndex + records received` of the walk."""
    _recent: deque[list[str]] = field(default_factory=lambda: deque(maxlen=RECENT_PAGES))
    _seen: Counter[str] = field(default_factory=Counter)

    def check(self, start_index: int, total: int, ids: Sequence[str]) -> None:
        """Check the page read at `start_index` (raises `UpstreamRunaway`)."""
        where = f"startIndex={start_index}"
        self._check_growth(where, total)
        self._check_repeat(where, start_index, ids)
        self._remember(ids)

    def _check_growth(self, where: str, total: int) -> None:
        if self.first_total is None:
            self.first_total = total
        allowed = max(self.page_size, self.first_total // 10)
        if total - self.first_total > allowed:
            raise UpstreamRunaway(
                where,
                f"totalResults grew from {self.first_total} to {total} while the listing "
                f"was read (at most {allowed} more are expected); the upstream's listing "
                "would not end",
            )

    def _check_repeat(self, where: str, start_index: int, ids: Sequence[str]) -> None:
        fresh = start_index >= self.read_up_to > 0
        if fresh and ids and all(record_id in self._seen for record_id in ids):
            raise UpstreamRunaway(
                where,
                f"the page repeats all its {len(ids)} records from an earlier page (the "
                "upstream ignores startIndex?); the upstream's listing would not end",
            )

    def _remember(self, ids: Sequence[str]) -> None:
        """Keep the ids of the last `RECENT_PAGES` pages."""
        if len(self._recent) == self._recent.maxlen:
            self._seen -= Counter(self._recent[0])
        self._recent.append(list(ids))
        self._seen.update(ids)

    def moved(self, start_index: int, received: int) -> None:
        """Note the page read at `start_index` with `received` records."""
        self.read_up_to = max(self.read_up_to, start_index + received)
