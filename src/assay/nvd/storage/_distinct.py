"""Row ids of values every backend stores once and links to (distinct criteria, CVSS
vectors), remembered across batches so a bulk load looks each one up once.

Pure. Such rows are never deleted, so an id remembered after its transaction committed
stays right for the life of the store; ids learned inside a transaction that rolls back
are forgotten with it. Each thread writes in its own transaction, so what is pending is
kept per thread (forgetting more than needed is always safe).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

# Keys are small (a 16-byte digest, a short vector): ~100 bytes an entry; a full NVD
# mirror has ~600,000 distinct criteria.
DEFAULT_LIMIT = 1_000_000


class RememberedIds(Generic[K]):
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._ids: dict[K, int] = {}
        self._local = threading.local()

    @property
    def _pending(self) -> list[K]:
        pending: list[K] | None = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    def get(self, key: K) -> int | None:
        return self._ids.get(key)

    def learn(self, key: K, row_id: int) -> None:
        """Remember `key`'s id, learned inside the current transaction."""
        if len(self._ids) >= self._limit:
            self._ids.clear()
        self._ids[key] = row_id
        self._pending.append(key)

    def committed(self) -> None:
        self._pending.clear()

    def rolled_back(self) -> None:
        for key in self._pending:
            self._ids.pop(key, None)
        self._pending.clear()
