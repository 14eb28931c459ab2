"""The PostgreSQL store's CVE 5, KEV and EPSS tables (a `PostgresStore` mixin): the SQL
of `_cve5_sql.Cve5Tables` run through psycopg."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from assay.nvd.storage._cve5_sql import Cve5Tables, Executor
from assay.nvd.storage._postgres_rows import Connection, bound

WRITE_LOCK = "assay-cve5"  # writers of these tables queue up (SQLite's BEGIN IMMEDIATE)


def _dialect(statement: str) -> str:
    return statement.replace("?", "%s")


class PostgresExecutor:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def rows(self, statement: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        cursor = self.connection.execute(_dialect(statement), bound(params))
        return list(cursor.fetchall()) if cursor.description is not None else []

    def many(self, statement: str, params: Sequence[Sequence[object]]) -> int:
        if not params:
            return 0
        with self.connection.cursor() as cursor:
            cursor.executemany(_dialect(statement), [bound(row) for row in params])
            return max(cursor.rowcount, 0)

    def load(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]], conflict: str
    ) -> int:
        """COPY into a temporary table, then one INSERT ... SELECT (a round trip per row
        took 13 s for a day of EPSS scores)."""
        if not rows:
            return 0
        names = self._staged(table, columns, rows)
        with self.connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({names}) SELECT {names} FROM load_{table} {conflict}"
            )
            return max(cursor.rowcount, 0)

    def load_changed(
        self,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[object]],
        conflict: str,
        key: str,
    ) -> list[str]:
        if not rows:
            return []
        names = self._staged(table, columns, rows)
        changed = self.connection.execute(
            f"INSERT INTO {table} ({names}) SELECT {names} FROM load_{table} {conflict} "
            f"RETURNING {key}"
        ).fetchall()
        return [str(row[0]) for row in changed]

    def _staged(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
        """The rows COPYed into `load_<table>` (dropped at commit): the column list."""
        names = ", ".join(columns)
        self.connection.execute(f"DROP TABLE IF EXISTS load_{table}")
        self.connection.execute(f"CREATE TEMP TABLE load_{table} (LIKE {table}) ON COMMIT DROP")
        with (
            self.connection.cursor() as cursor,
            cursor.copy(f"COPY load_{table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(bound(row))
        return names


class PostgresCve5(Cve5Tables):
    if TYPE_CHECKING:

        def _using(self, action: str) -> AbstractContextManager[Connection]: ...

        def _wrote(self) -> None: ...

    @contextmanager
    def _cve5_writing(self, action: str) -> Iterator[Executor]:
        with self._using(action) as connection, connection.transaction():
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (WRITE_LOCK,)
            )
            yield PostgresExecutor(connection)
        self._wrote()

    @contextmanager
    def _cve5_reading(self, action: str) -> Iterator[Executor]:
        with self._using(action) as connection:
            yield PostgresExecutor(connection)
