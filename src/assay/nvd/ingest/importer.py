"""Batch records from files into a store: validated, idempotent, transactional.

A malformed record is rejected (and reported with file, position and reason) before it
reaches the store; a file that turns out to be malformed part-way loses only the batch
in progress, which was never committed, so the store stays as it was before that batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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

DEFAULT_BATCH_SIZE = 1000
MAX_REPORTED_PROBLEMS = 1000


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
        pending: dict[str, list[Any]] = {}
        try:
            with path.open("rb") as raw:
                for member in members(path, raw):
                    for record in read_member(member):
                        self._take(record.kind, record.value, member.name, record.position, pending)
                        batch = pending.get(record.kind)
                        if batch is not None and len(batch) >= self.batch_size:
                            self._flush(record.kind, pending)
                            if self._on_progress:
                                self._on_progress(raw.tell())
                for kind in list(pending):
                    self._flush(kind, pending)
                if self._on_progress:
                    self._on_progress(raw.tell())
        except IngestError as error:
            self.report.failed_files += 1
            self._problem(f"{error}; the batch in progress was not stored")
        except OSError as error:
            self.report.failed_files += 1
            self._problem(f"{path}: cannot read: {error.strerror or error}")

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

    def _flush(self, kind: str, pending: dict[str, list[Any]]) -> None:
        batch = pending.pop(kind, [])
        if batch:
            counts = HANDLERS[kind].write(self.store, batch)
            self.report.counts.setdefault(kind, UpsertCounts())
            self.report.counts[kind] += counts

    def _problem(self, text: str) -> None:
        if len(self.report.problems) < MAX_REPORTED_PROBLEMS:
            self.report.problems.append(text)
        if self._on_problem:
            self._on_problem(text)
