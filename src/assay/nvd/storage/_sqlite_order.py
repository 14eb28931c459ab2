"""Keyword searches put in the API's order without reading the CVE rows.

`SELECT c.id FROM cve c WHERE c.id IN (<full-text matches>) ORDER BY c.published,
c.cve_id` reads the row of every match to sort it, and CVE rows hold their records:
for a word in 48,000 descriptions that is 48,000 scattered pages (over a second on a
busy machine). A keyword search alone (or with `noRejected`) needs no row: the
full-text index gives the matching ids, and the order of every CVE (the walk orders,
which each serving process reads anyway) gives their places. A few matches are
sorted by place; many are picked out of the order in one pass.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Callable, Iterator
from dataclasses import replace

from assay.nvd.cve_query import CveQuery
from assay.nvd.storage._api_order import WALK_ORDERS, ApiOrder, in_order
from assay.nvd.storage._sql import fts5_expression

__all__ = ["WALK_ORDERS", "ApiOrder", "keyword_ids"]

MATCHES = "SELECT rowid FROM cve_text WHERE cve_text MATCH ?"
ORDER = {
    False: "SELECT id FROM cve ORDER BY published, cve_id",
    True: "SELECT id FROM cve WHERE rejected = 0 ORDER BY published, cve_id",
}


def keyword_ids(
    connection: sqlite3.Connection, generation: int, query: CveQuery, orders: ApiOrder
) -> array[int] | None:
    """The ids `query` selects, in API order, when it is a keyword search alone (or with
    `noRejected`): what `cve_where` with `ORDER BY published, cve_id` selects. None for
    any other query."""
    if not query.keywords:
        return None
    base = replace(query.filter_key, keywords=(), keyword_exact=False)
    if base not in WALK_ORDERS:
        return None
    searchable = [word for word in query.keywords if any(ch.isalnum() for ch in word)]
    if not searchable:
        return array("q")  # punctuation alone is no word of any description
    expression = fts5_expression(searchable, query.keyword_exact)
    matched = [row[0] for row in connection.execute(MATCHES, (expression,))]
    order = orders.get(generation, base.no_rejected, _order_reader(connection))
    return in_order(matched, *order)


def _order_reader(connection: sqlite3.Connection) -> Callable[[bool], Iterator[int]]:
    def read(no_rejected: bool) -> Iterator[int]:
        return (row[0] for row in connection.execute(ORDER[no_rejected]))

    return read
