"""What an import of record files did, counted the same way by every importer of files
(`assay osv import`, `assay cve import`): inputs named and failed, records added,
updated, unchanged and rejected, other files skipped, and each problem named."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Counts", "ImportTally"]


class Counts(Protocol):
    """What a store's batch write answers."""

    added: int
    updated: int
    unchanged: int


@dataclass(slots=True)
class ImportTally:
    files: int = 0
    """Paths named (files, folders, archives)."""
    failed_files: int = 0
    """Paths that could not be read at all (not a zip, not JSON, missing)."""
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    skipped: int = 0
    """Files in folders and archives that are not records (left alone)."""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.rejected and not self.failed_files

    def record_counts(self) -> dict[str, int]:
        """The `records` counts of an importer's `--json` summary."""
        return {"added": self.added, "updated": self.updated, "unchanged": self.unchanged}

    def file_counts(self) -> dict[str, object]:
        """The leading `ok`, `files` and `failedFiles` of an importer's `--json` summary."""
        return {"ok": self.ok, "files": self.files, "failedFiles": self.failed_files}

    def count(self, counts: Counts) -> None:
        """Add a batch write's counts."""
        self.added += counts.added
        self.updated += counts.updated
        self.unchanged += counts.unchanged
