"""Whether PostgreSQL's buffer cache can hold what a large keyword search reads.

A word in tens of thousands of descriptions is read from the full-text index and from
most pages of the full-text table (`cve_text`: 212 MB with its index for NVD's 340,000
CVEs). When `shared_buffers` cannot hold both, each such search evicts pages the next
one needs, and reads them again from the operating system: at PostgreSQL's default of
128 MB, the largest searches took up to twice the time they take with everything cached
(docs/performance.md, "keywordSearch and PostgreSQL's buffer cache"). `assay serve`
says so at start (docs/scale.md sizes replicas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (imported by `assay serve`'s start whatever the store: no psycopg)
    from assay.nvd.storage._postgres_rows import Connection

MIB = 1024 * 1024
# Room beside the full-text pages for what other queries keep cached (the CVE records
# of the pages served, the criteria): the advice is this multiple of the full text.
ADVISED_SHARE = 1.5

BUFFERS_SQL = (
    "SELECT pg_size_bytes(current_setting('shared_buffers')), "
    "pg_relation_size(to_regclass('cve_text')) "
    "+ coalesce(pg_relation_size(to_regclass('cve_by_text')), 0)"
)


@dataclass(frozen=True, slots=True)
class BufferFit:
    """The server's `shared_buffers` and the size of the full-text table with its index,
    in bytes."""

    shared_buffers: int
    full_text: int

    @property
    def fits(self) -> bool:
        return self.full_text <= self.shared_buffers

    @property
    def advised_mib(self) -> int:
        """The `shared_buffers`, in MiB, that holds the full text with room to spare."""
        return max(128, math.ceil(self.full_text * ADVISED_SHARE / MIB))


def buffer_fit(connection: Connection) -> BufferFit:
    """Read on `connection`, whose search path is the store's schema."""
    row = connection.execute(BUFFERS_SQL).fetchone()
    assert row is not None
    return BufferFit(shared_buffers=int(row[0]), full_text=int(row[1] or 0))
