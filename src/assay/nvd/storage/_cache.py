"""A bounded cache of ordered result-id lists, keyed by data generation and query.

Paging through a large result set (a client walking `startIndex` forward) then costs
one query for the whole set and a slice per page: no page is an O(startIndex) scan.
A write bumps the generation, so stale lists are never served.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Hashable

MAX_CACHED_IDS = 8_000_000  # 64 MB of ids at most
MIN_CACHED_RESULTS = 2_000  # smaller result sets are cheaper to recompute than to keep


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
            self._size += len(ids)
            while self._size > self._max:
                _, evicted = self._entries.popitem(last=False)
                self._size -= len(evicted)
