"""Python's cyclic garbage collector during a bulk load: paused, then run at batch ends.

A bulk load allocates millions of small containers (each record's parsed JSON and
facts) that die with their batch; left to itself the collector runs every 700
allocations and, as long-lived objects accumulate, walks all of them again and again:
17-18 % of the CPU of both the reader and the writer of a 150,000-CVE import. Paused,
it collects the young generations once a batch, so the cycles a batch makes (a rejected
record's exception and its frames) are still freed, and everything every
`FULL_EVERY` batches and at the end.
"""

from __future__ import annotations

import gc

FULL_EVERY = 32


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
        gc.collect(2 if self._batches % FULL_EVERY == 0 else 1)
