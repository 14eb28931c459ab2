"""OSV records into a store: files, folders and osv.dev's `all.zip` archives.

    report = OsvImporter(store).import_paths([Path("advisory-database/vulns"), Path("PyPI/all.zip")])

In a folder (read recursively, hidden entries left out) and in a zip archive, every
`.json`, `.yaml` and `.yml` file is a record; other files (a LICENSE, a README) are
skipped and counted. A record that cannot be read is rejected and named (file and JSON
path) in `report.problems`, and the others are stored; a file or archive that cannot be
read at all counts as failed. Records are written in batches (`upsert_osv`), each one
transaction.

Limits: a record file of at most `assay.osv.record.MAX_RECORD_BYTES` (archive members
are read no further than that, whatever their header says), at most
`MAX_ARCHIVE_MEMBERS` members in an archive.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assay.errors import IngestError
from assay.import_tally import ImportTally
from assay.osv.record import MAX_RECORD_BYTES, OsvRecord, read_record

if TYPE_CHECKING:
    from assay.nvd.storage.interface import Store

__all__ = ["RECORD_SUFFIXES", "ImportReport", "OsvImporter"]

RECORD_SUFFIXES: Final = (".json", ".yaml", ".yml")
MAX_ARCHIVE_MEMBERS: Final = 2_000_000
DEFAULT_BATCH: Final = 1000
MAX_PROBLEMS: Final = 1000
"""Problems kept for the report (the count of rejected records goes on)."""


@dataclass(slots=True)
class ImportReport(ImportTally):
    records: int = 0
    """Records read (stored or not)."""
    newest_modified: str | None = None
    """The latest `modified` (as `timestamp_key` writes it) of the records read."""

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def to_dict(self) -> dict[str, object]:
        """The `--json` summary of `assay osv import` (docs/cli.md)."""
        return {
            **self.file_counts(),
            "records": self.record_counts(),
            "rejected": self.rejected,
            "skipped": self.skipped,
            "problems": list(self.problems),
        }


class OsvImporter:
    def __init__(
        self,
        store: Store,
        *,
        batch_size: int = DEFAULT_BATCH,
        on_problem: Callable[[str], None] | None = None,
        on_record: Callable[[int], None] | None = None,
    ) -> None:
        self.store = store
        self.report = ImportReport()
        self._batch: list[OsvRecord] = []
        self._batch_size = batch_size
        self._on_problem = on_problem
        self._on_record = on_record

    def import_paths(
        self, paths: list[Path], *, meta: Mapping[str, str] | None = None
    ) -> ImportReport:
        """Import every path; `meta` is written with the last batch (a checkpoint)."""
        for path in paths:
            self.import_path(path)
        self.flush(meta=meta)
        return self.report

    def import_path(self, path: Path) -> None:
        self.report.files += 1
        try:
            if path.is_dir():
                self._folder(path)
            elif path.suffix.lower() == ".zip":
                self._archive(path)
            elif path.suffix.lower() in RECORD_SUFFIXES:
                self._record(_read_file(path), str(path))
            else:
                self.report.skipped += 1
        except (OSError, zipfile.BadZipFile, _Unreadable) as error:
            self.report.failed_files += 1
            self._problem(f"{path}: cannot read it: {error}")

    def add(self, data: bytes, source: str) -> None:
        """One record's bytes from elsewhere (a sync's download)."""
        self._record(data, source)

    def flush(self, *, meta: Mapping[str, str] | None = None) -> None:
        batch, self._batch = self._batch, []
        if batch or meta:
            self.report.count(self.store.upsert_osv(batch, meta=meta))

    def _problem(self, text: str) -> None:
        self.report.problem(text)
        if self._on_problem is not None:
            self._on_problem(text)

    def _record(self, data: bytes, source: str) -> None:
        self.report.records += 1
        if self._on_record is not None:
            self._on_record(self.report.records)
        try:
            record = read_record(data, source)
        except IngestError as error:
            self.report.rejected += 1
            self._problem(str(error))
            return
        newest = self.report.newest_modified
        if newest is None or record.modified_key > newest:
            self.report.newest_modified = record.modified_key
        self._batch.append(record)
        if len(self._batch) >= self._batch_size:
            self.flush()

    def _folder(self, folder: Path) -> None:
        for path in _walk(folder):
            if path.suffix.lower() in RECORD_SUFFIXES:
                try:
                    data = _read_file(path)
                except (OSError, _Unreadable) as error:
                    self.report.rejected += 1
                    self._problem(f"{path}: cannot read it: {error}")
                    continue
                self._record(data, str(path))
            else:
                self.report.skipped += 1

    def _archive(self, path: Path) -> None:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_ARCHIVE_MEMBERS:
                raise _Unreadable(
                    f"expected at most {MAX_ARCHIVE_MEMBERS} members, found {len(members)}"
                )
            for member in members:
                if member.is_dir():
                    continue
                name = f"{path}:{member.filename}"
                if not member.filename.lower().endswith(RECORD_SUFFIXES):
                    self.report.skipped += 1
                    continue
                with archive.open(member) as stream:
                    data = stream.read(MAX_RECORD_BYTES + 1)
                self._record(data, name)


class _Unreadable(Exception):
    pass


def _read_file(path: Path) -> bytes:
    with path.open("rb") as stream:
        return stream.read(MAX_RECORD_BYTES + 1)  # (more is refused by the reader)


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name
