"""The service's tables, beside the NVD data: API keys and rate-limit counters.

They are added to a store when it is opened, like any table the store lacks (no change
of schema version, no rebuild): `SQLITE_SERVICE_SCHEMA` joins SQLite's schema script,
`POSTGRES_SERVICE_SCHEMA` runs in PostgreSQL's set-up transaction.

The service's part of the store interface (`ServiceStore`, `ApiKey`) is in
`assay.nvd.storage.interface`.

`rate_hit` holds, per client and time bucket, the requests granted: a rate limit sums
the buckets of its window. Rows of buckets past every window are deleted as they age.
"""

from __future__ import annotations

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
