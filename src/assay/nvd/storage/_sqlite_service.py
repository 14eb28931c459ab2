"""The SQLite store's service tables: API keys and rate-limit counters (a mixin)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from assay.errors import StoreError
from assay.nvd.storage._service_rows import COUNTED_TABLES
from assay.nvd.storage.interface import ApiKey


class ServiceStoreMixin:
    if TYPE_CHECKING:

        def _connection(self) -> sqlite3.Connection: ...

    def add_api_key(self, name: str, key_digest: bytes, created: str) -> None:
        connection = self._connection()
        try:
            with connection:
                connection.execute("BEGIN IMMEDIATE")
                connection.execute(
                    "INSERT INTO api_key (name, digest, created) VALUES (?, ?, ?)",
                    (name, key_digest, created),
                )
        except sqlite3.IntegrityError as error:
            raise StoreError(f"an API key named {name!r} exists already") from error

    def api_keys(self) -> list[ApiKey]:
        rows = self._connection().execute(
            "SELECT name, created, last_used FROM api_key ORDER BY name"
        )
        return [ApiKey(name, created, last_used) for name, created, last_used in rows]

    def revoke_api_key(self, name: str) -> bool:
        connection = self._connection()
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            cursor = connection.execute("DELETE FROM api_key WHERE name = ?", (name,))
        return cursor.rowcount > 0

    def api_key_named_by(self, key_digest: bytes) -> tuple[str, bytes] | None:
        row = (
            self._connection()
            .execute("SELECT name, digest FROM api_key WHERE digest = ?", (key_digest,))
            .fetchone()
        )
        return None if row is None else (str(row[0]), bytes(row[1]))

    def note_api_key_use(self, name: str, when: str) -> None:
        connection = self._connection()
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("UPDATE api_key SET last_used = ? WHERE name = ?", (when, name))

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]:
        """Grant up to `want` hits to `client` in `bucket`, keeping the hits of the buckets
        from `window_start` on within `limit`: (granted, hits in the window now)."""
        connection = self._connection()
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            used = int(
                connection.execute(
                    "SELECT coalesce(sum(hits), 0) FROM rate_hit "
                    "WHERE client = ? AND bucket >= ? AND bucket <= ?",
                    (client, window_start, bucket),
                ).fetchone()[0]
            )
            granted = max(0, min(want, limit - used))
            if granted:
                connection.execute(
                    "INSERT INTO rate_hit (client, bucket, hits, expires) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (client, bucket) DO UPDATE SET hits = hits + excluded.hits",
                    (client, bucket, granted, expires),
                )
        return granted, used + granted

    def hits_in_window(self, client: str, window_start: int, bucket: int) -> list[tuple[int, int]]:
        """(bucket, hits) of `client` from `window_start` to `bucket`, oldest first."""
        rows = self._connection().execute(
            "SELECT bucket, hits FROM rate_hit WHERE client = ? AND bucket >= ? AND bucket <= ? "
            "ORDER BY bucket",
            (client, window_start, bucket),
        )
        return [(int(start), int(hits)) for start, hits in rows]

    def prune_hits(self, now: int) -> None:
        connection = self._connection()
        with connection:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("DELETE FROM rate_hit WHERE expires < ?", (now,))

    def table_rows(self) -> dict[str, int]:
        connection = self._connection()
        present = {
            str(row[0])
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        return {
            table: int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in COUNTED_TABLES
            if table in present
        }
