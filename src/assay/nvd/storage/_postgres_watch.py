"""The data generation of a PostgreSQL store, as the server announces it.

A `cveId` look-up is one indexed read; on PostgreSQL the round trip that makes it (and
the worker-thread hop a blocking read needs in a server) costs several times the read.
The records of a generation are kept (`_decoded.GenerationRecords`); what a server
lacks to answer from them without the network is the certainty that the generation
has not moved. A trigger on `meta` announces every change of the generation
(`NOTIFY assay_generation, '<schema>'`, sent at commit by whichever process wrote), and
one thread per store listens for it and reads the generation after each announcement,
and once a second besides (which also proves the connection alive).

The generation it gives (`current`) is therefore never older than the last write of
another process by more than the announcement's delivery (well under a millisecond on
one host), and never older than a write of this process: every store of the process on
the same database and schema shares one watch (`shared_watch`), each calls `invalidate`
after its own writes, and nothing is given until the listener has read the generation
again. While the listener is not connected, or has confirmed nothing for
`MAX_SILENCE` seconds (a network that drops packets), nothing is given either: the
caller reads through the network as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg

from assay.errors import StoreError
from assay.nvd.storage._postgres_rows import Connection

CHANNEL = "assay_generation"
HEARTBEAT = 1.0  # seconds between two reads of the generation when nothing is announced
MAX_SILENCE = 3.0  # seconds without a confirmed generation after which none is given
RETRY = (0.5, 30.0)  # first and longest wait before the listener connects again
GENERATION = "SELECT CAST(value AS bigint), current_schema() FROM meta WHERE key = 'generation'"
TRIGGER_NAME = "meta_generation_announced"
# Created where missing each time a store opens on a primary (stores made before have none).
ANNOUNCE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION assay_announce_generation() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$
"""
ANNOUNCE_TRIGGER = (
    f"CREATE TRIGGER {TRIGGER_NAME} AFTER UPDATE ON meta FOR EACH ROW "
    "WHEN (NEW.key = 'generation') EXECUTE FUNCTION assay_announce_generation()"
)
HAS_TRIGGER = "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass('meta') AND tgname = %s"


def announce_generation(connection: Connection) -> None:
    """Create the trigger that announces the store's generation, unless it exists."""
    if connection.execute(HAS_TRIGGER, (TRIGGER_NAME,)).fetchone() is not None:
        return
    connection.execute(ANNOUNCE_FUNCTION)
    connection.execute(ANNOUNCE_TRIGGER)


class GenerationWatch:
    """The generation a listening connection last read, while it can be trusted."""

    def __init__(self, connect: Callable[[], Connection]) -> None:
        self._connect = connect
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._epoch = 0  # moved by each write of this process (`invalidate`)
        # (epoch it was read in, generation, time.monotonic() of the read)
        self._known: tuple[int, int, float] | None = None

    def current(self) -> int | None:
        """The store's generation, or None when it cannot be vouched for without a read
        (the first call starts the listener)."""
        known = self._known
        if known is None:
            self.start()
            return None
        epoch, generation, confirmed = known
        if epoch != self._epoch or time.monotonic() - confirmed > MAX_SILENCE:
            return None
        return generation

    def invalidate(self) -> None:
        """A write of this process has committed: give nothing until the listener has
        read the generation again (the write's own announcement wakes it)."""
        with self._lock:
            self._epoch += 1

    def start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stopped.is_set():
                return
            self._thread = threading.Thread(
                target=self._listen, name="assay-store-generation", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """End the listener (within `HEARTBEAT` seconds; its thread is a daemon)."""
        self._stopped.set()
        self._known = None

    def _listen(self) -> None:
        wait = RETRY[0]
        while not self._stopped.is_set():
            try:
                with self._connect() as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    schema = self._read(connection)
                    wait = RETRY[0]
                    while not self._stopped.is_set():
                        self._await_announcement(connection, schema)
                        self._read(connection)
            except (psycopg.Error, StoreError):
                pass
            self._known = None
            self._stopped.wait(wait)
            wait = min(RETRY[1], wait * 2)

    def _read(self, connection: Connection) -> str:
        """Read the generation; its schema (the one announcements name)."""
        epoch = self._epoch
        row = connection.execute(GENERATION).fetchone()
        if row is None:
            raise StoreError("the store's meta table holds no generation")
        self._known = (epoch, int(row[0]), time.monotonic())
        return str(row[1])

    def _await_announcement(self, connection: Connection, schema: str) -> None:
        """Until the store's schema is announced, or `HEARTBEAT` seconds pass."""
        deadline = time.monotonic() + HEARTBEAT
        while (left := deadline - time.monotonic()) > 0 and not self._stopped.is_set():
            known = self._known
            if known is not None and known[0] != self._epoch:
                return  # (a write of this process came after the last read)
            for note in connection.notifies(timeout=left, stop_after=1):
                if note.payload == schema:
                    return


_SHARED: dict[str, tuple[GenerationWatch, int]] = {}  # watch and how many stores use it
_SHARED_LOCK = threading.Lock()


def shared_watch(key: str, connect: Callable[[], Connection]) -> GenerationWatch:
    """The watch of the store `key` names (its server and schema) for this process,
    made with `connect` by the first store that asks; `release_watch` when done."""
    with _SHARED_LOCK:
        watch, users = _SHARED.get(key, (None, 0))
        if watch is None:
            watch = GenerationWatch(connect)
        _SHARED[key] = (watch, users + 1)
        return watch


def release_watch(key: str) -> None:
    """One store of `key` is closed: the last one ends the listener."""
    with _SHARED_LOCK:
        watch, users = _SHARED.pop(key)
        if users > 1:
            _SHARED[key] = (watch, users - 1)
        else:
            watch.stop()
