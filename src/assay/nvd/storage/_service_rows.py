"""The service's tables, beside the NVD data: API keys and rate-limit counters.

They are added to a store when it is opened, like any table the store lacks (no change
of schema version, no rebuild): `SQLITE_SERVICE_SCHEMA` joins SQLite's schema script,
`POSTGRES_SERVICE_SCHEMA` runs in PostgreSQL's set-up transaction.

`rate_hit` holds, per client and time bucket, the requests granted: a rate limit sums
the buckets of its window. Rows of buckets past every window are deleted as they age.
"""

from __future__ import annotations

from typing import Protocol, cast

from assay.nvd.apikeys import ApiKey

SQLITE_SERVICE_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_key (
    name TEXT PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_used TEXT
);
CREATE TABLE IF NOT EXISTS rate_hit (
    client TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (client, bucket)
) WITHOUT ROWID;
"""

POSTGRES_SERVICE_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_key (
    name TEXT COLLATE "C" PRIMARY KEY,
    digest BYTEA NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_used TEXT
);
CREATE TABLE IF NOT EXISTS rate_hit (
    client TEXT COLLATE "C" NOT NULL,
    bucket BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    PRIMARY KEY (client, bucket)
);
"""

# The tables whose rows /metrics counts (those that exist in the store).
COUNTED_TABLES = ("cve", "cpe", "cpe_match", "cve_change", "source", "api_key")


class ServiceStore(Protocol):
    """What the service asks of a store besides the NVD data (both backends have it)."""

    def add_api_key(self, name: str, key_digest: bytes, created: str) -> None: ...

    def api_keys(self) -> list[ApiKey]: ...

    def revoke_api_key(self, name: str) -> bool: ...

    def api_key_named_by(self, key_digest: bytes) -> tuple[str, bytes] | None:
        """The name and stored digest of the key with this digest."""
        ...

    def note_api_key_use(self, name: str, when: str) -> None: ...

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]: ...

    def hits_in_window(
        self, client: str, window_start: int, bucket: int
    ) -> list[tuple[int, int]]: ...

    def prune_hits(self, now: int) -> None: ...

    def table_rows(self) -> dict[str, int]: ...

    def get_meta(self, key: str) -> str | None: ...


def service_store(store: object) -> ServiceStore:
    """`store` as a `ServiceStore` (every backend's store is one)."""
    return cast(ServiceStore, store)
