"""Recently served records, decompressed, kept per data generation.

The records of a popular product come back in query after query (every `cpeName` of
Juniper Junos returns much the same 600 records, 50 kB each); decompressing them is
most of what such a page costs the store. A bounded LRU by bytes keeps them decoded.
Any write moves the generation, and the first reader to see the new one empties the
cache, so a replaced record is never served from it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from assay.nvd.storage._cache import evict_oldest

DEFAULT_MAX_BYTES = 64 * 2**20
K = TypeVar("K", bound=Hashable)


class GenerationRecords(Generic[K]):
    """Records by any key (row id, CVE id...), kept for one data generation."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._max = max_bytes
        self._size = 0
        self._generation = -1
        self._records: OrderedDict[K, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, generation: int, row_ids: list[K]) -> dict[K, bytes]:
        """The cached ones of `row_ids`, as of `generation` (read before the records)."""
        with self._lock:
            if generation != self._generation:
                if generation > self._generation:
                    self._records.clear()
                    self._size = 0
                    self._generation = generation
                return {}
            found: dict[K, bytes] = {}
            for row_id in row_ids:
                record = self._records.get(row_id)
                if record is not None:
                    self._records.move_to_end(row_id)
                    found[row_id] = record
            return found

    def advance(self, generation: int) -> None:
        """Move to `generation` when it is newer (what was kept goes)."""
        with self._lock:
            if generation > self._generation:
                self._records.clear()
                self._size = 0
                self._generation = generation

    def put_many(self, generation: int, records: dict[K, bytes]) -> None:
        """Keep `records`, read after `generation` was (a reader that saw an older
        generation may hold records older than the cache's: they are not kept)."""
        with self._lock:
            if generation != self._generation:
                return
            for row_id, record in records.items():
                if len(record) > self._max // 8 or row_id in self._records:
                    continue
                self._records[row_id] = record
                self._size += len(record)
            self._size = evict_oldest(self._records, self._size, self._max)


class DecodedRecords(GenerationRecords[int]):
    """Decoded records by row id (the SQLite store's)."""


class KeptCves(GenerationRecords[str]):
    """Decoded records by CVE id, for `cveId` look-ups (the SQLite store's)."""
