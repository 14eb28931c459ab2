"""What bounds a serving process's memory, whatever the load.

Each worker thread that reads the store holds a SQLite connection, and each connection
has a page cache of its own (64 MiB allowed by the store's pragmas): under mixed load a
worker ran 40 threads, so 40 caches, and grew from 300 MiB to 3.5 GiB. Two bounds hold
it flat instead:

* SQLite's soft heap limit, which is process-wide: past it, every connection recycles
  its own least recently used pages instead of allocating new ones, so all of them
  together stay near the limit (the kernel's file cache still holds the database);
* a bounded pool of worker threads (anyio's default limiter, 40, lowered), so at most
  that many store operations, connections and pages being assembled at a time.

An answer's memory is bounded too: a page of up to 2,000 large records is tens of MB,
held from its store read until its last piece is sent, and a client can be slow to
read it. `LargeAnswers` lets a few such pages (`--large-answers`, per process) be in
flight at a time; the others wait their turn before they read the store, holding
nothing. Pieces are made as the socket takes them (`responses.Envelope`).
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from anyio.lowlevel import RunVar

DEFAULT_THREADS = 8
DEFAULT_LARGE_ANSWERS = 4
LARGE_PAGE_RECORDS = 100  # a page asked with more results per page than this is "large"
MAX_THREADS = 256
DEFAULT_SQLITE_CACHE_MIB = 128
MAX_SQLITE_CACHE_MIB = 64 * 1024


def limit_sqlite_heap(mebibytes: int) -> int:
    """Set SQLite's process-wide soft heap limit (0 lifts it); the limit now in force."""
    from assay.nvd.storage.sqlite import limit_heap  # (the storage package's connection)

    return limit_heap(mebibytes)


class LargeAnswers:
    """At most `slots` large answers in flight per event loop (see the module docstring)."""

    def __init__(self, slots: int = DEFAULT_LARGE_ANSWERS) -> None:
        self.slots = slots
        self._semaphore: RunVar[anyio.Semaphore] = RunVar("assay_large_answers")

    @staticmethod
    def is_large(results_per_page: int) -> bool:
        return results_per_page > LARGE_PAGE_RECORDS

    async def acquire(self) -> Callable[[], None]:
        """Wait for a slot; the function that gives it back (once, however often called)."""
        try:
            semaphore = self._semaphore.get()
        except LookupError:
            semaphore = anyio.Semaphore(self.slots)
            self._semaphore.set(semaphore)
        await semaphore.acquire()
        held = [True]

        def release() -> None:
            if held:
                held.clear()
                semaphore.release()

        return release
