"""The store a benchmark imports into and serves from: a SQLite file (the default) or a
PostgreSQL schema (`--store postgresql://...?schema=NAME`, dropped and made anew)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

MIB = 2**20


@dataclass(frozen=True)
class BenchStore:
    url: str

    @classmethod
    def sqlite(cls, path: Path) -> BenchStore:
        return cls(f"sqlite:///{path}")

    @property
    def is_postgres(self) -> bool:
        return self.url.startswith(("postgresql:", "postgres:"))

    @property
    def path(self) -> Path:
        assert not self.is_postgres
        return Path("/" + self.url.removeprefix("sqlite:///").lstrip("/"))

    @property
    def schema(self) -> str:
        """The PostgreSQL schema the benchmark owns (a URL without one is refused)."""
        schemas = [v for k, v in parse_qsl(urlsplit(self.url).query) if k == "schema"]
        if not schemas:
            raise SystemExit(
                "--store: a PostgreSQL store for benchmarks needs ?schema=NAME "
                "(the schema is dropped and made anew)"
            )
        return schemas[0]

    def exists(self) -> bool:
        if self.is_postgres:
            with self._connect() as connection:
                row = connection.execute(
                    "SELECT to_regclass(%s)", (f"{self.schema}.cve",)
                ).fetchone()
            return row is not None and row[0] is not None
        return self.path.exists()

    def reset(self) -> None:
        """Remove the store, so that the import starts from nothing."""
        if self.is_postgres:
            from psycopg import sql

            with self._connect() as connection:
                connection.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(self.schema))
                )
            return
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def size_bytes(self) -> int:
        """What the store occupies: files (SQLite), or tables with their TOAST data and
        indexes (PostgreSQL)."""
        if self.is_postgres:
            with self._connect() as connection:
                row = connection.execute(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = %s AND c.relkind = 'r'",
                    (self.schema,),
                ).fetchone()
            return int(row[0]) if row else 0
        return sum(
            Path(f"{self.path}{s}").stat().st_size
            for s in ("", "-wal", "-shm")
            if Path(f"{self.path}{s}").exists()
        )

    def row_counts(self, tables: tuple[str, ...]) -> dict[str, int]:
        """How many rows each of `tables` holds."""
        counts: dict[str, int] = {}
        if self.is_postgres:
            from psycopg import sql

            with self._connect() as connection:
                for table in tables:
                    row = connection.execute(
                        sql.SQL("SELECT count(*) FROM {}").format(
                            sql.Identifier(self.schema, table)
                        )
                    ).fetchone()
                    counts[table] = int(row[0]) if row else 0
            return counts
        import sqlite3

        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            for table in tables:
                counts[table] = int(
                    connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                )
        finally:
            connection.close()
        return counts

    def warm(self) -> None:
        """Read the store once, as a server that has run for a while has it cached.

        Without it the figures measure the disk (and whatever else the machine is doing
        with its page cache), not the server. SQLite: its file. PostgreSQL: every file of
        the schema (tables, their TOAST data and indexes: the full-text index and the
        vectors too, as SQLite's file holds its FTS5 tables), read from the server's data
        directory where this process can; else the tables the filters read, through the
        server.
        """
        started = time.perf_counter()
        if self.is_postgres:
            relations = self._relations()
            if self._read_relation_files([path for _, path in relations]):
                self._prewarm_if_it_fits([oid for oid, _ in relations])
            else:
                self._read_tables()
        else:
            _read_whole(self.path)
        print(f"store read into the cache in {time.perf_counter() - started:.1f} s", flush=True)

    def _relations(self) -> list[tuple[int, Path]]:
        """Every relation of the schema with storage (tables, their TOAST data and the
        indexes of both): its oid and its file in the server's data directory."""
        with self._connect() as connection:
            directory = connection.execute("SHOW data_directory").fetchone()
            rows = connection.execute(
                "SELECT c.oid, pg_relation_filepath(c.oid) FROM pg_class c "
                "WHERE (c.relnamespace = to_regnamespace(%(schema)s) "
                "OR c.oid IN (SELECT t.reltoastrelid FROM pg_class t "
                "WHERE t.relnamespace = to_regnamespace(%(schema)s)) "
                "OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t "
                "ON t.reltoastrelid = i.indrelid "
                "WHERE t.relnamespace = to_regnamespace(%(schema)s))) "
                "AND pg_relation_filepath(c.oid) IS NOT NULL",
                {"schema": self.schema},
            ).fetchall()
        base = Path(str(directory[0])) if directory else Path()
        return [(int(oid), base / relative) for oid, relative in rows]

    @staticmethod
    def _read_relation_files(files: list[Path]) -> bool:
        """Read `files` (each with its 1 GB segments); False when there are none, or the
        data directory cannot be read here (another machine, another user)."""
        if not files:
            return False
        try:
            for first in files:
                segments = [first, *sorted(first.parent.glob(first.name + ".[0-9]*"))]
                for segment in segments:
                    _read_whole(segment)
        except OSError:
            return False
        return True

    def _prewarm_if_it_fits(self, oids: list[int]) -> None:
        """Read the relations `oids` into PostgreSQL's own cache too (`pg_prewarm`) when
        `shared_buffers` can hold the store (`size_bytes`), as a server that has run for
        a while holds it; with less, its cache keeps what the queries themselves bring
        in."""
        with self._connect() as connection:
            row = connection.execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers'))"
            ).fetchone()
            if row is None or self.size_bytes() > int(row[0]):
                return
            try:
                connection.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            except Exception:  # (no contrib modules, or no right to add one)
                return
            connection.execute("SELECT pg_prewarm(oid) FROM unnest(%s::oid[]) AS oid", (oids,))

    def _read_tables(self) -> None:
        from psycopg import sql

        with self._connect() as connection:
            for table, column in (("cve", "record"), ("cve_facet", "value"),
                                  ("criteria", "product"), ("cve_criteria", "cve"),
                                  ("cve_text", "search_vector")):  # fmt: skip
                connection.execute(
                    sql.SQL("SELECT sum(length({}::text)) FROM {}").format(
                        sql.Identifier(column), sql.Identifier(self.schema, table)
                    )
                )

    def _connect(self) -> Any:
        import psycopg

        parts = urlsplit(self.url)
        others = "&".join(f"{k}={v}" for k, v in parse_qsl(parts.query) if k != "schema")
        return psycopg.connect(parts._replace(query=others).geturl(), autocommit=True)


def _read_whole(path: Path) -> None:
    with path.open("rb") as handle:
        while handle.read(8 * MIB):
            pass
