"""What a mirror run reads and where it resumes. Pure: no clock, no network, no store.

Each record kind is a *listing* of the upstream (`/cves/2.0`, `/cvehistory/2.0`,
`/cpes/2.0`, `/cpematch/2.0`). A kind's state is one `Checkpoint`, kept in the store's
meta table under `sync.<kind>`:

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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

import orjson

from assay.errors import InputError
from assay.nvd.client import MAX_DATE_RANGE, MAX_RESULTS_PER_PAGE, split_window
from assay.nvd.dates import format_nvd_timestamp, parse_record_timestamp
from assay.nvd.defaults import KINDS, Kind
from assay.nvd.ingest.clock import FUTURE_MARGIN

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
    "advance",
    "catch_up",
    "parse_kinds",
    "plan",
    "same_upstream",
]


CHECKPOINT_VERSION: Final = 1
Window = tuple[datetime, datetime]


@dataclass(frozen=True, slots=True)
class KindSpec:
    """How one record kind is read from the upstream and written to the store."""

    kind: Kind
    record: str
    """The importer's name for the record kind (`assay.nvd.ingest.importer.HANDLERS`)."""
    start_param: str
    """Client argument bounding the window from below (`last_mod_start_date`, ...)."""
    end_param: str
    label: str
    """What a person calls the records (`CVEs`, `CVE changes`, ...)."""
    path: str
    """The listing's path under the upstream's base URL."""
    list_key: str
    """The response key holding the page's items, and each item's wrapper key (None
    where the items are the records, as sources are)."""
    wrapper: str | None

    @property
    def meta_key(self) -> str:
        """The store meta key holding this kind's checkpoint."""
        return f"sync.{self.kind}"

    @property
    def max_page(self) -> int:
        """The largest page the upstream serves for this kind."""
        return MAX_RESULTS_PER_PAGE[self.kind]


SPECS: Final[dict[Kind, KindSpec]] = {
    "cves": KindSpec(
        "cves",
        "cve",
        "last_mod_start_date",
        "last_mod_end_date",
        "CVEs",
        "/cves/2.0",
        "vulnerabilities",
        "cve",
    ),
    "cvehistory": KindSpec(
        "cvehistory",
        "change",
        "change_start_date",
        "change_end_date",
        "CVE changes",
        "/cvehistory/2.0",
        "cveChanges",
        "change",
    ),
    "cpes": KindSpec(
        "cpes",
        "cpe",
        "last_mod_start_date",
        "last_mod_end_date",
        "CPEs",
        "/cpes/2.0",
        "products",
        "cpe",
    ),
    "cpematch": KindSpec(
        "cpematch",
        "cpematch",
        "last_mod_start_date",
        "last_mod_end_date",
        "match criteria",
        "/cpematch/2.0",
        "matchStrings",
        "matchString",
    ),
    "source": KindSpec(
        "source",
        "source",
        "last_mod_start_date",
        "last_mod_end_date",
        "sources",
        "/source/2.0",
        "sources",
        None,
    ),
}

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


# --- checkpoints -------------------------------------------------------------------------


class CheckpointError(InputError):
    """A stored checkpoint cannot be read (written by a newer assay, or damaged)."""


def _utc_text(moment: datetime) -> str:
    return format_nvd_timestamp(moment) + "Z"


def _moment(value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise CheckpointError(where, f"expected a UTC timestamp, found {value!r}")
    try:
        return parse_record_timestamp(value)
    except InputError:
        raise CheckpointError(where, f"expected a UTC timestamp, found {value!r}") from None


def _count(value: object, where: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointError(where, f"expected an integer >= 0, found {value!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """A kind's mirror state, as committed to the store after each page."""

    upstream: str
    phase: Literal["full", "incremental"]
    since: datetime
    """Full load: when it started (upstream clock). Incremental: complete up to here."""
    window: Window | None = None
    """Incremental: the window being read, if one is under way."""
    next_index: int = 0
    """The `startIndex` of the next page of the full listing or of `window`."""
    total: int | None = None
    """The `totalResults` last seen for the listing under way."""

    @property
    def position(self) -> Position:
        """Where the listing under way resumes."""
        return Position(self.next_index, self.total)

    def at(self, position: Position) -> Checkpoint:
        """This checkpoint, moved to `position` in the same listing."""
        return replace(self, next_index=position.next_index, total=position.total)

    def to_json(self) -> str:
        """The stored form (JSON text, timestamps as UTC `...Z`)."""
        value: dict[str, Any] = {
            "version": CHECKPOINT_VERSION,
            "upstream": self.upstream,
            "phase": self.phase,
            "since": _utc_text(self.since),
            "window": None
            if self.window is None
            else [_utc_text(self.window[0]), _utc_text(self.window[1])],
            "nextIndex": self.next_index,
            "total": self.total,
        }
        return orjson.dumps(value).decode()

    @classmethod
    def from_json(cls, text: str, where: str) -> Checkpoint:
        """Read a stored checkpoint; `where` names it in errors (the meta key)."""
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise CheckpointError(
                where, f"expected a JSON object, found invalid JSON: {error}"
            ) from None
        if not isinstance(value, dict):
            raise CheckpointError(where, f"expected a JSON object, found {text[:80]!r}")
        version = value.get("version")
        if version != CHECKPOINT_VERSION:
            raise CheckpointError(
                f"{where}.version",
                f"expected checkpoint version {CHECKPOINT_VERSION}, found {version!r} "
                "(written by another assay version?)",
            )
        upstream = value.get("upstream")
        if not isinstance(upstream, str) or not upstream:
            raise CheckpointError(f"{where}.upstream", f"expected a URL, found {upstream!r}")
        phase = value.get("phase")
        if phase not in ("full", "incremental"):
            raise CheckpointError(
                f"{where}.phase", f"expected 'full' or 'incremental', found {phase!r}"
            )
        window_value = value.get("window")
        window: Window | None = None
        if window_value is not None:
            if not isinstance(window_value, list) or len(window_value) != 2:
                raise CheckpointError(
                    f"{where}.window", f"expected [start, end] or null, found {window_value!r}"
                )
            window = (
                _moment(window_value[0], f"{where}.window[0]"),
                _moment(window_value[1], f"{where}.window[1]"),
            )
        next_index = _count(value.get("nextIndex"), f"{where}.nextIndex")
        assert next_index is not None
        return cls(
            upstream=upstream,
            phase=phase,
            since=_moment(value.get("since"), f"{where}.since"),
            window=window,
            next_index=next_index,
            total=_count(value.get("total"), f"{where}.total", optional=True),
        )


def same_upstream(a: str, b: str) -> bool:
    """Whether two upstream base URLs name the same service (trailing `/` ignored)."""
    return a.rstrip("/") == b.rstrip("/")


# --- positions in a listing ---------------------------------------------------------------


class UpstreamInconsistent(InputError):
    """The upstream's pages contradict each other (an empty page before the end)."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where the next page of a listing starts, and the `totalResults` last seen."""

    next_index: int = 0
    total: int | None = None

    @property
    def done(self) -> bool:
        """Whether the listing has been read to its end."""
        return self.total is not None and self.next_index >= self.total


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
            f"the checkpoint ({_utc_text(max(ends))}) is later than the upstream's time "
            f"({_utc_text(now)}) plus {FUTURE_MARGIN}: full load",
        )
    if checkpoint.phase == "full":
        return Plan(
            Listing(None, checkpoint.position),
            checkpoint.since,
            f"resuming the full load at record {checkpoint.next_index}",
        )
    return Plan(None, checkpoint.since, f"changes since {_utc_text(checkpoint.since)}")


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
        fresh = start_index >= self.read_up_to > 0
        if fresh and ids and all(record_id in self._seen for record_id in ids):
            raise UpstreamRunaway(
                where,
                f"the page repeats all its {len(ids)} records from an earlier page (the "
                "upstream ignores startIndex?); the upstream's listing would not end",
            )
        if len(self._recent) == self._recent.maxlen:
            self._seen -= Counter(self._recent[0])
        self._recent.append(list(ids))
        self._seen.update(ids)

    def moved(self, start_index: int, received: int) -> None:
        """Note the page read at `start_index` with `received` records."""
        self.read_up_to = max(self.read_up_to, start_index + received)
