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
"""

from __future__ import annotations

import sqlite3

DEFAULT_THREADS = 8
MAX_THREADS = 256
DEFAULT_SQLITE_CACHE_MIB = 128
MAX_SQLITE_CACHE_MIB = 64 * 1024


def limit_sqlite_heap(mebibytes: int) -> int:
    """Set SQLite's process-wide soft heap limit (0 lifts it); the limit now in force."""
    connection = sqlite3.connect(":memory:")
    try:
        row = connection.execute(f"PRAGMA soft_heap_limit = {int(mebibytes) * 2**20}").fetchone()
    finally:
        connection.close()
    return int(row[0]) if row else 0
