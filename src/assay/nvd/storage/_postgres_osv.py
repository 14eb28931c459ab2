"""The PostgreSQL store's OSV records (a `PostgresStore` mixin; tables in `_osv_sql.py`).

Same rules and answers as `_sqlite_osv.py`; records are kept as they are (PostgreSQL's
TOAST compresses them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, TypeAlias

import psycopg
from psycopg.rows import TupleRow

from assay.nvd.storage._osv_sql import (
    INDEX_INSERT_POSTGRES,
    OSV_INDEX_TABLES,
    OsvRows,
    osv_batch_writes,
)
from assay.nvd.storage._postgres_cve5 import PostgresExecutor
from assay.nvd.storage._postgres_rows import Connection, lock_for_writing, text
from assay.nvd.storage._source_changes import bump_and_mark
from assay.nvd.storage.interface import UpsertCounts
from assay.osv.names import normalized_name
from assay.osv.record import OsvRecord

Cursor: TypeAlias = psycopg.Cursor[TupleRow]


class OsvStoreMixin:
    if TYPE_CHECKING:

        def _using(self, action: str) -> AbstractContextManager[Connection]: ...

        def _wrote(self) -> None: ...

    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts:
        latest, counts = osv_batch_writes(batch)
        with self._using("storing OSV records") as connection, connection.transaction():
            lock_for_writing(connection, "osv")
            written, replaced = _sorted_writes(connection, latest, counts)
            with connection.cursor() as cursor:
                _delete_rows(cursor, replaced)
                # Replaced records get new rows (and ids): their index rows go with them.
                cursor.executemany(
                    "INSERT INTO osv (osv_id, modified, withdrawn, record) VALUES (%s, %s, %s, %s)",
                    [(text(r.id), r.modified_key, r.withdrawn, r.raw) for r in written],
                )
                _insert_index_rows(connection, cursor, written)
                bump_and_mark(PostgresExecutor(connection), "osv", [r.id for r in written])
                if meta:
                    cursor.executemany(
                        "INSERT INTO meta (key, value) VALUES (%s, %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        [(text(key), text(value)) for key, value in meta.items()],
                    )
        self._wrote()
        return counts

    def count_osv(self) -> int:
        with self._using("counting OSV records") as connection:
            row = connection.execute("SELECT count(*) FROM osv").fetchone()
        return 0 if row is None else int(row[0])

    def osv_by_id(self, osv_id: str) -> bytes | None:
        with self._using("reading an OSV record") as connection:
            row = connection.execute(
                "SELECT record FROM osv WHERE osv_id = %s", (text(osv_id),)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[bytes]]:
        wanted = list(dict.fromkeys(packages))
        found: dict[tuple[str, str], list[bytes]] = {key: [] for key in wanted}
        by_key: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for ecosystem, name in wanted:
            key = (text(ecosystem), text(normalized_name(ecosystem, name)))
            by_key.setdefault(key, []).append((ecosystem, name))
        if not by_key:
            return found
        with self._using("finding OSV records by package") as connection:
            rows = connection.execute(
                "SELECT p.ecosystem, p.name, o.record FROM osv_package p "
                "JOIN osv o ON o.id = p.osv "
                "WHERE (p.ecosystem, p.name) IN (SELECT * FROM unnest(%s::text[], %s::text[])) "
                "AND o.withdrawn IS NULL ORDER BY o.osv_id",
                ([k[0] for k in by_key], [k[1] for k in by_key]),
            ).fetchall()
        for ecosystem, name, record in rows:
            for asked in by_key[(str(ecosystem), str(name))]:
                found[asked].append(bytes(record))
        return found

    def osv_for_package(self, ecosystem: str, name: str) -> list[bytes]:
        return self.osv_for_packages([(ecosystem, name)])[(ecosystem, name)]

    def osv_ecosystems(self) -> list[str]:
        with self._using("listing OSV ecosystems") as connection:
            rows = connection.execute(
                "SELECT DISTINCT ecosystem FROM osv_package WHERE strpos(ecosystem, ':') = 0 "
                "ORDER BY ecosystem"
            ).fetchall()
        return [str(ecosystem) for (ecosystem,) in rows]

    def iter_osv(self, ecosystem: str | None = None) -> Iterator[bytes]:
        last = ""
        while True:
            with self._using("reading OSV records") as connection:
                if ecosystem is None:
                    rows = connection.execute(
                        "SELECT osv_id, record FROM osv WHERE osv_id > %s ORDER BY osv_id "
                        "LIMIT 500",
                        (last,),
                    ).fetchall()
                else:
                    rows = connection.execute(
                        "SELECT o.osv_id, o.record FROM osv o WHERE o.osv_id > %s AND EXISTS "
                        "(SELECT 1 FROM osv_package p WHERE p.osv = o.id AND p.ecosystem = %s) "
                        "ORDER BY o.osv_id LIMIT 500",
                        (last, text(ecosystem)),
                    ).fetchall()
            if not rows:
                return
            for _, record in rows:
                yield bytes(record)
            last = str(rows[-1][0])

    def osv_by_alias(self, alias: str) -> list[bytes]:
        return list(self._joined("osv_alias", "alias", alias))

    def osv_for_commit(self, commit: str) -> list[bytes]:
        return list(self._joined("osv_commit", "commit_hash", commit.lower()))

    def _joined(self, table: str, column: str, value: str) -> Iterator[bytes]:
        with self._using("finding OSV records") as connection:
            rows = connection.execute(
                f"SELECT o.record FROM {table} t JOIN osv o ON o.id = t.osv "
                f"WHERE t.{column} = %s AND o.withdrawn IS NULL ORDER BY o.osv_id",
                (text(value),),
            ).fetchall()
        for (record,) in rows:
            yield bytes(record)


def _sorted_writes(
    connection: Connection, latest: Mapping[str, OsvRecord], counts: UpsertCounts
) -> tuple[list[OsvRecord], list[int]]:
    """The records to write (new, or newer than and different from what is stored) and
    the row ids they replace; `counts` counts each record's fate."""
    existing = {
        str(osv_id): (int(row_id), str(modified), bytes(record))
        for osv_id, row_id, modified, record in connection.execute(
            "SELECT osv_id, id, modified, record FROM osv WHERE osv_id = ANY(%s::text[])",
            (list(latest),),
        )
    }
    written: list[OsvRecord] = []
    replaced: list[int] = []
    for record in latest.values():
        current = existing.get(record.id)
        if current is not None and (record.modified_key < current[1] or record.raw == current[2]):
            counts.unchanged += 1
            continue
        if current is None:
            counts.added += 1
        else:
            counts.updated += 1
            replaced.append(current[0])
        written.append(record)
    return written, replaced


def _delete_rows(cursor: Cursor, replaced: list[int]) -> None:
    """The replaced records' rows and their index rows."""
    if not replaced:
        return
    for table in OSV_INDEX_TABLES:
        cursor.execute(f"DELETE FROM {table} WHERE osv = ANY(%s::bigint[])", (replaced,))
    cursor.execute("DELETE FROM osv WHERE id = ANY(%s::bigint[])", (replaced,))


def _insert_index_rows(connection: Connection, cursor: Cursor, written: list[OsvRecord]) -> None:
    """The index rows of the records just written, under their new row ids."""
    ids = {
        str(osv_id): int(row_id)
        for osv_id, row_id in connection.execute(
            "SELECT osv_id, id FROM osv WHERE osv_id = ANY(%s::text[])",
            ([text(r.id) for r in written],),
        )
    }
    index: dict[str, list[tuple[object, ...]]] = {t: [] for t in OSV_INDEX_TABLES}
    for record in written:
        for table, rows in OsvRows.of(record).index_rows(ids[text(record.id)]).items():
            index[table].extend(
                tuple(text(v) if isinstance(v, str) else v for v in row) for row in rows
            )
    for table, rows in index.items():
        if rows:
            cursor.executemany(INDEX_INSERT_POSTGRES[table], rows)
