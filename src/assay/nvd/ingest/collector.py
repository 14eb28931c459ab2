"""Python's cyclic garbage collector during a bulk load: paused, then run every few batches.

A bulk load allocates millions of small containers (each record's parsed JSON and
facts). They die with their batch by reference counting: the records make no cycles
(a rejected record's exception is dropped at the end of its `except`). Left to itself
the collector still runs every 700 allocations and walks the surviving ones (the next
batches queued, remembered criteria) again and again: 17-18 % of the CPU of both the
reader and the writer of a 150,000-CVE import, and 10 % when run once a batch. So it
runs once every `COLLECT_EVERY` batches, and as usual again afterwards.
"""

from __future__ import annotations

import gc

COLLECT_EVERY = 32


class BatchCollector:
    """`with BatchCollector() as collector:` ... `collector.batch_done()` after each batch."""

    def __init__(self) -> None:
        self._batches = 0
        self._was_enabled = False

    def __enter__(self) -> BatchCollector:
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *_: object) -> None:
        if self._was_enabled:
            gc.enable()

    def batch_done(self) -> None:
        self._batches += 1
        if self._batches % COLLECT_EVERY == 0:
            gc.collect()
