"""The SQLite store's OSV records (a `SqliteStore` mixin; tables in `_osv_sql.py`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from assay.errors import StoreError
from assay.nvd.storage._cve5_sql import SqliteExecutor
from assay.nvd.storage._osv_sql import (
    INDEX_INSERT_SQLITE,
    OSV_INDEX_TABLES,
    OsvRows,
    osv_batch_writes,
)
from assay.nvd.storage._records import pack, unpack
from assay.nvd.storage._source_changes import bump_and_mark
from assay.nvd.storage._sqlite_io import (
    read_snapshot,
    select_in,
    store_errors,
    write_meta,
    write_transaction,
)
from assay.nvd.storage.interface import UpsertCounts
from assay.osv.names import normalized_name
from assay.osv.record import OsvRecord

_CHUNK = 500


class OsvStoreMixin:
    if TYPE_CHECKING:

        def _connection(self) -> sqlite3.Connection: ...

        def _in_transaction(self) -> bool: ...

    @store_errors
    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        latest, counts = osv_batch_writes(batch)
        connection = self._connection()
        with write_transaction(connection, outer=self._in_transaction()):
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
                elif _stored_stays(record, current):
                    counts.unchanged += 1
                    continue
                else:
                    row_id = current[0]
                    _replace(connection, row_id, record)
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
        return counts

    @store_errors
    def count_osv(self) -> int:
        return int(self._connection().execute("SELECT count(*) FROM osv").fetchone()[0])

    @store_errors
    def osv_by_id(self, osv_id: str) -> bytes | None:
        row = (
            self._connection()
            .execute("SELECT record FROM osv WHERE osv_id = ?", (osv_id,))
            .fetchone()
        )
        return None if row is None else unpack(row[0])

    @store_errors
    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[bytes]]:
        connection = self._connection()
        found: dict[tuple[str, str], list[bytes]] = {}
        records: dict[int, bytes] = {}
        with read_snapshot(connection):  # one snapshot for every look-up
            for ecosystem, name in dict.fromkeys(packages):
                rows = connection.execute(
                    "SELECT o.id, o.record FROM osv_package p JOIN osv o ON o.id = p.osv "
                    "WHERE p.ecosystem = ? AND p.name = ? AND o.withdrawn IS NULL ORDER BY o.osv_id",
                    (ecosystem, normalized_name(ecosystem, name)),
                ).fetchall()
                for row_id, stored in rows:
                    if row_id not in records:  # (a record found by several packages)
                        records[row_id] = unpack(stored)
                found[(ecosystem, name)] = [records[row_id] for row_id, _ in rows]
        return found

    def osv_for_package(self, ecosystem: str, name: str) -> list[bytes]:
        return self.osv_for_packages([(ecosystem, name)])[(ecosystem, name)]

    @store_errors
    def osv_ecosystems(self) -> list[str]:
        rows = self._connection().execute(
            "SELECT DISTINCT ecosystem FROM osv_package WHERE instr(ecosystem, ':') = 0 "
            "ORDER BY ecosystem"
        )
        return [str(ecosystem) for (ecosystem,) in rows]

    def iter_osv(self, ecosystem: str | None = None) -> Iterator[bytes]:
        connection = self._connection()
        last = ""
        while rows := _osv_page(connection, last, ecosystem):
            for _, stored in rows:
                yield unpack(stored)
            last = str(rows[-1][0])

    @store_errors
    def osv_by_alias(self, alias: str) -> list[bytes]:
        return self._joined("osv_alias", "alias", alias)

    @store_errors
    def osv_for_commit(self, commit: str) -> list[bytes]:
        return self._joined("osv_commit", "commit_hash", commit.lower())

    def _joined(self, table: str, column: str, value: str) -> list[bytes]:
        rows = self._connection().execute(
            f"SELECT o.record FROM {table} t JOIN osv o ON o.id = t.osv "
            f"WHERE t.{column} = ? AND o.withdrawn IS NULL ORDER BY o.osv_id",
            (value,),
        )
        return [unpack(stored) for (stored,) in rows]


def _osv_page(
    connection: sqlite3.Connection, after: str, ecosystem: str | None
) -> list[tuple[str, bytes]]:
    """The next records after the id `after`, in id order: of any ecosystem (None), or
    of those with a package in `ecosystem`."""
    try:
        if ecosystem is None:
            return connection.execute(
                "SELECT osv_id, record FROM osv WHERE osv_id > ? ORDER BY osv_id LIMIT ?",
                (after, _CHUNK),
            ).fetchall()
        return connection.execute(
            "SELECT o.osv_id, o.record FROM osv o WHERE o.osv_id > ? AND EXISTS "
            "(SELECT 1 FROM osv_package p WHERE p.osv = o.id AND p.ecosystem = ?) "
            "ORDER BY o.osv_id LIMIT ?",
            (after, ecosystem, _CHUNK),
        ).fetchall()
    except sqlite3.Error as error:
        raise StoreError(f"the SQLite store: {error}") from error


def _stored(connection: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[int, str, bytes]]:
    return {
        osv_id: (row_id, modified, record)
        for osv_id, row_id, modified, record in select_in(
            connection, "SELECT osv_id, id, modified, record FROM osv WHERE osv_id IN", ids, _CHUNK
        )
    }


def _stored_stays(record: OsvRecord, stored: tuple[int, str, bytes]) -> bool:
    """Whether the stored record stays: `record` is older, or the same."""
    _, modified, packed = stored
    return record.modified_key < modified or record.raw == unpack(packed)


def _replace(connection: sqlite3.Connection, row_id: int, record: OsvRecord) -> None:
    """The row `row_id` becomes `record`'s, without its index rows (written anew)."""
    connection.execute(
        "UPDATE osv SET modified = ?, withdrawn = ?, record = ? WHERE id = ?",
        (record.modified_key, record.withdrawn, pack(record.raw), row_id),
    )
    for table in OSV_INDEX_TABLES:
        connection.execute(f"DELETE FROM {table} WHERE osv = ?", (row_id,))
