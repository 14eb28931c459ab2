"""A store written on its primary and read from its replicas (`assay serve --read-store`).

`ReplicatedStore` is a `Store` made of stores: a primary and its streaming replicas
(PostgreSQL hot standbys), each opened through `open_store`, so that the server, the
pages and the rate limit use it as any other store.

Which copy answers a read:

* a replica whose data generation is at least the *floor*, the replicas taking turns;
* else the primary;
* else, while the primary does not answer, the newest replica that does: reads go on.

The floor is the newest generation this process knows of: every generation it has
served, and the primary's own. Each copy is watched by a thread of its own that reads
its generation every `REFRESH_SECONDS`; a request reads no generation but the one it is
answered at, so a copy that stops answering does not hold requests up. A server
therefore never answers from a copy older than an answer it already gave, and a replica
lagging more than about a second behind its primary is left out until it has caught up
(the primary or a fresher replica answers meanwhile). `read_at_generation` reads the
generation and the page from one copy, so the generation an answer carries
(`x-assay-generation`) is that of the copy it was read from.

A copy that cannot be reached (it refuses or drops connections, is shutting down or
starting up, cannot be opened, or has not answered its watcher for `SILENT_AFTER`
seconds) is closed and left out for a while, 1 s doubling to `MAX_BACKOFF` seconds, then
opened again by its watcher; a read that failed on it is retried on the next copy, so
the client does not see it. Each copy waits at most `COPY_WAIT` seconds for a pooled
connection, so that a read on a copy that just went away, or is busy with as many reads
as it has connections, goes on to the next copy within that time (a busy copy is not
closed: it is left out only while its watcher cannot reach it either).
An operation that fails on a copy that answers (a statement out of time, a damaged
record) is the caller's error, as on a single store; a read a replica cancelled to
replay its primary's writes is retried on the next copy.

Writes (API keys, rate-limit counts, the time a generation was first served) go to the
primary. While the primary is left out, a write raises `WritesUnavailable` at once,
whose `reason` a server may show its client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, TypeVar, cast

from assay.errors import StoreBusy, StoreError, WritesUnavailable
from assay.nvd.storage._cve5_sql import Cve5Store, cve5_store
from assay.nvd.storage._records import DamagedRecord
from assay.nvd.storage.interface import ApiKey, Page, ServiceStore, Store, UpsertCounts
from assay.urls import redact_url

if TYPE_CHECKING:
    from assay.cve5.epss import EpssScore, EpssScores
    from assay.cve5.kev import KevCatalogue, KevEntry
    from assay.cve5.record import CveRecord
    from assay.nvd.change_record import ChangeFacts
    from assay.nvd.cpe_query import CpeQuery
    from assay.nvd.cpe_record import CpeFacts
    from assay.nvd.cpematch_query import CpeMatchQuery
    from assay.nvd.cpematch_record import MatchFacts
    from assay.nvd.cve_query import CveQuery
    from assay.nvd.cve_record import CveFacts
    from assay.nvd.history_query import HistoryQuery
    from assay.nvd.source_query import SourceQuery
    from assay.nvd.source_record import SourceFacts
    from assay.osv.record import OsvRecord

T = TypeVar("T")
REFRESH_SECONDS = 1.0  # how often each copy's watcher reads its generation
SILENT_AFTER = 3.0  # seconds without an answer to its watcher before a copy is left out
COPY_WAIT = 2.0  # seconds a read may wait for a pooled connection to one copy
FIRST_BACKOFF = 1.0  # seconds a failed copy is left out, doubling with each failure
MAX_BACKOFF = 30.0
_log = logging.getLogger("assay.store")


class Copy:
    """One copy of the data (the primary or a replica), opened when first used and
    watched by a thread of its own (`watch`)."""

    def __init__(self, name: str, url: str, opener: Callable[[str], Store]) -> None:
        self.name = name
        self.url = url
        self._opener = opener
        self._store: Store | None = None
        self._lock = threading.Lock()
        self.generation = -1  # as last read; -1 while unknown
        # Presumed to answer until its watcher finds otherwise.
        self.heard = time.monotonic()
        self.failures = 0
        self.retry_at = 0.0
        self.shut = False  # closed for good (`ReplicatedStore.close`)

    def describe(self) -> str:
        return f"{self.name} ({redact_url(self.url)})"

    def store(self) -> Store:
        with self._lock:
            if self.shut:
                raise StoreError(f"{self.describe()}: the store was closed")
            if self._store is None:
                try:
                    self._store = self._opener(self.url)
                except StoreError as error:
                    raise _OpenFailed(str(error)) from error
            return self._store

    def usable(self, now: float) -> bool:
        """Not left out, and heard from lately."""
        return now >= self.retry_at and now - self.heard <= SILENT_AFTER

    def probe(self) -> None:
        """Read the copy's generation: it answers, or it is left out."""
        try:
            generation = self.store().generation()
        except StoreError as error:
            # Busy: not heard from, so left out once silent for SILENT_AFTER, but not
            # closed under the reads that keep it busy.
            if not self.shut and failure_kind(error) != "busy":
                self.failed(error)
            return
        self.saw(generation)
        self.heard = time.monotonic()
        self.answered()

    def watch(self, stop: threading.Event) -> None:
        """Probe every REFRESH_SECONDS, and when a pause ends, until `stop` is set."""
        while not stop.is_set():
            if time.monotonic() >= self.retry_at:
                self.probe()
            stop.wait(max(REFRESH_SECONDS, self.retry_at - time.monotonic()))

    def saw(self, generation: int) -> None:
        self.generation = max(self.generation, generation)

    def failed(self, error: StoreError) -> None:
        """Leave the copy out for a while; it is opened afresh when tried again (a pool of
        broken connections would make that try wait for a free one)."""
        if time.monotonic() < self.retry_at:
            return  # (already left out: another read met the same outage)
        self.failures += 1
        pause = min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (self.failures - 1))
        self.retry_at = time.monotonic() + pause
        self.heard = self.retry_at  # (to be heard from again once the pause ends)
        _log.warning("store: %s left out for %g s: %s", self.describe(), pause, error)
        self.close()

    def answered(self) -> None:
        if self.failures:
            _log.warning("store: %s answers again", self.describe())
            self.failures = 0
            self.retry_at = 0.0

    def close(self) -> None:
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.close()


class _OpenFailed(StoreError):
    """A copy could not be opened (unreachable, or no store there)."""


# SQLSTATE classes of a server that cannot serve: connection exceptions, and shutting
# down or starting up (57P01-57P05).
_AWAY_STATES = ("08", "57P")
# A hot standby cancels a read whose rows its replay must remove or lock
# ("canceling statement due to conflict with recovery"): that copy's moment, not the read's.
_CONFLICT_STATES = ("40001",)


def failure_kind(error: StoreError) -> str | None:
    """`away` when `error` says its copy cannot be reached; `busy` when no connection to
    it became free in time (every one in use, or a pool of connections a restart broke);
    `conflict` when a replica cancelled the read to replay its primary's writes; None
    when the operation failed on a copy that answers (a statement out of time): the
    caller's error."""
    if isinstance(error, _OpenFailed):
        return "away"
    import psycopg
    from psycopg_pool import PoolTimeout

    for cause in _causes(error):
        if isinstance(cause, PoolTimeout):
            return "busy"
        if isinstance(cause, psycopg.Error):
            return _state_kind(cause.sqlstate)
    return None


def _causes(error: BaseException) -> Iterator[BaseException]:
    """What led to `error`, nearest first."""
    cause = error.__cause__ or error.__context__
    while cause is not None:
        yield cause
        cause = cause.__cause__ or cause.__context__


def _state_kind(state: str | None) -> str | None:
    """`failure_kind` of a PostgreSQL error of SQLSTATE `state`."""
    if state is None or state.startswith(_AWAY_STATES):
        return "away"
    return "conflict" if state in _CONFLICT_STATES else None


class ReplicatedStore:
    """A primary and its replicas as one store (see the module docstring)."""

    inline_reads = False  # reads cross the network: in worker threads

    def __init__(
        self,
        primary_url: str,
        replica_urls: Sequence[str],
        opener: Callable[[str], Store],
        *,
        timeout: float | None = None,
    ) -> None:
        self.url = primary_url
        self.operation_timeout = timeout  # (`assay.nvd.server.store_calls`)
        self.primary = Copy("primary", primary_url, opener)
        self.replicas = [
            Copy(f"replica {number}", url, opener)
            for number, url in enumerate(replica_urls, start=1)
        ]
        self._seen = 0  # the newest generation this process knows of (the floor)
        self._turn = 0
        self._local = threading.local()  # the copy `read_at_generation` holds, per thread
        self._stop = threading.Event()
        for copy in (self.primary, *self.replicas):
            threading.Thread(
                target=copy.watch, args=(self._stop,), name=f"assay-{copy.name}", daemon=True
            ).start()

    # -- which copy ----------------------------------------------------------------------

    def copies(self, at_least: int = 0) -> list[Copy]:
        """The copies a read tries, best first (see the module docstring); no I/O."""
        now = time.monotonic()
        self._seen = max(self._seen, self.primary.generation)
        floor = max(at_least, self._seen)
        self._turn = (self._turn + 1) % max(1, len(self.replicas))
        turned = self.replicas[self._turn :] + self.replicas[: self._turn]
        fresh = [copy for copy in turned if copy.usable(now) and copy.generation >= floor]
        behind = [copy for copy in turned if copy.usable(now) and copy.generation < floor]
        order = fresh + ([self.primary] if self.primary.usable(now) else [])
        order += sorted(behind, key=lambda copy: -copy.generation)
        # Every copy left out: try them all rather than fail without asking.
        return order or [self.primary, *self.replicas]

    def _retry_elsewhere(self, copy: Copy, error: StoreError) -> bool:
        """After `error` on `copy`: whether to try the next copy (leaving this one out
        when it cannot be reached)."""
        kind = None if isinstance(error, DamagedRecord) else failure_kind(error)
        if kind == "away":
            copy.failed(error)
        return kind is not None

    def _pinned(self) -> Copy | None:
        """The copy this thread's reads go to (inside `read_at_generation` or a block of
        writes), if any."""
        pinned: Copy | None = getattr(self._local, "copy", None)
        return pinned

    def _first_answer(self, copies: list[Copy], attempt: Callable[[Copy], T]) -> T:
        """`attempt` on each of `copies` in turn until one answers; a failure that is the
        caller's is raised at once, and the last one when no copy answers."""
        failure: StoreError | None = None
        for copy in copies:
            try:
                result = attempt(copy)
            except StoreError as error:
                if not self._retry_elsewhere(copy, error):
                    raise
                failure = error
                continue
            copy.answered()
            return result
        assert failure is not None
        raise failure

    def _read(self, call: Callable[[Store], T]) -> T:
        pinned = self._pinned()
        if pinned is not None:
            return call(pinned.store())
        return self._first_answer(self.copies(), lambda copy: call(copy.store()))

    def read_at_generation(self, read: Callable[[], T], *, at_least: int = 0) -> tuple[int, T]:
        pinned = self._pinned()
        if pinned is not None:
            return pinned.store().generation(), read()
        generation, result = self._first_answer(
            self.copies(at_least), lambda copy: self._read_on(copy, read)
        )
        self._seen = max(self._seen, generation)
        return generation, result

    def _read_on(self, copy: Copy, read: Callable[[], T]) -> tuple[int, T]:
        """`read` with this thread's reads pinned to `copy`, and the generation it read."""
        self._local.copy = copy
        try:
            generation = copy.store().generation()
            result = read()
        finally:
            self._local.copy = None
        copy.saw(generation)
        return generation, result

    def _lazy_reads(self) -> Copy:
        """The copy a lazy read goes to: a failure part-way is the caller's to see."""
        return self._pinned() or self.copies()[0]

    # -- writes: the primary only -----------------------------------------------------

    def _write(self, call: Callable[[Store], T], *, moves_generation: bool = False) -> T:
        primary = self.primary
        if not primary.usable(time.monotonic()) and primary.failures:
            raise WritesUnavailable(
                f"writing: {primary.describe()} is left out after {primary.failures} "
                "failure(s); reads are served from the replicas"
            )
        try:
            store = primary.store()
            result = call(store)
            if moves_generation:  # what this process wrote, it reads back
                self._seen = max(self._seen, store.generation())
        except StoreError as error:
            if isinstance(error, StoreBusy | WritesUnavailable) or failure_kind(error) != "away":
                raise
            primary.failed(error)
            raise WritesUnavailable(f"writing failed on {primary.describe()}: {error}") from error
        primary.answered()
        return result

    @contextmanager
    def _on_primary(self, block: Callable[[Store], AbstractContextManager[None]]) -> Iterator[None]:
        """A block of writes on the primary; this thread's reads in it go there too."""
        manager = self._write(block)
        with manager:
            self._local.copy = self.primary
            try:
                yield
            finally:
                self._local.copy = None

    # -- the Store interface ------------------------------------------------------------

    def generation(self) -> int:
        generation, _ = self.read_at_generation(lambda: None)
        return generation

    def get_meta(self, key: str) -> str | None:
        return self._read(lambda store: store.get_meta(key))

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda store: store.set_meta(key, value))

    def upsert_cves(
        self, batch: Sequence[CveFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: s.upsert_cves(batch, meta=meta), moves_generation=True)

    def search_cves(self, query: CveQuery) -> Page:
        return self._read(lambda store: store.search_cves(query))

    def find_cves(self, queries: Sequence[CveQuery]) -> Iterator[tuple[bytes, tuple[int, ...]]]:
        yield from self._lazy_reads().store().find_cves(queries)

    def count_cves(self) -> int:
        return self._read(lambda store: store.count_cves())

    def count_cves_by_status(self) -> dict[str, int]:
        return self._read(lambda store: store.count_cves_by_status())

    def upsert_cpes(
        self, batch: Sequence[CpeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: s.upsert_cpes(batch, meta=meta), moves_generation=True)

    def search_cpes(self, query: CpeQuery) -> Page:
        return self._read(lambda store: store.search_cpes(query))

    def upsert_match_strings(
        self, batch: Sequence[MatchFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(
            lambda s: s.upsert_match_strings(batch, meta=meta), moves_generation=True
        )

    def search_match_strings(self, query: CpeMatchQuery) -> Page:
        return self._read(lambda store: store.search_match_strings(query))

    def cve_naming_criteria(self, match_criteria_id: str) -> str | None:
        return self._read(lambda store: store.cve_naming_criteria(match_criteria_id))

    def upsert_changes(
        self, batch: Sequence[ChangeFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: s.upsert_changes(batch, meta=meta), moves_generation=True)

    def search_changes(self, query: HistoryQuery) -> Page:
        return self._read(lambda store: store.search_changes(query))

    def upsert_sources(
        self, batch: Sequence[SourceFacts], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: s.upsert_sources(batch, meta=meta), moves_generation=True)

    def search_sources(self, query: SourceQuery) -> Page:
        return self._read(lambda store: store.search_sources(query))

    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: s.upsert_osv(batch, meta=meta), moves_generation=True)

    def count_osv(self) -> int:
        return self._read(lambda store: store.count_osv())

    def osv_by_id(self, osv_id: str) -> bytes | None:
        return self._read(lambda store: store.osv_by_id(osv_id))

    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[bytes]]:
        return self._read(lambda store: store.osv_for_packages(packages))

    def osv_for_package(self, ecosystem: str, name: str) -> list[bytes]:
        return self._read(lambda store: store.osv_for_package(ecosystem, name))

    def osv_by_alias(self, alias: str) -> list[bytes]:
        return self._read(lambda store: store.osv_by_alias(alias))

    def osv_for_commit(self, commit: str) -> list[bytes]:
        return self._read(lambda store: store.osv_for_commit(commit))

    def osv_ecosystems(self) -> list[str]:
        return self._read(lambda store: store.osv_ecosystems())

    def iter_osv(self, ecosystem: str | None = None) -> Iterator[bytes]:
        yield from self._lazy_reads().store().iter_osv(ecosystem)

    def exclusive(self, name: str) -> AbstractContextManager[None]:
        return self._write(lambda store: store.exclusive(name))

    def bulk_load(self) -> AbstractContextManager[None]:
        return self._on_primary(lambda store: store.bulk_load())

    def transaction(self) -> AbstractContextManager[None]:
        return self._on_primary(lambda store: store.transaction())

    def close(self) -> None:
        self._stop.set()
        for copy in (self.primary, *self.replicas):
            copy.shut = True
            copy.close()

    # -- the service's part (`ServiceStore`): keys and counts are written on the primary,
    # and the rate limit reads its counts where it writes them.

    def add_api_key(self, name: str, key_digest: bytes, created: str) -> None:
        self._write(lambda store: _service(store).add_api_key(name, key_digest, created))

    def api_keys(self) -> list[ApiKey]:
        return self._read(lambda store: _service(store).api_keys())

    def revoke_api_key(self, name: str) -> bool:
        return self._write(lambda store: _service(store).revoke_api_key(name))

    def api_key_named_by(self, key_digest: bytes) -> tuple[str, bytes] | None:
        return self._read(lambda store: _service(store).api_key_named_by(key_digest))

    def note_api_key_use(self, name: str, when: str) -> None:
        self._write(lambda store: _service(store).note_api_key_use(name, when))

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]:
        return self._write(
            lambda store: _service(store).take_hits(
                client, bucket, window_start=window_start, want=want, limit=limit, expires=expires
            )
        )

    def hits_in_window(self, client: str, window_start: int, bucket: int) -> list[tuple[int, int]]:
        return self._write(
            lambda store: _service(store).hits_in_window(client, window_start, bucket)
        )

    def prune_hits(self, now: int) -> None:
        self._write(lambda store: _service(store).prune_hits(now))

    def table_rows(self) -> dict[str, int]:
        return self._read(lambda store: _service(store).table_rows())

    # -- CVE 5, KEV and EPSS (`_cve5_sql.Cve5Store`) ----------------------------------

    def upsert_cve5(
        self, batch: Sequence[CveRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: _cve5(s).upsert_cve5(batch, meta=meta), moves_generation=True)

    def cve5_records(self, cve_ids: Sequence[str]) -> dict[str, bytes]:
        return self._read(lambda store: _cve5(store).cve5_records(cve_ids))

    def cve5_lookup(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        return self._read(lambda store: _cve5(store).cve5_lookup(keys))

    def count_cve5(self) -> int:
        return self._read(lambda store: _cve5(store).count_cve5())

    def replace_kev(
        self, catalogue: KevCatalogue, *, meta: Mapping[str, str] | None = None
    ) -> tuple[UpsertCounts, int]:
        return self._write(lambda s: _cve5(s).replace_kev(catalogue, meta=meta))

    def kev_entries(self, cve_ids: Sequence[str]) -> dict[str, KevEntry]:
        return self._read(lambda store: _cve5(store).kev_entries(cve_ids))

    def upsert_epss(
        self, scores: EpssScores, *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        return self._write(lambda s: _cve5(s).upsert_epss(scores, meta=meta))

    def epss_scores(self, cve_ids: Sequence[str]) -> dict[str, tuple[EpssScore, str, str]]:
        return self._read(lambda store: _cve5(store).epss_scores(cve_ids))


def _service(store: Store) -> ServiceStore:
    return cast(ServiceStore, store)


def _cve5(store: Store) -> Cve5Store:
    return cve5_store(store)
