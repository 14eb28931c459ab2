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
import threading
from array import array
from dataclasses import replace

from assay.nvd.cve_query import CveQuery
from assay.nvd.storage._sql import fts5_expression

ALL = CveQuery()
UNREJECTED = CveQuery(no_rejected=True)
WALK_ORDERS = {ALL: False, UNREJECTED: True}  # (the filter: no_rejected)
MATCHES = "SELECT rowid FROM cve_text WHERE cve_text MATCH ?"
ORDER = {
    False: "SELECT id FROM cve ORDER BY published, cve_id",
    True: "SELECT id FROM cve WHERE rejected = 0 ORDER BY published, cve_id",
}
# Fewer matches than the order's length over this are sorted by place; more are picked
# out of the order (a pass over it costs about as much as sorting a sixteenth of it).
SORT_SHARE = 16


class ApiOrder:
    """The API order of every CVE (or every unrejected one) at a generation, and each
    row id's place in it, kept per process for the latest generation asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[bool, tuple[int, array[int], array[int]]] = {}

    def get(
        self, connection: sqlite3.Connection, generation: int, no_rejected: bool
    ) -> tuple[array[int], array[int]]:
        """(ids in API order, place of each row id: -1 for an id not in the order)."""
        with self._lock:
            kept = self._kept.get(no_rejected)
            if kept is not None and kept[0] == generation:
                return kept[1], kept[2]
        order = array("q", (row[0] for row in connection.execute(ORDER[no_rejected])))
        return order, self.keep(generation, no_rejected, order)

    def keep(self, generation: int, no_rejected: bool, order: array[int]) -> array[int]:
        """Keep `order` (read after `generation` was), as the walk orders are read
        anyway; the places of its ids."""
        places = array("i", [-1]) * ((max(order) + 1) if order else 0)
        for place, row_id in enumerate(order):
            places[row_id] = place
        with self._lock:
            kept = self._kept.get(no_rejected)
            if kept is None or kept[0] <= generation:
                self._kept[no_rejected] = (generation, order, places)
        return places


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
    return in_order(matched, *orders.get(connection, generation, base.no_rejected))


def in_order(matched: list[int], order: array[int], places: array[int]) -> array[int]:
    """The ids of `matched` that are in `order`, in its order."""
    if len(matched) * SORT_SHARE < len(order):
        end = len(places)
        placed = [(places[i], i) for i in matched if i < end and places[i] >= 0]
        placed.sort()
        return array("q", (row_id for _, row_id in placed))
    wanted = set(matched)
    return array("q", filter(wanted.__contains__, order))
