"""The store seam: what the importer, the server and the mirror need from storage.

One interface, one module per backend (`sqlite.py`, `postgres.py`), chosen by URL
scheme in `open_store`. Every write method is one transaction: it either applies the
whole batch or leaves the store as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from assay.nvd.cve_query import CveQuery
from assay.nvd.cve_record import CveFacts


@dataclass(slots=True)
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0

    def __iadd__(self, other: UpsertCounts) -> UpsertCounts:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        return self


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a result set: the total size and the NVD-encoded records."""

    total: int
    records: list[bytes]


class Store(Protocol):
    url: str

    def upsert_cves(self, batch: Sequence[CveFacts]) -> UpsertCounts:
        """Insert or update by CVE id; an older `lastModified` never replaces a newer one."""
        ...

    def search_cves(self, query: CveQuery) -> Page:
        """The page of matching records, ordered by published then id."""
        ...

    def count_cves(self) -> int: ...

    def get_meta(self, key: str) -> str | None:
        """A small named value (sync checkpoints, data generation)."""
        ...

    def set_meta(self, key: str, value: str) -> None: ...

    def close(self) -> None: ...
