"""Batch records from files into a store: validated, idempotent, transactional.

A malformed record is rejected (and reported with file, position and reason) before it
reaches the store; a file that turns out to be malformed part-way loses only the batch
in progress, which was never committed, so the store stays as it was before that batch.

Reading and checking run one or two batches ahead of the writes, which stay on the
calling thread: in a background thread by default, or, with `reader_process=True` (what
`assay nvd import` uses), in a reader process of its own, so that checking (about a
third of the CPU time of a CVE) runs on another core than the store's writes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import IngestError, InputError
from assay.nvd.change_record import change_facts
from assay.nvd.cpe_record import cpe_facts
from assay.nvd.cpematch_record import match_facts
from assay.nvd.cve_record import Criteria, CveFacts, cve_facts
from assay.nvd.defaults import DEFAULT_BATCH_SIZE, LAST_IMPORT_KEY
from assay.nvd.ingest.ahead import read_ahead
from assay.nvd.ingest.clock import not_from_the_future
from assay.nvd.ingest.collector import BatchCollector
from assay.nvd.ingest.sources import members, read_member
from assay.nvd.source_record import source_facts
from assay.nvd.storage.interface import Store, UpsertCounts

MAX_REPORTED_PROBLEMS = 1000
READ_AHEAD_BATCHES = 2
PARENT_CHECK_SECONDS = 1.0  # how soon a reader process notices its importer is gone


@dataclass(frozen=True, slots=True)
class RecordHandler:
    """How one record kind is checked and written."""

    facts: Callable[[Any, str], Any]
    write: Callable[[Store, list[Any], Mapping[str, str] | None], UpsertCounts]
    """Upsert a batch and set the meta values, in one transaction."""


# Import and sync check records with these: a record from the future is refused in both.
HANDLERS: dict[str, RecordHandler] = {
    "cve": RecordHandler(
        not_from_the_future(cve_facts),
        lambda store, batch, meta: store.upsert_cves(batch, meta=meta),
    ),
    "cpe": RecordHandler(
        not_from_the_future(cpe_facts),
        lambda store, batch, meta: store.upsert_cpes(batch, meta=meta),
    ),
    "cpematch": RecordHandler(
        not_from_the_future(match_facts),
        lambda store, batch, meta: store.upsert_match_strings(batch, meta=meta),
    ),
    "change": RecordHandler(
        not_from_the_future(change_facts),
        lambda store, batch, meta: store.upsert_changes(batch, meta=meta),
    ),
    "source": RecordHandler(
        not_from_the_future(source_facts),
        lambda store, batch, meta: store.upsert_sources(batch, meta=meta),
    ),
}


@dataclass
class ImportReport:
    counts: dict[str, UpsertCounts] = field(default_factory=dict)
    rejected: int = 0
    files: int = 0
    failed_files: int = 0
    problems: list[str] = field(default_factory=list)

    def total(self) -> UpsertCounts:
        total = UpsertCounts()
        for counts in self.counts.values():
            total += counts
        return total

    @property
    def ok(self) -> bool:
        return not self.rejected and not self.failed_files


# What a reader hands the writer: (kind, checked records, bytes of the file read so far,
# problems found in them, how many records those problems rejected).
Batch = tuple[str, list[Any], int, list[str], int]


class Importer:
    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        on_progress: Callable[[int], None] | None = None,
        on_problem: Callable[[str], None] | None = None,
        reader_process: bool = False,
        atomic: bool = False,
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.atomic = atomic
        """Each file in one transaction: a file with a rejected record or an error
        stores nothing (otherwise each batch is committed as it is written)."""
        self.report = ImportReport()
        self._on_progress = on_progress
        self._on_problem = on_problem
        self._reader: _ReaderProcess | None = _ReaderProcess(batch_size) if reader_process else None
        self._bulk: AbstractContextManager[None] | None = None

    def __enter__(self) -> Importer:
        """An import session: its writes are the store's bulk load (`Store.bulk_load`)."""
        bulk = self.store.bulk_load()
        bulk.__enter__()
        self._bulk = bulk
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reader process, if there is one, and end the bulk load."""
        try:
            if self._reader is not None:
                self._reader.close()
        finally:
            bulk, self._bulk = self._bulk, None
            if bulk is not None:
                bulk.__exit__(None, None, None)

    def import_files(self, paths: Iterable[Path]) -> ImportReport:
        for path in paths:
            self.import_file(path)
        if self.report.files:
            finished = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            self.store.set_meta(LAST_IMPORT_KEY, finished)
        return self.report

    def import_file(self, path: Path) -> None:
        self.report.files += 1
        batches = self._batches(path)
        counts_before = {kind: replace(counts) for kind, counts in self.report.counts.items()}
        rejected_before = self.report.rejected
        try:
            with (
                self.store.transaction() if self.atomic else contextlib.nullcontext(),
                BatchCollector() as collector,
            ):
                self._store_batches(batches, collector)
                if self.atomic and self.report.rejected > rejected_before:
                    raise _RejectedRecords(self.report.rejected - rejected_before)
        except _RejectedRecords as error:
            self.report.counts = counts_before
            self._problem(f"{path}: {error.count} record(s) rejected; {self._lost} (--atomic)")
        except (IngestError, OSError) as error:
            self._file_failed(path, error, counts_before)

    def _file_failed(
        self, path: Path, error: IngestError | OSError, counts_before: dict[str, UpsertCounts]
    ) -> None:
        """Count a file that failed part-way (what an atomic one stored is undone) and
        tell why."""
        self.report.failed_files += 1
        if self.atomic:
            self.report.counts = counts_before
        if isinstance(error, IngestError):
            self._problem(f"{error}; {self._lost}")
        else:
            self._problem(f"{path}: cannot read: {error.strerror or error}")

    def _batches(self, path: Path) -> Iterator[Batch]:
        """The file's checked batches, read in the reader process or a thread."""
        if self._reader is not None:
            return self._reader.batches(path)
        return read_ahead(
            check_batches(path, self.batch_size), READ_AHEAD_BATCHES, name="assay-import-reader"
        )

    @property
    def _lost(self) -> str:
        """What a file that fails leaves unstored."""
        if self.atomic:
            return "nothing of the file was stored"
        return "the batch in progress was not stored"

    def _store_batches(self, batches: Iterable[Batch], collector: BatchCollector) -> None:
        for kind, batch, position, problems, rejected in batches:
            self.report.rejected += rejected
            for problem in problems:
                self._problem(problem)
            if batch:
                self._write(kind, batch)
            if self._on_progress:
                self._on_progress(position)
            collector.batch_done()

    def _write(self, kind: str, batch: list[Any]) -> None:
        counts = HANDLERS[kind].write(self.store, batch, None)
        self.report.counts.setdefault(kind, UpsertCounts())
        self.report.counts[kind] += counts

    def _problem(self, text: str) -> None:
        if len(self.report.problems) < MAX_REPORTED_PROBLEMS:
            self.report.problems.append(text)
        if self._on_problem:
            self._on_problem(text)


class _RejectedRecords(Exception):
    """Ends an atomic file's transaction: some of its records were rejected."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} record(s) rejected")
        self.count = count


# What a damaged or truncated archive or compressed stream raises while it is read.
_DAMAGED = (EOFError, zlib.error, tarfile.TarError, zipfile.BadZipFile)


def check_batches(path: Path, batch_size: int) -> Iterator[Batch]:
    """Read and check a file's records, batch by batch; the last batch is empty and gives
    the final position. Raises IngestError or OSError where the file itself fails."""
    pending: dict[str, list[Any]] = {}
    problems: list[str] = []
    rejected = 0

    def take(kind: str, value: Any, source: str, position: str) -> None:
        nonlocal rejected
        handler = HANDLERS.get(kind)
        if handler is None:
            rejected += 1
            problems.append(f"{source} at {position}: {kind} records cannot be imported")
            return
        try:
            facts = handler.facts(value, position)
        except InputError as error:
            rejected += 1
            problems.append(f"{source} at {error.where}: {error.reason}")
            return
        pending.setdefault(kind, []).append(facts)

    def flush(kind: str, position: int) -> Batch:
        nonlocal problems, rejected
        batch = (kind, pending.pop(kind, []), position, problems, rejected)
        problems, rejected = [], 0
        return batch

    position = 0
    with path.open("rb") as raw:
        try:
            for member in members(path, raw):
                for record in read_member(member):
                    take(record.kind, record.value, member.name, record.position)
                    if len(pending.get(record.kind, ())) >= batch_size:
                        position = raw.tell()
                        yield flush(record.kind, position)
        except (*_DAMAGED, IngestError, OSError) as error:
            if problems:  # the records rejected before the file failed are still told
                pending.clear()
                yield flush("", position)
            if isinstance(error, _DAMAGED):
                raise IngestError(
                    str(path), "", f"the compressed data is damaged or truncated ({error})"
                ) from None
            raise
        for kind in list(pending):
            yield flush(kind, raw.tell())
        yield flush("", raw.tell())


class _ReaderProcess:
    """`check_batches` in a process of its own (started on first use, then kept for
    every file), at most `READ_AHEAD_BATCHES` batches ahead of the writer."""

    def __init__(self, batch_size: int) -> None:
        self._batch_size = batch_size
        # spawn, not fork: the parent may run threads (a fork copies their locks).
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._requests: Any = None
        self._items: Any = None

    def _start(self) -> None:
        self._requests = self._context.Queue()
        self._items = self._context.Queue(maxsize=READ_AHEAD_BATCHES)
        self._process = self._context.Process(
            target=_serve_reads,
            args=(self._batch_size, self._requests, self._items, os.getpid()),
            name="assay-import-reader",
            daemon=True,
        )
        self._process.start()

    def batches(self, path: Path) -> Iterator[Batch]:
        if self._process is None:
            self._start()
        self._requests.put(str(path))
        finished = False
        try:
            while (message := self._next_message())[0] == "batch":
                yield _restored(message[1])
            finished = True
            _raise_failure(message)
        finally:
            if not finished:
                # Left part-way (the writer failed): the reader is still on this file.
                self.close()

    def _next_message(self) -> tuple[Any, ...]:
        """The reader's next message, waited for as long as the reader lives."""
        while True:
            try:
                message: tuple[Any, ...] = self._items.get(timeout=1.0)
            except queue.Empty:
                if not self._process.is_alive():
                    raise OSError(
                        f"the reader process ended (exit code {self._process.exitcode})"
                    ) from None
                continue
            return message

    def close(self) -> None:
        if self._process is None:
            return
        process, self._process = self._process, None
        if process.is_alive():
            with contextlib.suppress(OSError, ValueError):
                self._requests.put(None)
            process.join(timeout=0.5)
        if process.is_alive():
            process.kill()
            process.join()
        for channel in (self._requests, self._items):
            channel.cancel_join_thread()
            channel.close()


def _raise_failure(message: tuple[Any, ...]) -> None:
    """Raise the failure a reader's last message for a file tells (none for `end`)."""
    tag = message[0]
    if tag == "ingest-error":
        raise IngestError(*message[1])
    if tag != "end":
        raise OSError(message[1])


def _serve_reads(batch_size: int, requests: Any, items: Any, parent: int) -> None:
    """The reader process: check each file asked for, handing over batch by batch.

    It ends when told to, or when the importer that started it (`parent`) is gone:
    killed, the importer cannot say so, and a reader blocked on a queue would otherwise
    outlive it."""

    def end_if_orphaned() -> None:
        if os.getppid() != parent:
            # Right away: a normal exit would wait for the queue's feeder thread, which
            # is blocked writing to a pipe that nobody reads any more.
            os._exit(0)

    def receive() -> Any:
        while True:
            try:
                return requests.get(timeout=PARENT_CHECK_SECONDS)
            except queue.Empty:
                end_if_orphaned()

    def send(message: tuple[Any, ...]) -> None:
        while True:
            try:
                items.put(message, timeout=PARENT_CHECK_SECONDS)
                return
            except queue.Full:
                end_if_orphaned()

    for path in iter(receive, None):
        try:
            with BatchCollector() as collector:
                for batch in check_batches(Path(path), batch_size):
                    send(("batch", _portable(batch)))
                    collector.batch_done()
        except IngestError as error:
            send(("ingest-error", (error.source, error.position, error.reason)))
        except OSError as error:
            send(("os-error", error.strerror or str(error)))
        else:
            send(("end",))


# CVE facts cross to the writer as plain tuples: named tuples pickle through Python code
# on both sides (`__getnewargs__`, then `__new__`: ~35 us of CPU a CVE), plain ones in C
# (~17 us, most of it the record's bytes).
_CRITERIA_FIELD = CveFacts._fields.index("criteria")
_new_tuple = tuple.__new__


def _portable(batch: Batch) -> Batch:
    kind, records, position, problems, rejected = batch
    if kind != "cve":
        return batch
    plain: dict[int, tuple[Any, ...]] = {}  # one plain tuple per shared Criteria
    portable = []
    for facts in records:
        criteria = tuple(
            [plain.get(id(c)) or plain.setdefault(id(c), tuple(c)) for c in facts.criteria]
        )
        portable.append((*facts[:_CRITERIA_FIELD], criteria, *facts[_CRITERIA_FIELD + 1 :]))
    return kind, portable, position, problems, rejected


def _restored(batch: Batch) -> Batch:
    kind, records, position, problems, rejected = batch
    if kind != "cve":
        return batch
    new = _new_tuple
    restored = [
        new(
            CveFacts,
            (
                *values[:_CRITERIA_FIELD],
                tuple([new(Criteria, c) for c in values[_CRITERIA_FIELD]]),
                *values[_CRITERIA_FIELD + 1 :],
            ),
        )
        for values in records
    ]
    return kind, restored, position, problems, rejected
