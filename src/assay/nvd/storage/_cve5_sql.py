"""The store's CVE JSON 5, KEV and EPSS tables: one implementation for both backends.

    cve5      a CVE 5 record per CVE id: its `dateUpdated` and its bytes (packed as the
              NVD records are, `_records.pack`)
    cve5_key  the look-up keys of every `affected[]` entry of its containers
              (`assay.cve5.index`): CPE vendor/product, purl, collection, vendor/product
    kev       CISA's KEV catalogue, an entry per CVE
    epss      FIRST's EPSS score per CVE, with its date and model version

They are added to a store when it is opened, like any table the store lacks (no change of
schema version, no rebuild). Write rules: a CVE 5 record is replaced only by one with a
newer `dateUpdated`; the KEV catalogue is replaced whole (an entry CISA removed goes); an
EPSS score is replaced by one of a later date (or of the same date with other values).
Every write that changes something advances the store's data generation, in the same
transaction as the rows and the `meta` values given with it.

The backends differ only in how a statement runs (`Executor`): `SqliteCve5` here, the
PostgreSQL one in `_postgres_cve5.py`. The SQL is written with `?` placeholders.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import orjson

from assay.cve5.epss import EpssScore, EpssScores
from assay.cve5.index import affected_keys
from assay.cve5.kev import KevCatalogue, KevEntry, entry_from_value
from assay.cve5.record import CveRecord
from assay.errors import StoreError
from assay.nvd.storage._records import pack, unpack
from assay.nvd.storage._source_changes import (
    POSTGRES_CHANGES_SCHEMA,
    SQLITE_CHANGES_SCHEMA,
    SourceChanges,
    bump_and_mark,
)
from assay.nvd.storage._sqlite_io import write_transaction
from assay.nvd.storage.interface import UpsertCounts

SQLITE_CVE5_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS cve5 (
    cve_id TEXT PRIMARY KEY,
    date_updated TEXT NOT NULL,
    state TEXT NOT NULL,
    record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS cve5_key (
    key TEXT NOT NULL,
    cve_id TEXT NOT NULL,
    PRIMARY KEY (key, cve_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cve5_key_by_cve ON cve5_key (cve_id);
CREATE TABLE IF NOT EXISTS kev (
    cve_id TEXT PRIMARY KEY,
    date_added TEXT NOT NULL,
    due_date TEXT,
    ransomware TEXT,
    vendor_project TEXT NOT NULL,
    product TEXT NOT NULL,
    entry BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS epss (
    cve_id TEXT PRIMARY KEY,
    score REAL NOT NULL,
    percentile REAL NOT NULL,
    score_date TEXT NOT NULL,
    model_version TEXT NOT NULL
);
"""
    + SQLITE_CHANGES_SCHEMA
)

POSTGRES_CVE5_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS cve5 (
    cve_id TEXT COLLATE "C" PRIMARY KEY,
    date_updated TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL,
    record BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS cve5_key (
    key TEXT COLLATE "C" NOT NULL,
    cve_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (key, cve_id)
);
CREATE INDEX IF NOT EXISTS cve5_key_by_cve ON cve5_key (cve_id);
CREATE TABLE IF NOT EXISTS kev (
    cve_id TEXT COLLATE "C" PRIMARY KEY,
    date_added TEXT NOT NULL,
    due_date TEXT,
    ransomware TEXT,
    vendor_project TEXT NOT NULL,
    product TEXT NOT NULL,
    entry BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS epss (
    cve_id TEXT COLLATE "C" PRIMARY KEY,
    score DOUBLE PRECISION NOT NULL,
    percentile DOUBLE PRECISION NOT NULL,
    score_date TEXT COLLATE "C" NOT NULL,
    model_version TEXT NOT NULL
);
"""
    + POSTGRES_CHANGES_SCHEMA
)

CHUNK = 500  # ids per `IN (...)` look-up
META = (
    "INSERT INTO meta (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
EPSS_COLUMNS = ("cve_id", "score", "percentile", "score_date", "model_version")
EPSS_CONFLICT = (
    "ON CONFLICT (cve_id) DO UPDATE SET score = excluded.score, "
    "percentile = excluded.percentile, score_date = excluded.score_date, "
    "model_version = excluded.model_version "
    "WHERE excluded.score_date > epss.score_date OR (excluded.score_date = epss.score_date "
    "AND (excluded.score <> epss.score OR excluded.percentile <> epss.percentile "
    "OR excluded.model_version <> epss.model_version))"
)
KEV_UPSERT = (
    "INSERT INTO kev (cve_id, date_added, due_date, ransomware, vendor_project, product, entry) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cve_id) DO UPDATE SET "
    "date_added = excluded.date_added, due_date = excluded.due_date, "
    "ransomware = excluded.ransomware, vendor_project = excluded.vendor_project, "
    "product = excluded.product, entry = excluded.entry WHERE kev.entry <> excluded.entry"
)


class Executor(Protocol):
    """Runs one statement of the SQL above on a backend's connection."""

    def rows(self, statement: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]: ...

    def many(self, statement: str, params: Sequence[Sequence[object]]) -> int:
        """Runs it once per parameter row: the number of rows changed in all."""
        ...

    def load(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], conflict: str
    ) -> int:
        """`INSERT INTO table (columns) <rows> <conflict>` for many rows at once (a
        backend may stream them: PostgreSQL's COPY): the number of rows changed."""
        ...

    def load_changed(
        self,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        conflict: str,
        key: str,
    ) -> list[str]:
        """`load`, answering the `key` of each row inserted or changed (not those the
        conflict clause left as they were)."""
        ...


class Cve5Store(Protocol):
    """What the CVE 5, KEV and EPSS tables answer (both backends' stores have it)."""

    def upsert_cve5(
        self, batch: Sequence[CveRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts: ...

    def cve5_records(self, cve_ids: Sequence[str]) -> dict[str, bytes]: ...

    def cve5_lookup(self, keys: Sequence[str]) -> list[tuple[str, str]]: ...

    def count_cve5(self) -> int: ...

    def replace_kev(
        self, catalogue: KevCatalogue, *, meta: Mapping[str, str] | None = None
    ) -> tuple[UpsertCounts, int]: ...

    def change_kev(
        self,
        entries: Sequence[KevEntry],
        removed: Sequence[str],
        *,
        meta: Mapping[str, str] | None = None,
    ) -> tuple[UpsertCounts, int]: ...

    def source_changes(
        self, table: str, since: int | None, after: str, limit: int
    ) -> list[tuple[Any, ...]]: ...

    def kev_entries(self, cve_ids: Sequence[str]) -> dict[str, KevEntry]: ...

    def upsert_epss(
        self, scores: EpssScores, *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts: ...

    def epss_scores(self, cve_ids: Sequence[str]) -> dict[str, tuple[EpssScore, str, str]]:
        """Per CVE: its score, the day scored and the model version."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def close(self) -> None: ...

    def exclusive(self, name: str) -> AbstractContextManager[None]: ...


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def _in(count: int) -> str:
    return "(" + ", ".join("?" * count) + ")"


def _rows_in(run: Executor, statement: str, keys: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """The rows of `statement`, which ends in `IN`, for every one of `keys` (run for
    `CHUNK` of them at a time)."""
    for chunk in _chunks(keys):
        yield from run.rows(f"{statement} {_in(len(chunk))}", chunk)


def _write_meta(run: Executor, meta: Mapping[str, str] | None) -> None:
    if meta:
        run.many(META, list(meta.items()))


class Cve5Tables(SourceChanges):
    """The tables' methods over `_cve5_writing` / `_cve5_reading` (each backend's)."""

    if TYPE_CHECKING:

        def _cve5_writing(self, action: str) -> AbstractContextManager[Executor]: ...

        def _cve5_reading(self, action: str) -> AbstractContextManager[Executor]: ...

    def upsert_cve5(
        self, batch: Sequence[CveRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Insert or replace by CVE id; a record replaces a stored one only when its
        `dateUpdated` is later."""
        counts = UpsertCounts()
        latest = _latest_per_cve(batch)
        counts.unchanged += len(batch) - len(latest)
        with self._cve5_writing("writing CVE 5 records") as run:
            stored = {
                str(cve_id): str(updated)
                for cve_id, updated in _rows_in(
                    run, "SELECT cve_id, date_updated FROM cve5 WHERE cve_id IN", list(latest)
                )
            }
            written = [
                r
                for r in latest.values()
                if r.cve_id not in stored or r.date_updated > stored[r.cve_id]
            ]
            replaced = [r.cve_id for r in written if r.cve_id in stored]
            counts.added += len(written) - len(replaced)
            counts.updated += len(replaced)
            counts.unchanged += len(latest) - len(written)
            _delete_cve5(run, replaced)
            _insert_cve5(run, written)
            bump_and_mark(run, "cve5", [r.cve_id for r in written])
            _write_meta(run, meta)
        return counts

    def cve5_records(self, cve_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of those of `cve_ids` the store holds."""
        with self._cve5_reading("reading CVE 5 records") as run:
            return {
                str(cve_id): unpack(bytes(record))
                for cve_id, record in _rows_in(
                    run, "SELECT cve_id, record FROM cve5 WHERE cve_id IN", _distinct(cve_ids)
                )
            }

    def cve5_lookup(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """(key, CVE id) for every record with an `affected[]` entry found by one of `keys`
        (`assay.cve5.index`)."""
        with self._cve5_reading("looking up CVE 5 records") as run:
            return [
                (str(key), str(cve_id))
                for key, cve_id in _rows_in(
                    run, "SELECT key, cve_id FROM cve5_key WHERE key IN", _distinct(keys)
                )
            ]

    def count_cve5(self) -> int:
        with self._cve5_reading("counting CVE 5 records") as run:
            return int(run.rows("SELECT count(*) FROM cve5")[0][0])

    def replace_kev(
        self, catalogue: KevCatalogue, *, meta: Mapping[str, str] | None = None
    ) -> tuple[UpsertCounts, int]:
        """The catalogue becomes the store's: (entries added, changed, unchanged), and
        the number of entries no longer in it, removed."""
        return self._write_kev(catalogue.entries, None, meta)

    def change_kev(
        self,
        entries: Sequence[KevEntry],
        removed: Sequence[str],
        *,
        meta: Mapping[str, str] | None = None,
    ) -> tuple[UpsertCounts, int]:
        """A part of the catalogue: `entries` added or changed, the entries of `removed`
        taken out (a snapshot's delta); counted as `replace_kev` counts."""
        return self._write_kev(entries, removed, meta)

    def _write_kev(
        self,
        entries: Sequence[KevEntry],
        removed: Sequence[str] | None,
        meta: Mapping[str, str] | None,
    ) -> tuple[UpsertCounts, int]:
        rows = _kev_rows(entries)
        with self._cve5_writing("writing the KEV catalogue") as run:
            stored = {
                str(key): bytes(entry) for key, entry in run.rows("SELECT cve_id, entry FROM kev")
            }
            gone = _kev_leaving(stored, rows, removed)
            for chunk in _chunks(gone):
                run.rows(f"DELETE FROM kev WHERE cve_id IN {_in(len(chunk))}", chunk)
            changed = [row for row in rows if stored.get(row[0]) != row[6]]
            run.many(KEV_UPSERT, changed)
            added = sum(1 for row in changed if row[0] not in stored)
            counts = UpsertCounts(added, len(changed) - added, len(rows) - len(changed))
            bump_and_mark(run, "kev", [*(row[0] for row in changed), *gone])
            _write_meta(run, meta)
        return counts, len(gone)

    def kev_entries(self, cve_ids: Sequence[str]) -> dict[str, KevEntry]:
        with self._cve5_reading("reading KEV entries") as run:
            return {
                str(cve_id): entry_from_value(
                    orjson.loads(bytes(entry)), f"stored KEV entry {cve_id}"
                )
                for cve_id, entry in _rows_in(
                    run, "SELECT cve_id, entry FROM kev WHERE cve_id IN", _distinct(cve_ids)
                )
            }

    def upsert_epss(
        self, scores: EpssScores, *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        """Each score replaces a stored one of an earlier day (or of the same day, when
        it differs); a score of an earlier day than the stored one is left out."""
        counts = UpsertCounts()
        rows = [
            (s.cve_id, s.score, s.percentile, scores.score_date, scores.model_version)
            for s in {score.cve_id: score for score in scores.scores}.values()
        ]
        with self._cve5_writing("writing EPSS scores") as run:
            before = int(run.rows("SELECT count(*) FROM epss")[0][0])
            changed = run.load_changed("epss", EPSS_COLUMNS, rows, EPSS_CONFLICT, "cve_id")
            after = int(run.rows("SELECT count(*) FROM epss")[0][0])
            counts.added = after - before
            counts.updated = len(changed) - counts.added
            counts.unchanged = len(rows) - len(changed)
            bump_and_mark(run, "epss", changed)
            _write_meta(run, meta)
        return counts

    def epss_scores(self, cve_ids: Sequence[str]) -> dict[str, tuple[EpssScore, str, str]]:
        with self._cve5_reading("reading EPSS scores") as run:
            return {
                str(cve_id): (
                    EpssScore(str(cve_id), float(score), float(percentile)),
                    str(day),
                    str(model),
                )
                for cve_id, score, percentile, day, model in _rows_in(
                    run,
                    "SELECT cve_id, score, percentile, score_date, model_version FROM epss "
                    "WHERE cve_id IN",
                    _distinct(cve_ids),
                )
            }


def _distinct(keys: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(keys))


def _latest_per_cve(batch: Sequence[CveRecord]) -> dict[str, CveRecord]:
    """The first of the latest records of each CVE id (by `dateUpdated`)."""
    latest: dict[str, CveRecord] = {}
    for record in batch:
        known = latest.get(record.cve_id)
        if known is None or record.date_updated > known.date_updated:
            latest[record.cve_id] = record
    return latest


def _delete_cve5(run: Executor, cve_ids: Sequence[str]) -> None:
    for chunk in _chunks(cve_ids):
        run.rows(f"DELETE FROM cve5_key WHERE cve_id IN {_in(len(chunk))}", chunk)
        run.rows(f"DELETE FROM cve5 WHERE cve_id IN {_in(len(chunk))}", chunk)


def _insert_cve5(run: Executor, records: Sequence[CveRecord]) -> None:
    """The records' rows and their look-up keys (`assay.cve5.index`)."""
    run.many(
        "INSERT INTO cve5 (cve_id, date_updated, state, record) VALUES (?, ?, ?, ?)",
        [(r.cve_id, r.date_updated, r.state, pack(r.raw)) for r in records],
    )
    run.many(
        "INSERT INTO cve5_key (key, cve_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [
            (key, r.cve_id)
            for r in records
            for container in r.containers
            for affected in container.affected
            for key in affected_keys(affected)
        ],
    )


def _kev_leaving(
    stored: Mapping[str, bytes], rows: Sequence[tuple[Any, ...]], removed: Sequence[str] | None
) -> list[str]:
    """The stored entries that go, in id order: those of `removed`, or (None: `rows` are
    the whole catalogue) every one the catalogue no longer has."""
    leaving = set(stored) - {row[0] for row in rows} if removed is None else set(removed)
    return sorted(leaving & set(stored))


def _kev_rows(entries: Sequence[KevEntry]) -> list[tuple[Any, ...]]:
    """The table's rows of the entries (the last of each CVE id)."""
    return [
        (
            e.cve_id,
            e.date_added,
            e.due_date,
            e.ransomware,
            e.vendor_project,
            e.product,
            orjson.dumps(e.to_dict(), option=orjson.OPT_SORT_KEYS),
        )
        for e in {entry.cve_id: entry for entry in entries}.values()
    ]


def cve5_store(store: object) -> Cve5Store:
    """`store` as a `Cve5Store` (every backend's store is one)."""
    if not hasattr(store, "upsert_cve5"):
        raise StoreError(f"{type(store).__name__} keeps no CVE 5, KEV or EPSS data")
    return cast(Cve5Store, store)


# -- SQLite -----------------------------------------------------------------------------


class SqliteExecutor:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def rows(self, statement: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(statement, params).fetchall()

    def many(self, statement: str, params: Sequence[Sequence[object]]) -> int:
        if not params:
            return 0
        before = self.connection.total_changes
        self.connection.executemany(statement, params)
        return self.connection.total_changes - before

    def load(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], conflict: str
    ) -> int:
        statement = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {_in(len(columns))} "
        return self.many(statement + conflict, rows)

    def load_changed(
        self,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        conflict: str,
        key: str,
    ) -> list[str]:
        """Through a temporary table, then one INSERT ... SELECT ... RETURNING (SQLite
        returns no rows from `executemany`)."""
        if not rows:
            return []
        names = ", ".join(columns)
        staging = f"temp.load_{table}"
        self.connection.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS load_{table} AS SELECT {names} FROM {table} WHERE 0"
        )
        self.connection.execute(f"DELETE FROM {staging}")
        self.connection.executemany(
            f"INSERT INTO {staging} ({names}) VALUES {_in(len(columns))}", rows
        )
        changed = self.connection.execute(
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {staging} WHERE true "
            f"{conflict} RETURNING {key}"
        ).fetchall()
        self.connection.execute(f"DELETE FROM {staging}")
        return [str(row[0]) for row in changed]


class SqliteCve5(Cve5Tables):
    """The SQLite store's CVE 5, KEV and EPSS tables (a `SqliteStore` mixin)."""

    if TYPE_CHECKING:
        path: Path

        def _connection(self) -> sqlite3.Connection: ...

        def _in_transaction(self) -> bool: ...

    @contextmanager
    def _cve5_writing(self, action: str) -> Iterator[Executor]:
        connection = self._connection()
        try:
            with write_transaction(connection, outer=self._in_transaction()):
                yield SqliteExecutor(connection)
        except sqlite3.Error as error:
            raise StoreError(f"{action}: the SQLite store at {self.path}: {error}") from error

    @contextmanager
    def _cve5_reading(self, action: str) -> Iterator[Executor]:
        try:
            yield SqliteExecutor(self._connection())
        except sqlite3.Error as error:
            raise StoreError(f"{action}: the SQLite store at {self.path}: {error}") from error
