"""Matching CVE ids put in the API's order in-process, without reading the CVE rows.

`SELECT c.id FROM cve c WHERE ... ORDER BY c.published, c.cve_id` reads the row of every
match to sort it, and CVE rows hold their records: for a word in 48,000 descriptions
that is 48,000 scattered pages. A filter that is an id set (the full-text matches, the
CVEs a `cpeName` hits), alone or with `noRejected`, needs no row: the order of every CVE
(the walk orders, which each serving process reads anyway) gives their places. A few
matches are sorted by place; many are picked out of the order in one pass.

Backend-neutral: each store reads the order and the matches its own way.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterable, Sequence

from assay.nvd.cve_query import CveQuery

ALL = CveQuery()
UNREJECTED = CveQuery(no_rejected=True)
WALK_ORDERS = {ALL: False, UNREJECTED: True}  # (the filter: no_rejected)
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
        self, generation: int, no_rejected: bool, read: Callable[[bool], Iterable[int]]
    ) -> tuple[array[int], array[int]]:
        """(ids in API order, place of each row id: -1 for an id not in the order);
        `read(no_rejected)` gives the order when none is kept for `generation`."""
        with self._lock:
            kept = self._kept.get(no_rejected)
            if kept is not None and kept[0] == generation:
                return kept[1], kept[2]
        order = array("q", read(no_rejected))
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


def consecutive(ids: Sequence[int]) -> bool:
    """Whether `ids` are first, first + 1, first + 2... in that order (a walk's page of a
    store written in API order: one range of row ids)."""
    return bool(ids) and list(ids) == list(range(ids[0], ids[0] + len(ids)))


def in_order(matched: list[int], order: array[int], places: array[int]) -> array[int]:
    """The ids of `matched` (each once) that are in `order`, in its order."""
    if len(matched) * SORT_SHARE < len(order):
        end = len(places)
        placed = [(places[i], i) for i in matched if i < end and places[i] >= 0]
        placed.sort()
        return array("q", (row_id for _, row_id in placed))
    wanted = set(matched)
    return array("q", filter(wanted.__contains__, order))
