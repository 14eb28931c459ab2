"""The pending lists of the store's full-text (GIN) indexes, merged where its writes end.

A GIN index with `fastupdate` (PostgreSQL's default) takes new entries into an unsorted
pending list of up to `gin_pending_list_limit` (4 MB) and merges them into the index
only when the list is full, or when (auto)vacuum visits the table. Every keyword query
reads the whole list: after an import of 340,000 CVEs, 236 pending pages made a query
matching nothing take 8.2 ms instead of 1.3 ms. A server with autovacuum off, or whose
autovacuum has not yet come to the table, keeps that cost until the next vacuum; merging
the list when a write ends costs about what the list's next overflow would have.
"""

from __future__ import annotations

from typing import Final

from assay.nvd.storage._postgres_rows import Connection

# The GIN indexes of the store's schema (`cve_by_text`, `cpe_by_text`, any to come).
_GIN_INDEXES: Final = (
    "SELECT c.oid FROM pg_class c "
    "JOIN pg_am a ON a.oid = c.relam "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'i' AND a.amname = 'gin' AND n.nspname = current_schema() "
    "ORDER BY c.oid"
)
_MERGE: Final = "SELECT gin_clean_pending_list(CAST(CAST(%s AS oid) AS regclass))"


def merge_pending(connection: Connection) -> int:
    """Merge the pending list of each full-text index of the store into the index; the
    number of pending pages merged. Outside a transaction, each index's merge is its own
    (it takes the index's lock only while it merges)."""
    merged = 0
    for (index,) in connection.execute(_GIN_INDEXES).fetchall():
        row = connection.execute(_MERGE, (index,)).fetchone()
        merged += int(row[0]) if row is not None else 0
    return merged
