"""`StoreSource`: vulnerabilities from an open assay store, answered as the server does.

Every look-up is one of the store's own searches, with the queries the NVD API would
parse from the same parameters: `cpeName` + `isVulnerable` (match criteria, their
dictionary expansion where stored, version ranges), `virtualMatchString` (every criteria
of a product), and the CPE dictionary's `keywordSearch`/`cpeMatchString`. Nothing here
re-implements NVD's matching.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from assay.audit.model import SourceStatus
from assay.audit.source import (
    PRODUCT_SAMPLE,
    DictionaryProduct,
    Found,
    Lookup,
    Record,
    RecordCache,
)
from assay.errors import InputError
from assay.nvd.checkpoint import sync_status, utc_text
from assay.nvd.cpe import Cpe, parse_cpe
from assay.nvd.cpe_query import MAX_RESULTS_PER_PAGE as MAX_CPE_PAGE
from assay.nvd.cpe_query import CpeQuery
from assay.nvd.cve_query import MAX_RESULTS_PER_PAGE, CveQuery
from assay.nvd.defaults import LAST_IMPORT_KEY
from assay.nvd.operations import OPERATIONS
from assay.nvd.storage import Store
from assay.urls import redact_url

__all__ = ["StoreSource"]

MAX_REFERENCE_PRODUCTS = 200


class StoreSource:
    """A `VulnerabilitySource` over an open store (the caller keeps it open and closes it)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._records = RecordCache()

    def status(self) -> SourceStatus:
        generation = self.store.get_meta("generation")
        return SourceStatus(
            generation=int(generation) if generation and generation.isdigit() else None,
            last_sync=last_sync(self.store),
            # NVD's records, or else the CVE 5 records (a store of `assay cve import` only).
            cve_count=self.store.count_cves() or _count_cve5(self.store),
            url=redact_url(self.store.url),
            last_import=self.store.get_meta(LAST_IMPORT_KEY),
            osv_count=self.store.count_osv(),
        )

    def osv_for_packages(
        self, packages: Sequence[tuple[str, str]]
    ) -> Mapping[tuple[str, str], Sequence[bytes]]:
        """OSV records by (ecosystem, name) (`assay.audit.osv_match.OsvLookup`)."""
        return self.store.osv_for_packages(packages)

    def count_osv(self) -> int:
        return self.store.count_osv()

    def _pages(self, query: CveQuery) -> Iterator[bytes]:
        start = 0
        while True:
            page = self.store.search_cves(
                CveQuery(
                    **{
                        **_fields(query),
                        "start_index": start,
                        "results_per_page": MAX_RESULTS_PER_PAGE,
                    }
                )
            )
            yield from page.records
            start += MAX_RESULTS_PER_PAGE
            if start >= page.total or not page.records:
                return

    def affecting(self, name: Cpe) -> Sequence[Record]:
        return [self._records.decode(raw) for raw in self._pages(_query(Lookup(name)))]

    def of_product(self, part: str, vendor: str, product: str) -> Sequence[Record]:
        match = parse_cpe(f"cpe:2.3:{part}:{vendor}:{product}", partial=True)
        query = _query(Lookup(match, product_wide=True))
        return [self._records.decode(raw) for raw in self._pages(query)]

    def find(
        self, lookups: Sequence[Lookup], progress: Callable[[int], None] | None = None
    ) -> Iterator[Found]:
        # The store runs every look-up's query in one snapshot and streams the records.
        return self.store.find_cves([_query(lookup) for lookup in lookups])

    def products_with_reference(self, url: str) -> Sequence[DictionaryProduct]:
        words = url.split("://", 1)[-1]
        page = self.store.search_cpes(
            CpeQuery(keywords=(words,), keyword_exact=True, results_per_page=MAX_REFERENCE_PRODUCTS)
        )
        return [_product(raw) for raw in page.records]

    def vendors_of(self, product: str) -> Sequence[tuple[str, str]]:
        found: dict[tuple[str, str], None] = {}
        try:
            pattern = parse_cpe(f"cpe:2.3:*:*:{product}", partial=True)
        except InputError:
            return []
        page = self.store.search_cpes(
            CpeQuery(match_string=pattern, results_per_page=min(PRODUCT_SAMPLE, MAX_CPE_PAGE))
        )
        for raw in page.records:
            cpe = _product(raw).cpe
            found[(cpe.part, cpe.vendor)] = None
        cves = self.store.search_cves(
            CveQuery(virtual_match=pattern, results_per_page=PRODUCT_SAMPLE)
        )
        for raw in cves.records:
            for criteria in _criteria_names(self._records.decode(raw)):
                if criteria.product == pattern.product:
                    found[(criteria.part, criteria.vendor)] = None
        return list(found)

    def close(self) -> None:
        self.store.close()


def _count_cve5(store: Store) -> int:
    count = getattr(store, "count_cve5", None)
    return int(count()) if callable(count) else 0


def _query(lookup: Lookup) -> CveQuery:
    """The CVE API query of a look-up: `cpeName` + `isVulnerable`, or the
    `virtualMatchString` of the name's part, vendor and product."""
    name = lookup.name
    if lookup.product_wide:
        match = Cpe(name.part, name.vendor, name.product, *["*"] * 8)
        return CveQuery(virtual_match=match)
    return CveQuery(cpe_name=name, is_vulnerable=True)


def _fields(query: CveQuery) -> dict[str, Any]:
    return {name: getattr(query, name) for name in query.__dataclass_fields__}


def _product(raw: bytes) -> DictionaryProduct:
    obj = orjson.loads(raw)
    cpe = parse_cpe(str(obj.get("cpeName")), partial=False)
    refs = tuple(str(ref.get("ref")) for ref in obj.get("refs") or () if isinstance(ref, dict))
    return DictionaryProduct(cpe, refs)


def _criteria_names(record: Record) -> Iterator[Cpe]:
    stack = [node for c in record.get("configurations") or () for node in c.get("nodes") or ()]
    while stack:
        node = stack.pop()
        stack.extend(node.get("children") or ())
        yield from _node_criteria(node)


def _node_criteria(node: Record) -> Iterator[Cpe]:
    """The criteria of a node's own `cpeMatch` that parse as CPE names."""
    for match in node.get("cpeMatch") or ():
        text = match.get("criteria")
        if isinstance(text, str):
            try:
                yield parse_cpe(text, partial=True)
            except InputError:
                continue


def last_sync(store: Store) -> str | None:
    """The time a mirror holds every CVE up to (its CVE sync, `...Z`), if it has one."""
    status = sync_status(store.get_meta, OPERATIONS["cves"])
    moment = None if status is None else status.complete_to
    return None if moment is None else utc_text(moment)


def open_store_source(url: str) -> StoreSource:
    """Open the store named by `url` (read as it is; an empty store is the caller's call).
    A store that does not exist is a `StoreError`: scanning never creates one."""
    from assay.nvd.storage import open_store

    return StoreSource(open_store(url, create=False))
