"""The store's write rule, written once for every backend and record kind.

A record read again replaces the stored one only when it is different and not older
(`lastModified`, or a change's `created`): an older copy never replaces a newer one, so
imports and syncs may overlap and run in any order. One exception keeps a store from
being stuck: a stored record dated past the clocks (`assay.nvd.ingest.clock`: records
from the future are refused on the way in, but a store written before that rule may hold
one) is replaced by any copy, since no honest record could ever be newer.
"""

from __future__ import annotations

from assay.nvd.ingest.clock import latest_allowed

__all__ = ["stored_stays"]


def stored_stays(incoming: str, stored: str, *, same: bool) -> bool:
    """Whether the stored record stays as it is when `incoming` (its order timestamp, in
    the stores' comparable form) arrives: it is the same record, or an older one."""
    if same:
        return True
    return incoming < stored <= latest_allowed()
