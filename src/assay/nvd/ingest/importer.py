"""Batch records from files into a store: validated, idempotent, transactional.

A malformed record is rejected (and reported with file, position and reason) before it
reaches the store; a file that turns out to be malformed part-way loses only the batch
in progress, which was never committed, so the store stays as it was before that batch.

Reading and checking run in a background thread, one or two batches ahead of the
writes, which stay on the calling thread: the store's work (SQLite releases the GIL
while it runs a statement) overlaps with the parsing of the next batch.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import IngestError, InputError
from assay.nvd.change_record import change_facts
from assay.nvd.cpe_record import cpe_facts
from assay.nvd.cpematch_record import match_facts
from assay.nvd.cve_record import cve_facts
from assay.nvd.ingest.sources import members, read_member
from assay.nvd.storage.interface import Store, UpsertCounts

DEFAULT_BATCH_SIZE = 5000
MAX_REPORTED_PROBLEMS = 1000
READ_AHEAD_BATCHES = 2


@dataclass(frozen=True, slots=True)
class RecordHandler:
    """How one record kind is checked and written."""

    facts: Callable[[Any, str], Any]
    write: Callable[[Store, list[Any]], UpsertCounts]


HANDLERS: dict[str, RecordHandler] = {
    "cve": RecordHandler(cve_facts, lambda store, batch: store.upsert_cves(batch)),
    "cpe": RecordHandler(cpe_facts, lambda store, batch: store.upsert_cpes(batch)),
    "cpematch": RecordHandler(match_facts, lambda store, batch: store.upsert_match_strings(batch)),
    "change": RecordHandler(change_facts, lambda store, batch: store.upsert_changes(batch)),
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


class Importer:
    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        on_progress: Callable[[int], None] | None = None,
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.report = ImportReport()
        self._on_progress = on_progress
        self._on_problem = on_problem

    def import_files(self, paths: Iterable[Path]) -> ImportReport:
        for path in paths:
            self.import_file(path)
        return self.report

    def import_file(self, path: Path) -> None:
        self.report.files += 1
        try:
            for kind, batch, position in _read_ahead(self._batches(path), READ_AHEAD_BATCHES):
                if batch:
                    self._write(kind, batch)
                if self._on_progress:
                    self._on_progress(position)
        except IngestError as error:
            self.report.failed_files += 1
            self._problem(f"{error}; the batch in progress was not stored")
        except OSError as error:
            self.report.failed_files += 1
            self._problem(f"{path}: cannot read: {error.strerror or error}")

    def _batches(self, path: Path) -> Iterator[tuple[str, list[Any], int]]:
        """(kind, checked records, bytes of the file read so far), batch by batch."""
        pending: dict[str, list[Any]] = {}
        with path.open("rb") as raw:
            for member in members(path, raw):
                for record in read_member(member):
                    self._take(record.kind, record.value, member.name, record.position, pending)
                    batch = pending.get(record.kind)
                    if batch is not None and len(batch) >= self.batch_size:
                        yield record.kind, pending.pop(record.kind), raw.tell()
            for kind in list(pending):
                yield kind, pending.pop(kind), raw.tell()
            yield "", [], raw.tell()

    def _take(
        self, kind: str, value: Any, source: str, position: str, pending: dict[str, list[Any]]
    ) -> None:
        handler = HANDLERS.get(kind)
        if handler is None:
            self.report.rejected += 1
            self._problem(f"{source} at {position}: {kind} records cannot be imported")
            return
        try:
            facts = handler.facts(value, position)
        except InputError as error:
            self.report.rejected += 1
            self._problem(f"{source} at {error.where}: {error.reason}")
            return
        pending.setdefault(kind, []).append(facts)

    def _write(self, kind: str, batch: list[Any]) -> None:
        counts = HANDLERS[kind].write(self.store, batch)
        self.report.counts.setdefault(kind, UpsertCounts())
        self.report.counts[kind] += counts

    def _problem(self, text: str) -> None:
        if len(self.report.problems) < MAX_REPORTED_PROBLEMS:
            self.report.problems.append(text)
        if self._on_problem:
            self._on_problem(text)


_DONE = object()


def _read_ahead(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """`items`, produced by a background thread at most `depth` items ahead.

    An exception in the producer is raised here, after the items before it. If the
    consumer stops early (an exception of its own), the producer is told to stop.
    """
    buffer: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as error:  # handed to the consumer, which raises it
            put((_DONE, error))
            return
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()  # a generator left early still closes its files now
        put((_DONE, None))

    producer = threading.Thread(target=produce, name="assay-import-reader", daemon=True)
    producer.start()
    try:
        while True:
            item, error = buffer.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        producer.join()
