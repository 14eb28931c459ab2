"""Loading CVE JSON 5 records into a store: files, folders and zip archives.

    with Cve5Importer(store) as importer:
        importer.import_path(Path("cvelistV5/cves"))       # a checkout, or a part of one
        importer.import_path(Path("2025-07-02_all_CVEs_at_midnight.zip.zip"))
    importer.report.records.added

Every `.json` file (in a folder, or a member of a zip archive) that claims to be a CVE
record (`"dataType": "CVE_RECORD"`) is read strictly (`assay.cve5.record`) and stored;
any other file (`delta.json`, a README, a LICENSE, a workflow) is skipped and counted.
A zip inside a zip (cvelistV5's baseline `..._all_CVEs_at_midnight.zip.zip` holds
`cves.zip`) is opened in turn, through a temporary file. A record that is not valid is
rejected (named by file and JSON path) and the others are kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Final, Protocol

from assay import _json_strict
from assay.cve5.record import (
    MAX_DEPTH,
    MAX_RECORD_BYTES,
    Cve5Error,
    CveRecord,
    looks_like_record,
    record_from_value,
)
from assay.errors import IngestError, InputError
from assay.import_tally import Counts, ImportTally

__all__ = ["Counts", "Cve5ImportReport", "Cve5Importer"]

BATCH: Final = 500
MAX_NESTING: Final = 2  # a zip in a zip, and no deeper
MAX_MEMBERS: Final = 2_000_000


class _Writer(Protocol):
    def upsert_cve5(
        self, batch: Sequence[CveRecord], *, meta: Mapping[str, str] | None = None
    ) -> Counts: ...


@dataclass(slots=True)
class Cve5ImportReport(ImportTally):
    def to_dict(self) -> dict[str, object]:
        """The `--json` document of `assay cve import` (docs/cli.md)."""
        return {
            **self.file_counts(),
            "rejected": self.rejected,
            "skipped": self.skipped,
            "records": {"cve5": self.record_counts()},
            "problems": list(self.problems),
        }


def _parsed(
    data: bytes, source: str, *, named: bool
) -> tuple[object, tuple[str, str] | None] | None:
    """The JSON value of a file's bytes and its first problem; None for a file that is
    no JSON, unless it was `named` on its own (then an `InputError`)."""
    try:
        return _json_strict.parse_checked(data, MAX_DEPTH)
    except (ValueError, RecursionError) as error:
        if not named:
            return None  # a `.json` that is no JSON is no record
        # A file named on its own that is no JSON: unusable input, not a record.
        raise InputError(source, f"expected a CVE JSON 5 record: {error}") from None


class Cve5Importer:
    """Stores records in batches; `close()` (or the `with` block's end) writes the last."""

    def __init__(
        self,
        store: _Writer,
        *,
        on_problem: Callable[[str], None] | None = None,
        on_record: Callable[[int], None] | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.report = Cve5ImportReport()
        self._batch: list[CveRecord] = []
        self._on_problem = on_problem
        self._on_record = on_record
        self._meta = meta
        self._seen = 0

    def __enter__(self) -> Cve5Importer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()

    def close(self) -> None:
        """Write what is left, with the `meta` values given (a sync's checkpoint) unless
        an input could not be read."""
        self._flush(final=True)

    def _flush(self, *, final: bool = False) -> None:
        meta = self._meta if final and not self.report.failed_files else None
        if not self._batch and not meta:
            return
        self.report.count(self.store.upsert_cve5(self._batch, meta=meta))
        self._batch = []

    def _problem(self, text: str) -> None:
        self.report.problems.append(text)
        if self._on_problem is not None:
            self._on_problem(text)

    # -- inputs ---------------------------------------------------------------------

    def import_path(self, path: Path) -> None:
        """A record file, a folder (walked, in name order) or a zip archive."""
        self.report.files += 1
        try:
            self._input(path)
        except (InputError, zipfile.BadZipFile, OSError) as error:
            self.report.failed_files += 1
            self._problem(
                error.diagnostics() if isinstance(error, InputError) else f"{path}: {error}"
            )

    def _input(self, path: Path) -> None:
        if path.is_dir():
            self._folder(path)
        elif zipfile.is_zipfile(path):
            with path.open("rb") as handle:
                self._zip(handle, str(path), 1)
        elif path.is_file():
            self._file(path, named=True)
        else:
            raise InputError(str(path), "no such file or folder")

    def _folder(self, path: Path) -> None:
        """Every file below the folder, in name order."""
        for folder, folders, files in os.walk(path):
            folders.sort()
            for name in sorted(files):
                self._file(Path(folder) / name)

    def _file(self, path: Path, *, named: bool = False) -> None:
        if path.suffix.lower() == ".zip" and zipfile.is_zipfile(path):
            with path.open("rb") as handle:
                self._zip(handle, str(path), 1)
            return
        if path.suffix.lower() != ".json" and not named:
            self.report.skipped += 1
            return
        data = self._read(path)
        if data is not None:
            self.import_bytes(data, str(path), named=named)

    def _read(self, path: Path) -> bytes | None:
        """A record file's bytes; None (rejected, the problem noted) when too large or
        unreadable."""
        try:
            size = path.stat().st_size
            if size > MAX_RECORD_BYTES:
                raise Cve5Error(str(path), "", f"expected at most {MAX_RECORD_BYTES} bytes")
            return path.read_bytes()
        except OSError as error:
            problem = f"{path}: cannot read: {error.strerror or error}"
        except Cve5Error as error:
            problem = error.diagnostics()
        self.report.rejected += 1
        self._problem(problem)
        return None

    def _zip(self, handle: IO[bytes], name: str, depth: int) -> None:
        with zipfile.ZipFile(handle) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise InputError(name, f"expected at most {MAX_MEMBERS} members, found more")
            for info in sorted(members, key=lambda i: i.filename):
                if not info.is_dir():
                    self._member(archive, info, f"{name}!{info.filename}", depth)

    def _member(
        self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, depth: int
    ) -> None:
        """One file of a zip: a zip in it read in turn, a `.json` file imported."""
        lower = info.filename.lower()
        if lower.endswith(".zip"):
            if depth >= MAX_NESTING:
                raise InputError(where, "expected at most a zip inside a zip")
            with tempfile.TemporaryFile() as spool:
                with archive.open(info) as member:
                    shutil.copyfileobj(member, spool, 1 << 20)
                spool.seek(0)
                self._zip(spool, where, depth + 1)
            return
        if not lower.endswith(".json"):
            self.report.skipped += 1
            return
        if info.file_size > MAX_RECORD_BYTES:
            self.report.rejected += 1
            self._problem(f"{where}: expected at most {MAX_RECORD_BYTES} bytes")
            return
        with archive.open(info) as member:
            data = member.read(MAX_RECORD_BYTES + 1)
        self.import_bytes(data, where)

    def import_bytes(self, data: bytes, source: str, *, named: bool = False) -> None:
        """One file's bytes: stored if it is a record, skipped if it is not one (unless
        it was `named` on its own: then it must be one)."""
        try:
            record = self._record(data, source, named=named)
        except IngestError as error:
            self.report.rejected += 1
            self._problem(error.diagnostics())
            return
        if record is None:
            self.report.skipped += 1
            return
        self._batch.append(record)
        self._seen += 1
        if self._on_record is not None:
            self._on_record(self._seen)
        if len(self._batch) >= BATCH:
            self._flush()

    @staticmethod
    def _record(data: bytes, source: str, *, named: bool) -> CveRecord | None:
        """The record in a file's bytes; None for a file that is no record (no JSON, or
        JSON without `dataType` CVE_RECORD), an `InputError` for one `named` on its own."""
        if len(data) > MAX_RECORD_BYTES:
            raise Cve5Error(source, "", f"expected at most {MAX_RECORD_BYTES} bytes")
        parsed = _parsed(data, source, named=named)
        if parsed is None:
            return None
        value, problem = parsed
        if not looks_like_record(value):
            if named:
                raise InputError(
                    source, "expected a CVE JSON 5 record (dataType CVE_RECORD), a folder or a zip"
                )
            return None
        if problem is not None:
            where, kind = problem
            raise Cve5Error(source, where, _json_strict.problem_reason(kind, MAX_DEPTH))
        return record_from_value(value, source, data)
