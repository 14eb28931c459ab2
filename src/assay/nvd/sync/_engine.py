"""The mirror's I/O: read pages from the upstream, upsert them with their checkpoint.

For each page: fetch (the client paces, times out and retries), check and index every
record with the importer's facts function, then upsert the batch and store the kind's
checkpoint in one transaction: a run killed at any moment resumes exactly after the last
page stored. Fetching and checking the next page overlaps with writing the current one
(one page ahead, in a thread).
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

import httpx
import orjson

from assay.errors import ClientError, InputError
from assay.nvd.checkpoint import CursorState, utc_text
from assay.nvd.client import (
    DEFAULT_BASE_URL,
    MAX_DECODED_BYTES,
    MAX_WIRE_BYTES,
    InvalidQuery,
    NvdClient,
    NvdClientError,
    NvdRedirectError,
    NvdResponseTooLarge,
    Result,
    base_url_problem,
    redact_url,
)
from assay.nvd.dates import parse_record_timestamp
from assay.nvd.ingest.ahead import read_ahead
from assay.nvd.ingest.clock import FUTURE_MARGIN, record_id
from assay.nvd.ingest.importer import HANDLERS
from assay.nvd.operations import OPERATIONS, Operation
from assay.nvd.storage import Store, UpsertCounts
from assay.nvd.sync._pacing import CountingTransport, Rate, SlidingWindowLimiter
from assay.nvd.sync._plan import (
    KINDS,
    Checkpoint,
    Kind,
    Listing,
    Position,
    UpstreamInconsistent,
    UpstreamRunaway,
    WalkGuard,
    Window,
    advance,
    catch_up,
    plan,
    same_upstream,
    utc,
)

__all__ = [
    "DEFAULT_OVERLAP",
    "KindFinished",
    "KindReport",
    "KindStarted",
    "Mirror",
    "Notice",
    "PageStored",
    "SyncError",
    "SyncEvent",
    "SyncOptions",
    "SyncReport",
]

_log = logging.getLogger("assay.nvd.sync")

DEFAULT_OVERLAP: Final = timedelta(hours=2)
"""Incremental runs start this long before the checkpoint: NVD stamps `lastModified`
when a change is made, which can be a little before the change is served."""
MAX_REPORTED_PROBLEMS: Final = 1000
GC_EVERY_PAGES: Final = 64
SYNC_LOCK: Final = "sync"
"""The store lock a mirror holds while it runs: two mirrors of one store would fetch
everything twice, together exceed the upstream's rate limit and overwrite each other's
checkpoints."""

T = TypeVar("T")


class SyncError(ClientError):
    """The mirror could not continue; everything up to the last checkpoint is kept."""


@dataclass(frozen=True, kw_only=True)
class SyncOptions:
    """What to mirror from where, and how hard to push the upstream."""

    upstream: str = DEFAULT_BASE_URL
    api_key: str | None = None
    kinds: tuple[Kind, ...] = KINDS
    rate: Rate | None = None
    """Pacing (`None`: none). `assay.nvd.sync.default_rate` gives NVD's limits."""
    page_size: int | None = None
    """Records per request (capped at each listing's maximum); `None`: the maximum."""
    timeout: float = 60.0
    """Seconds allowed for one complete answer."""
    max_retries: int = 6
    backoff: float = 2.0
    """First back-off in seconds; it doubles on every retry, up to `max_backoff`."""
    max_backoff: float = 60.0
    overlap: timedelta = DEFAULT_OVERLAP
    since: datetime | None = None
    """Read what changed since this time instead of what the checkpoints say."""
    prefetch: bool = True
    """Fetch the next page while the current one is written."""
    max_page_bytes: int = MAX_WIRE_BYTES
    """Cap on one answer as received (compressed): past it the run stops (exit 2)."""
    max_decoded_page_bytes: int = MAX_DECODED_BYTES
    """Cap on one answer once decoded."""
    change_cursor: bool = True
    """From an upstream assay, read what was written since the last run by its change
    cursor (`sinceGeneration`) rather than by `lastModified` windows."""

    def __post_init__(self) -> None:
        problem = base_url_problem(self.upstream)
        if problem is not None:
            raise InputError("upstream", problem)
        for name, allowed, expected in _OPTION_RULES:
            value = getattr(self, name)
            if not allowed(value):
                raise InputError(name, f"expected {expected}, got {value}")


# (option, whether a value is allowed, what is expected) for `SyncOptions`.
_OPTION_RULES: Final[tuple[tuple[str, Callable[[Any], bool], str], ...]] = (
    ("page_size", lambda value: value is None or value >= 1, "at least 1"),
    ("timeout", lambda value: value > 0, "a positive number of seconds"),
    ("max_retries", lambda value: value >= 0, "at least 0"),
    ("backoff", lambda value: value >= 0, "at least 0 seconds"),
    ("overlap", lambda value: value >= timedelta(0), "a positive duration"),
    ("kinds", bool, "at least one record kind"),
    ("max_page_bytes", lambda value: value >= 1, "at least 1 byte"),
    ("max_decoded_page_bytes", lambda value: value >= 1, "at least 1 byte"),
)


# --- report and events --------------------------------------------------------------------


@dataclass
class KindReport:
    """What one kind's run did."""

    kind: Kind
    plan: str = ""
    fetched: int = 0
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    rejected: int = 0
    pages: int = 0
    windows: int = 0
    full_load: bool = False


@dataclass
class SyncReport:
    """What a run did, per kind and in total."""

    upstream: str
    upstream_time: datetime | None = None
    kinds: list[KindReport] = field(default_factory=list)
    requests: int = 0
    """HTTP requests sent, retries included."""
    retries: int = 0
    elapsed: float = 0.0
    paced: Rate | None = None
    waited: float = 0.0
    """Seconds spent waiting for the rate limit."""
    problems: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("fetch", "check", "write", "idle"), 0.0)
    )
    """Seconds spent fetching and parsing pages, checking records (facts), upserting
    (each page with its checkpoint), and writing nothing while waiting for the next page.
    Fetching and checking run one page ahead of the others, so the sum exceeds `elapsed`."""
    clock_refused: str | None = None
    """The upstream's `timestamp`, when it was later than this machine's clock plus
    `FUTURE_MARGIN` (that bound was used instead)."""

    @property
    def rejected(self) -> int:
        """Records the upstream sent that could not be stored."""
        return sum(kind.rejected for kind in self.kinds)

    @property
    def ok(self) -> bool:
        """Every record fetched was stored, and the upstream's clock was usable."""
        return self.rejected == 0 and self.clock_refused is None


@dataclass(frozen=True, slots=True)
class KindStarted:
    kind: Kind
    plan: str


@dataclass(frozen=True, slots=True)
class PageStored:
    kind: Kind
    window: Window | None
    start_index: int
    received: int
    position: Position
    counts: UpsertCounts
    rejected: int


@dataclass(frozen=True, slots=True)
class KindFinished:
    report: KindReport


@dataclass(frozen=True, slots=True)
class Notice:
    text: str


SyncEvent = KindStarted | PageStored | KindFinished | Notice


# --- the engine ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fetched:
    """A page fetched and checked, ready to be written."""

    start_index: int
    received: int
    facts: list[Any]
    problems: list[str]
    position: Position


class Mirror:
    """Mirror an NVD-compatible upstream into a store; `run()` once per invocation.

    `transport` replaces the HTTP transport (tests); requests are counted and paced on
    top of it either way. `on_event` receives progress events (`PageStored`, ...).
    """

    def __init__(
        self,
        store: Store,
        options: SyncOptions,
        *,
        on_event: Callable[[SyncEvent], None] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.store = store
        self.options = options
        self._base_url = options.upstream.rstrip("/")
        # What is shown, logged and kept in checkpoints: without a password in the URL.
        self.upstream = redact_url(self._base_url)
        self._emit = on_event or (lambda _event: None)
        self._limiter = SlidingWindowLimiter(options.rate) if options.rate else None
        self._transport = CountingTransport(self._base_url, limiter=self._limiter, inner=transport)
        self._calls = 0
        self.report = SyncReport(upstream=self.upstream, paced=options.rate)

    def run(self) -> SyncReport:
        """Mirror every selected kind; raises `SyncError` if the upstream cannot be read,
        `StoreBusy` if another mirror is writing this store."""
        with self.store.exclusive(SYNC_LOCK):
            return self._run()

    def _run(self) -> SyncReport:
        started = time.perf_counter()
        gc_was_enabled = gc.isenabled()
        # Pages are ~10^5 short-lived acyclic objects: collector passes only cost time.
        gc.disable()
        try:
            with NvdClient(
                wait_time=0,
                request_timeout=max(1, round(self.options.timeout * 1000)),
                max_retries=self.options.max_retries,
                api_key=self.options.api_key,
                base_url=self._base_url,
                transport=self._transport,
                backoff=self.options.backoff,
                max_backoff=self.options.max_backoff,
                max_wire_bytes=self.options.max_page_bytes,
                max_decoded_bytes=self.options.max_decoded_page_bytes,
            ) as client:
                now = self._upstream_time(client, OPERATIONS[self.options.kinds[0]])
                self.report.upstream_time = now
                by_cursor = (
                    self.options.change_cursor
                    and self.options.since is None
                    and self._transport.generation is not None
                )
                for kind in self.options.kinds:
                    if by_cursor:
                        self._kind_by_cursor(client, OPERATIONS[kind], now)
                    else:
                        self._kind(client, OPERATIONS[kind], now)
        finally:
            if gc_was_enabled:
                gc.enable()
            self.report.requests = self._transport.sent
            self.report.retries = max(0, self._transport.sent - self._calls)
            self.report.waited = self._limiter.waited if self._limiter else 0.0
            self.report.elapsed = time.perf_counter() - started
        return self.report

    # -- one kind --------------------------------------------------------------------

    def _kind(self, client: NvdClient, spec: Operation, now: datetime) -> None:
        report = KindReport(spec.name)
        self.report.kinds.append(report)
        checkpoint, full, overlap = self._kind_start(self._load(spec), now, report)
        self._emit(KindStarted(spec.name, report.plan))
        if full is not None:
            report.full_load = True
            self._read(client, spec, checkpoint, None, start=full.start, report=report)
            checkpoint = Checkpoint(
                upstream=self.upstream, phase="incremental", since=checkpoint.since
            )
            self._save(spec, checkpoint)
        self._catch_up(client, spec, checkpoint, now=now, overlap=overlap, report=report)
        self._emit(KindFinished(report))

    def _kind_start(
        self, checkpoint: Checkpoint | None, now: datetime, report: KindReport
    ) -> tuple[Checkpoint, Listing | None, timedelta]:
        """Where a kind starts (its plan said in `report`): at `--since`, else where the
        checkpoint left it, a full load first when there is none; and how far windows
        overlap."""
        if self.options.since is not None:
            checkpoint = self._since_option(now)
            report.plan = f"changes since {checkpoint.since.isoformat()} (--since)"
            return checkpoint, None, timedelta(0)
        decided = plan(checkpoint, upstream=self.upstream, now=now)
        report.plan = decided.reason
        full = decided.full
        if full is not None:
            base = Checkpoint(upstream=self.upstream, phase="full", since=decided.started)
            checkpoint = base.at(full.start)
        assert checkpoint is not None
        return checkpoint, full, self.options.overlap

    def _catch_up(
        self,
        client: NvdClient,
        spec: Operation,
        checkpoint: Checkpoint,
        *,
        now: datetime,
        overlap: timedelta,
        report: KindReport,
    ) -> None:
        """Read the lastModified windows from the checkpoint to `now`, committing the
        checkpoint after each."""
        for listing in catch_up(checkpoint, now=now, overlap=overlap):
            assert listing.window is not None
            report.windows += 1
            base = Checkpoint(
                upstream=self.upstream,
                phase="incremental",
                since=checkpoint.since,
                window=listing.window,
            )
            self._read(client, spec, base, listing.window, start=listing.start, report=report)
            checkpoint = Checkpoint(
                upstream=self.upstream,
                phase="incremental",
                since=max(checkpoint.since, listing.window[1]),
            )
            self._save(spec, checkpoint)

    def _since_option(self, now: datetime) -> Checkpoint:
        """Where `--since` starts a kind's changes (no later than the upstream's time)."""
        assert self.options.since is not None
        since = utc(self.options.since)
        if since > now:
            raise SyncError(
                f"since: {since.isoformat()} is later than the upstream's time {now.isoformat()}"
            )
        return Checkpoint(upstream=self.upstream, phase="incremental", since=since)

    def _kind_by_cursor(self, client: NvdClient, spec: Operation, now: datetime) -> None:
        """One kind from another assay: everything written there since the generation
        the last complete pass started at (`sinceGeneration`), whatever its
        `lastModified` (a backfill imported upstream with old dates comes too).

        A pass is exact when no write happened upstream while it ran (the generation it
        started at is still current at its end); otherwise a write may have moved a
        record to a page already read, and the next run reads again from the same
        generation. Upserts make a second reading harmless."""
        report = KindReport(spec.name)
        self.report.kinds.append(report)
        key = spec.cursor_key
        stored = CursorState.from_json(self.store.get_meta(key))
        state = (
            stored
            if stored is not None and same_upstream(stored.upstream, self.upstream)
            else CursorState(upstream=self.upstream)
        )
        since = state.since
        passing = state.passing or {}
        started, position = self._pass_start(client, spec, passing)
        # The upstream time of the pass's start: what the mirror is complete to after it.
        began = passing.get("time") or utc_text(now)
        report.full_load = since is None
        report.plan = _cursor_plan(since, position if passing else None)
        self._emit(KindStarted(spec.name, report.plan))

        def meta(at: Position) -> dict[str, str]:
            value = {"next": at.next_index, "total": at.total, "start": started, "time": began}
            return {key: replace(state, upstream=self.upstream, passing=value).to_json()}

        extra = {} if since is None else {"since_generation": since}
        self._read(client, spec, None, None, start=position, report=report, meta=meta, extra=extra)
        self._call(client, spec, {"results_per_page": 1, "start_index": 0}, None)
        self.store.set_meta(key, self._pass_end(spec, state, started, began).to_json())
        self._emit(KindFinished(report))

    def _pass_end(
        self, spec: Operation, state: CursorState, started: int, began: str
    ) -> CursorState:
        """The cursor after a pass: complete to `began` when no write happened upstream
        while it ran, else to be read again from where it started."""
        ended = self._transport.generation
        if ended == started:
            return CursorState(
                upstream=self.upstream, since=started, reached=parse_record_timestamp(began)
            )
        self._emit(
            Notice(
                f"{spec.label}: the upstream changed while they were read (generation "
                f"{started} to {ended}); the next run reads them again from the same point"
            )
        )
        return replace(state, upstream=self.upstream, passing=None)

    def _pass_start(
        self, client: NvdClient, spec: Operation, passing: dict[str, Any]
    ) -> tuple[int, Position]:
        """The upstream generation a pass by the change cursor started at, and where it
        goes on: those of the pass `passing` left unfinished, or a new pass's."""
        if passing:
            return passing["start"], Position(passing["next"], passing["total"])
        self._call(client, spec, {"results_per_page": 1, "start_index": 0}, None)
        assert self._transport.generation is not None
        return self._transport.generation, Position()

    def _read(
        self,
        client: NvdClient,
        spec: Operation,
        base: Checkpoint | None,
        window: Window | None,
        *,
        start: Position,
        report: KindReport,
        meta: Callable[[Position], dict[str, str]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Read one listing from `start` to its end, committing a checkpoint per page
        (`base` moved to the page's position, or what `meta` makes of it)."""
        write = HANDLERS[spec.record].write
        timings = self.report.timings
        pages = self._pages(client, spec, window, start, extra or {})
        if self.options.prefetch:
            pages = read_ahead(pages, 1, name="assay-sync-fetch", wait=False)
        clock = time.perf_counter
        waiting = clock()
        for page in pages:
            began = clock()
            timings["idle"] += began - waiting
            if meta is not None:
                checkpoint = meta(page.position)
            else:
                assert base is not None
                checkpoint = {spec.checkpoint_key: base.at(page.position).to_json()}
            counts = write(self.store, page.facts, checkpoint)
            waiting = clock()
            timings["write"] += waiting - began
            report.pages += 1
            report.fetched += page.received
            report.counts += counts
            report.rejected += len(page.problems)
            for problem in page.problems:
                self._problem(problem)
            self._emit(
                PageStored(
                    spec.name,
                    window,
                    page.start_index,
                    page.received,
                    page.position,
                    counts,
                    len(page.problems),
                )
            )
            if report.pages % GC_EVERY_PAGES == 0:
                gc.collect()

    def _pages(
        self,
        client: NvdClient,
        spec: Operation,
        window: Window | None,
        start: Position,
        extra: dict[str, Any],
    ) -> Iterator[_Fetched]:
        """Fetch and check the pages of one listing (runs one page ahead of the writer)."""
        size = min(self.options.page_size or spec.max_page, spec.max_page)
        position = start
        empty_pages = 0
        guard = WalkGuard(size)
        while not position.done:
            index = position.next_index
            params = _page_params(
                spec, window, {**extra, "results_per_page": size, "start_index": index}
            )
            began = time.perf_counter()
            result = self._call(client, spec, params, window)
            records = result.records()
            fetched = time.perf_counter()
            try:
                after = advance(
                    position, start_index=index, received=len(records), total=result.total_results
                )
            except UpstreamInconsistent as error:
                # NVD under load now and then answers an empty page before the end: ask again.
                if empty_pages >= self.options.max_retries:
                    raise SyncError(f"{self._where(spec, window)}: {error}") from error
                self._emit(Notice(f"{self._where(spec, window)}: {error}; asking again"))
                time.sleep(min(self.options.max_backoff, self.options.backoff * 2**empty_pages))
                empty_pages += 1
                continue
            empty_pages = 0
            facts, problems = self._check(spec, records, index)
            self._guard_walk(guard, index, result.total_results, facts, spec=spec, window=window)
            guard.moved(index, len(records))
            position = after
            self.report.timings["fetch"] += fetched - began
            self.report.timings["check"] += time.perf_counter() - fetched
            yield _Fetched(index, len(records), facts, problems, position)

    def _guard_walk(
        self,
        guard: WalkGuard,
        index: int,
        total: int,
        facts: list[Any],
        *,
        spec: Operation,
        window: Window | None,
    ) -> None:
        """Stop a listing whose pages run away (`WalkGuard`)."""
        try:
            guard.check(index, total, [record_id(fact) or "" for fact in facts])
        except UpstreamRunaway as error:
            raise SyncError(
                f"{self._where(spec, window)}, {error}; nothing more is read from this "
                "listing (the pages before are stored)"
            ) from error

    def _check(
        self, spec: Operation, records: list[Any], index: int
    ) -> tuple[list[Any], list[str]]:
        """The store facts of each record; a record that fails the checks is reported."""
        make = HANDLERS[spec.record].facts
        facts: list[Any] = []
        problems: list[str] = []
        for offset, record in enumerate(records):
            where = f"$.{spec.list_key}[{offset}]" + (f".{spec.wrapper}" if spec.wrapper else "")
            raw = record.raw_json
            try:
                value = orjson.loads(memoryview(raw)) if raw else record.raw
                facts.append(make(value, where))
            except InputError as error:
                problems.append(
                    f"{self.upstream}{spec.path} startIndex={index} at {error.where}: "
                    f"{error.reason}"
                )
        return facts, problems

    # -- upstream ------------------------------------------------------------------------

    def _call(
        self, client: NvdClient, spec: Operation, params: dict[str, Any], window: Window | None
    ) -> Result:
        self._calls += 1
        try:
            result: Result = getattr(client, spec.method)(**params)
        except NvdClientError as error:
            # A cap or a redirect elsewhere comes back the same on the next run.
            same_again = isinstance(error, NvdResponseTooLarge | NvdRedirectError)
            raise SyncError(
                f"{self._where(spec, window)}, startIndex={params['start_index']}: {error}; "
                "everything up to the last checkpoint is stored"
                + ("" if same_again else ", run again to resume")
            ) from error
        except InvalidQuery as error:  # pragma: no cover - the engine builds valid queries
            raise SyncError(f"{self._where(spec, window)}: {error}") from error
        return result

    def _upstream_time(self, client: NvdClient, spec: Operation) -> datetime:
        """The upstream's clock (the `timestamp` of a one-record answer), else ours; never
        later than ours plus `FUTURE_MARGIN` (checkpoints follow this time)."""
        result = self._call(client, spec, {"results_per_page": 1, "start_index": 0}, None)
        if result.timestamp:
            try:
                upstream = parse_record_timestamp(result.timestamp)
            except InputError:
                pass
            else:
                latest = datetime.now(UTC) + FUTURE_MARGIN
                if upstream <= latest:
                    return upstream
                self.report.clock_refused = result.timestamp
                self._problem(
                    f"{self.upstream}{spec.path} at $.timestamp: {result.timestamp[:40]!r} is "
                    f"later than this machine's clock plus {FUTURE_MARGIN} (h:mm:ss); "
                    "that bound is used as the upstream's time"
                )
                return latest
        self._emit(
            Notice(
                f"the upstream sent no usable timestamp ({result.timestamp!r}); "
                "using this machine's clock"
            )
        )
        return datetime.now(UTC)

    def _where(self, spec: Operation, window: Window | None) -> str:
        if window is None:
            return f"{spec.label} from {self.upstream}{spec.path} (full load)"
        start, end = (moment.isoformat() for moment in window)
        return f"{spec.label} from {self.upstream}{spec.path} (window {start} to {end})"

    # -- store ---------------------------------------------------------------------------

    def _load(self, spec: Operation) -> Checkpoint | None:
        text = self.store.get_meta(spec.checkpoint_key)
        if text is None:
            return None
        return Checkpoint.from_json(text, f"store meta {spec.checkpoint_key}")

    def _save(self, spec: Operation, checkpoint: Checkpoint) -> None:
        self.store.set_meta(spec.checkpoint_key, checkpoint.to_json())

    def _problem(self, text: str) -> None:
        _log.info("rejected: %s", text)
        if len(self.report.problems) < MAX_REPORTED_PROBLEMS:
            self.report.problems.append(text)
        self._emit(Notice(f"rejected {text}"))


def _cursor_plan(since: int | None, resumed: Position | None) -> str:
    """What a pass by the change cursor reads: everything, or what was written upstream
    since generation `since`; resumed where an unfinished pass stopped."""
    plan = (
        "everything (full load, by the upstream's change cursor)"
        if since is None
        else f"written upstream since its generation {since} (change cursor)"
    )
    return plan if resumed is None else f"{plan}, resumed at {resumed.next_index}"


def _page_params(spec: Operation, window: Window | None, params: dict[str, Any]) -> dict[str, Any]:
    """A page's call arguments: `params`, and the window's bounds when there is one."""
    if window is not None:
        start_param, end_param = spec.window_arguments
        params[start_param], params[end_param] = window
    return params
