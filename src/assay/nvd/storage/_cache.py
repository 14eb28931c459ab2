"""A bounded cache of ordered result-id lists, keyed by data generation and query.

Paging through a large result set (a client walking `startIndex` forward) then costs
one query for the whole set and a slice per page: no page is an O(startIndex) scan.
A write bumps the generation, so stale lists are never served.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Hashable, Sized
from typing import TypeVar

MAX_CACHED_IDS = 8_000_000  # 64 MB of ids at most
MIN_CACHED_RESULTS = 2_000  # smaller result sets are cheaper to recompute than to keep

K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Sized)


def evict_oldest(entries: OrderedDict[K, V], size: int, limit: int) -> int:
    """Drop the least recently used of `entries` (holding `size` in all) until no more
    than `limit` is held: the size left."""
    while size > limit:
        _, evicted = entries.popitem(last=False)
        size -= len(evicted)
    return size


class ResultCache:
    def __init__(self, max_ids: int = MAX_CACHED_IDS) -> None:
        self._entries: OrderedDict[Hashable, array[int]] = OrderedDict()
        self._size = 0
        self._max = max_ids
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> array[int] | None:
        with self._lock:
            ids = self._entries.get(key)
            if ids is not None:
                self._entries.move_to_end(key)
            return ids

    def put(self, key: Hashable, ids: array[int]) -> None:
        if len(ids) < MIN_CACHED_RESULTS or len(ids) > self._max:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = ids
            self._size = evict_oldest(self._entries, self._size + len(ids), self._max)
