"""The PostgreSQL store's service tables: API keys and rate-limit counters (a mixin)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import psycopg

from assay.errors import StoreError
from assay.nvd.storage._postgres_rows import Connection
from assay.nvd.storage._service_rows import COUNTED_TABLES
from assay.nvd.storage.interface import ApiKey


class ServiceStoreMixin:
    if TYPE_CHECKING:

        def _using(self, action: str) -> AbstractContextManager[Connection]: ...

    def add_api_key(self, name: str, key_digest: bytes, created: str) -> None:
        try:
            with self._using("adding an API key") as connection:
                connection.execute(
                    "INSERT INTO api_key (name, digest, created) VALUES (%s, %s, %s)",
                    (name, key_digest, created),
                )
        except StoreError as error:
            if isinstance(error.__cause__, psycopg.errors.UniqueViolation):
                raise StoreError(f"an API key named {name!r} exists already") from None
            raise

    def api_keys(self) -> list[ApiKey]:
        with self._using("listing API keys") as connection:
            rows = connection.execute(
                'SELECT name, created, last_used FROM api_key ORDER BY name COLLATE "C"'
            ).fetchall()
        return [ApiKey(str(name), str(created), last_used) for name, created, last_used in rows]

    def revoke_api_key(self, name: str) -> bool:
        with self._using("revoking an API key") as connection:
            cursor = connection.execute("DELETE FROM api_key WHERE name = %s", (name,))
            return cursor.rowcount > 0

    def api_key_named_by(self, key_digest: bytes) -> tuple[str, bytes] | None:
        with self._using("checking an API key") as connection:
            row = connection.execute(
                "SELECT name, digest FROM api_key WHERE digest = %s", (key_digest,)
            ).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def note_api_key_use(self, name: str, when: str) -> None:
        with self._using("noting an API key's use") as connection:
            connection.execute("UPDATE api_key SET last_used = %s WHERE name = %s", (when, name))

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]:
        """Grant up to `want` hits to `client` in `bucket`, keeping the hits of the buckets
        from `window_start` on within `limit`: (granted, hits in the window now). One
        client's takes are serialized across every server by an advisory lock."""
        with self._using("counting requests") as connection, connection.transaction():
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"assay-rate:{client}",)
            )
            row = connection.execute(
                "SELECT coalesce(sum(hits), 0) FROM rate_hit "
                "WHERE client = %s AND bucket >= %s AND bucket <= %s",
                (client, window_start, bucket),
            ).fetchone()
            used = int(row[0]) if row else 0
            granted = max(0, min(want, limit - used))
            if granted:
                connection.execute(
                    "INSERT INTO rate_hit (client, bucket, hits, expires) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (client, bucket) "
                    "DO UPDATE SET hits = rate_hit.hits + excluded.hits",
                    (client, bucket, granted, expires),
                )
        return granted, used + granted

    def hits_in_window(self, client: str, window_start: int, bucket: int) -> list[tuple[int, int]]:
        """(bucket, hits) of `client` from `window_start` to `bucket`, oldest first."""
        with self._using("counting requests") as connection:
            rows = connection.execute(
                "SELECT bucket, hits FROM rate_hit WHERE client = %s AND bucket >= %s "
                "AND bucket <= %s ORDER BY bucket",
                (client, window_start, bucket),
            ).fetchall()
        return [(int(start), int(hits)) for start, hits in rows]

    def prune_hits(self, now: int) -> None:
        with self._using("pruning request counts") as connection:
            connection.execute("DELETE FROM rate_hit WHERE expires < %s", (now,))

    def table_rows(self) -> dict[str, int]:
        with self._using("counting rows") as connection:
            present = {
                str(row[0])
                for row in connection.execute(
                    "SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' "
                    "AND c.relnamespace = current_schema()::regnamespace"
                )
            }
            return {
                table: int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
                for table in COUNTED_TABLES
                if table in present
            }
