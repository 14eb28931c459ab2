"""The SQLite store's OSV records (a `SqliteStore` mixin; tables in `_osv_sql.py`)."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from assay.errors import StoreError
from assay.nvd.storage._cve5_sql import SqliteExecutor
from assay.nvd.storage._osv_sql import (
    INDEX_INSERT_SQLITE,
    OSV_INDEX_TABLES,
    OsvRows,
    latest_per_id,
)
from assay.nvd.storage._records import pack, unpack
from assay.nvd.storage._source_changes import bump_and_mark
from assay.nvd.storage._sqlite_products import write_meta
from assay.nvd.storage.interface import UpsertCounts
from assay.osv.names import normalized_name
from assay.osv.record import OsvRecord

T = TypeVar("T")
P = ParamSpec("P")
_CHUNK = 500


def _store_errors(method: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as error:
            path = getattr(args[0], "path", "")
            raise StoreError(f"the SQLite store at {path}: {error}") from error

    return call


class OsvStoreMixin:
    if TYPE_CHECKING:

        def _connection(self) -> sqlite3.Connection: ...

        def _in_transaction(self) -> bool: ...

    @_store_errors
    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        counts = UpsertCounts()
        latest = latest_per_id(batch)
        counts.unchanged += len(batch) - len(latest)
        connection = self._connection()
        outer = self._in_transaction()
        try:
            if not outer:
                connection.execute("BEGIN IMMEDIATE")
            existing = _stored(connection, list(latest))
            row = int(connection.execute("SELECT coalesce(max(id), 0) FROM osv").fetchone()[0])
            added: list[tuple[object, ...]] = []
            index: dict[str, list[tuple[object, ...]]] = {table: [] for table in OSV_INDEX_TABLES}
            written: list[str] = []
            for record in latest.values():
                current = existing.get(record.id)
                if current is None:
                    row += 1
                    row_id = row
                    added.append(
                        (row_id, record.id, record.modified_key, record.withdrawn, pack(record.raw))
                    )
                    counts.added += 1
                else:
                    row_id, modified, stored = current
                    if record.modified_key < modified or record.raw == unpack(stored):
                        counts.unchanged += 1
                        continue
                    connection.execute(
                        "UPDATE osv SET modified = ?, withdrawn = ?, record = ? WHERE id = ?",
                        (record.modified_key, record.withdrawn, pack(record.raw), row_id),
                    )
                    for table in OSV_INDEX_TABLES:
                        connection.execute(f"DELETE FROM {table} WHERE osv = ?", (row_id,))
                    counts.updated += 1
                written.append(record.id)
                for table, rows in OsvRows.of(record).index_rows(row_id).items():
                    index[table].extend(rows)
            connection.executemany(
                "INSERT INTO osv (id, osv_id, modified, withdrawn, record) VALUES (?, ?, ?, ?, ?)",
                added,
            )
            for table, rows in index.items():
                rows.sort(key=repr)
                connection.executemany(INDEX_INSERT_SQLITE[table], rows)
            bump_and_mark(SqliteExecutor(connection), "osv", written)
            write_meta(connection, meta)
            if not outer:
                connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction and not outer:
                connection.execute("ROLLBACK")
            raise
        return counts

    @_store_errors
    def count_osv(self) -> int:
        return int(self._connection().execute("SELECT count(*) FROM osv").fetchone()[0])

    @_store_errors
    def osv_by_id(self, osv_id: str) -> bytes | None:
        row = (
            self._connection()
            .execute("SELECT record FROM osv WHERE osv_id = ?", (osv_id,))
            .fetchone()
        )
        return None if row is None else unpack(row[0])

    @_store_errors
    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[bytes]]:
        connection = self._connection()
        found: dict[tuple[str, str], list[bytes]] = {}
        records: dict[int, bytes] = {}
        began = not connection.in_transaction
        if began:
            connection.execute("BEGIN")  # one snapshot for every look-up
        try:
            for ecosystem, name in dict.fromkeys(packages):
                rows = connection.execute(
                    "SELECT o.id, o.record FROM osv_package p JOIN osv o ON o.id = p.osv "
                    "WHERE p.ecosystem = ? AND p.name = ? AND o.withdrawn IS NULL ORDER BY o.osv_id",
                    (ecosystem, normalized_name(ecosystem, name)),
                ).fetchall()
                found[(ecosystem, name)] = answer = []
                for row_id, stored in rows:
                    record = records.get(row_id)
                    if record is None:
                        record = records[row_id] = unpack(stored)
                    answer.append(record)
        finally:
            if began and connection.in_transaction:
                connection.execute("COMMIT")
        return found

    def osv_for_package(self, ecosystem: str, name: str) -> list[bytes]:
        return self.osv_for_packages([(ecosystem, name)])[(ecosystem, name)]

    @_store_errors
    def osv_ecosystems(self) -> list[str]:
        rows = self._connection().execute(
            "SELECT DISTINCT ecosystem FROM osv_package WHERE instr(ecosystem, ':') = 0 "
            "ORDER BY ecosystem"
        )
        return [str(ecosystem) for (ecosystem,) in rows]

    def iter_osv(self, ecosystem: str | None = None) -> Iterator[bytes]:
        connection = self._connection()
        last = ""
        while True:
            try:
                if ecosystem is None:
                    rows = connection.execute(
                        "SELECT osv_id, record FROM osv WHERE osv_id > ? ORDER BY osv_id LIMIT ?",
                        (last, _CHUNK),
                    ).fetchall()
                else:
                    rows = connection.execute(
                        "SELECT o.osv_id, o.record FROM osv o WHERE o.osv_id > ? AND EXISTS "
                        "(SELECT 1 FROM osv_package p WHERE p.osv = o.id AND p.ecosystem = ?) "
                        "ORDER BY o.osv_id LIMIT ?",
                        (last, ecosystem, _CHUNK),
                    ).fetchall()
            except sqlite3.Error as error:
                raise StoreError(f"the SQLite store: {error}") from error
            if not rows:
                return
            for _, stored in rows:
                yield unpack(stored)
            last = str(rows[-1][0])

    @_store_errors
    def osv_by_alias(self, alias: str) -> list[bytes]:
        return self._joined("osv_alias", "alias", alias)

    @_store_errors
    def osv_for_commit(self, commit: str) -> list[bytes]:
        return self._joined("osv_commit", "commit_hash", commit.lower())

    def _joined(self, table: str, column: str, value: str) -> list[bytes]:
        rows = self._connection().execute(
            f"SELECT o.record FROM {table} t JOIN osv o ON o.id = t.osv "
            f"WHERE t.{column} = ? AND o.withdrawn IS NULL ORDER BY o.osv_id",
            (value,),
        )
        return [unpack(stored) for (stored,) in rows]


def _stored(connection: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[int, str, bytes]]:
    found: dict[str, tuple[int, str, bytes]] = {}
    for chunk in _chunks(ids, _CHUNK):
        marks = ", ".join("?" * len(chunk))
        for osv_id, row_id, modified, record in connection.execute(
            f"SELECT osv_id, id, modified, record FROM osv WHERE osv_id IN ({marks})", chunk
        ):
            found[osv_id] = (row_id, modified, record)
    return found


def _chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
