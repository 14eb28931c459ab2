"""The PostgreSQL store's CVE result sets in API order (`_api_order`).

A filter that is an id set (a keyword search, a `cpeName`, a `virtualMatchString`), alone
or with `noRejected`, is read as its ids only: the CVEs a `cpeName` hits come from
`cve_criteria`'s index without reading a CVE row, and the full-text matches without
their sort keys. The kept order (every CVE, or every unrejected one) puts them in place.
Any other filter is sorted by PostgreSQL; a walk's own order is kept as it is read.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from assay.nvd.cve_query import CveQuery
from assay.nvd.storage._api_order import WALK_ORDERS, ApiOrder, in_order
from assay.nvd.storage._postgres_rows import Connection, bound
from assay.nvd.storage._sql import POSTGRES, SqlBuilder, cve_ids_select

CVE_ORDER = 'c.published COLLATE "C", c.cve_id COLLATE "C"'
ORDER = {
    False: f"SELECT c.id FROM cve c ORDER BY {CVE_ORDER}",
    True: f"SELECT c.id FROM cve c WHERE c.rejected = 0 ORDER BY {CVE_ORDER}",
}


def api_ordered_ids(
    connection: Connection,
    generation: int,
    query: CveQuery,
    orders: ApiOrder,
    sorted_ids: Callable[[], tuple[str, Sequence[object]]],
    *,
    keep: Callable[[dict[int, bytes]], None] | None = None,
) -> array[int]:
    """The ids `query` selects in API order, read after `generation` was: placed by the
    kept order where the filter is an id set (a few matches' records handed to `keep`:
    `placed_ids`), else by the SQL that sorts, which `sorted_ids()` gives."""
    no_rejected = walk_order_of(query)
    if no_rejected is not None:
        return placed_ids(connection, generation, query, orders, no_rejected, keep=keep)
    ids = array("q", (int(row[0]) for row in connection.execute(*sorted_ids(), binary=True)))
    if query.filter_key in WALK_ORDERS:
        orders.keep(generation, WALK_ORDERS[query.filter_key], ids)
    return ids


def walk_order_of(query: CveQuery) -> bool | None:
    """Which kept order (its `no_rejected`) puts `query`'s matches in place: None when
    its filter is not an id set alone (or with `noRejected`)."""
    key = query.filter_key
    base = replace(
        key,
        keywords=(),
        keyword_exact=False,
        cpe_name=None,
        is_vulnerable=False,
        virtual_match=None,
        version_start=None,
        version_end=None,
    )
    if base == key or base not in WALK_ORDERS:
        return None
    return WALK_ORDERS[base]


# A filter that matches at most this many CVEs has their records read with its ids, in
# the same statement: what a page of it needs, without a second round trip.
RECORDS_WITH_IDS = 100


def placed_ids(
    connection: Connection,
    generation: int,
    query: CveQuery,
    orders: ApiOrder,
    no_rejected: bool,
    *,
    keep: Callable[[dict[int, bytes]], None] | None = None,
) -> array[int]:
    """The ids of `query`'s id-set filter (each once), in the kept order. With `keep`,
    the stored records of a filter matching at most `RECORDS_WITH_IDS` CVEs are read in
    the same statement (one snapshot) and handed to it by row id."""
    builder = SqlBuilder(POSTGRES)
    select = cve_ids_select(replace(query.filter_key, no_rejected=False), builder)
    # One array, not a row per match: psycopg reads an array in C, where each row costs
    # a Python step (~1.6 us: 40 ms of a 25,000-match keyword search).
    ids = f"SELECT array_agg(m.id) AS ids FROM ({select}) AS m(id)"
    if keep is None:
        row = connection.execute(ids, bound(builder.params), binary=True).fetchone()
    else:
        row = connection.execute(
            f"SELECT a.ids, r.ids, r.records FROM ({ids}) AS a LEFT JOIN LATERAL "
            "(SELECT array_agg(c.id) AS ids, array_agg(c.record) AS records FROM cve c "
            f"WHERE cardinality(a.ids) <= {RECORDS_WITH_IDS} AND c.id = ANY(a.ids)) AS r ON true",
            bound(builder.params),
            binary=True,
        ).fetchone()
        if row is not None and row[1] is not None:
            keep(dict(zip(row[1], row[2], strict=True)))
    matched = list(set(row[0] or ())) if row is not None else []
    order, places = orders.get(generation, no_rejected, order_reader(connection))
    return in_order(matched, order, places)


def order_reader(connection: Connection) -> Callable[[bool], Iterator[int]]:
    """Reads the order of every CVE (or every unrejected one) over `connection`."""

    def read(no_rejected: bool) -> Iterator[int]:
        return (int(row[0]) for row in connection.execute(ORDER[no_rejected], binary=True))

    return read
