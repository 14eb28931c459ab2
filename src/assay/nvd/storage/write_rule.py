"""The store's write rule, written once for every backend and record kind.

A record read again replaces the stored one only when it is different and not older
(`lastModified`, or a change's `created`): an older copy never replaces a newer one, so
imports and syncs may overlap and run in any order. One exception keeps a store from
being stuck: a stored record dated past the clocks (`assay.nvd.ingest.clock`: records
from the future are refused on the way in, but a store written before that rule may hold
one) is replaced by any copy, since no honest record could ever be newer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from assay.nvd.ingest.clock import latest_allowed
from assay.nvd.storage.interface import UpsertCounts

__all__ = ["batch_writes", "latest_per_key", "stored_stays"]

R = TypeVar("R")


def stored_stays(incoming: str, stored: str, *, same: bool) -> bool:
    """Whether the stored record stays as it is when `incoming` (its order timestamp, in
    the stores' comparable form) arrives: it is the same record, or an older one."""
    if same:
        return True
    return incoming < stored <= latest_allowed()


def latest_per_key(
    batch: Sequence[R], key: Callable[[R], str], order: Callable[[R], str]
) -> dict[str, R]:
    """The record of each key a batch writes: the last of its latest (by `order`), so
    that a batch holding a record twice writes it once, as the later one."""
    latest: dict[str, R] = {}
    for record in batch:
        current = latest.get(key(record))
        if current is None or order(record) >= order(current):
            latest[key(record)] = record
    return latest


def batch_writes(
    batch: Sequence[R], key: Callable[[R], str], order: Callable[[R], str]
) -> tuple[dict[str, R], UpsertCounts]:
    """`latest_per_key` of a batch, and the counts of its upsert begun: the records it
    leaves out (older or repeated copies) count as unchanged."""
    latest = latest_per_key(batch, key, order)
    return latest, UpsertCounts(unchanged=len(batch) - len(latest))
