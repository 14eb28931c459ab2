"""A walk's pages (every CVE, or every unrejected one, in API order) are read past the
kept records, as one range of row ids when the page's rows are consecutive: whatever
order the rows were written in, each page holds the CVEs of the API order, each once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import _sample_files

from assay.nvd.cve_query import CveQuery
from assay.nvd.cve_record import CveFacts, cve_facts
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store


def _api_order(store: Store, *, no_rejected: bool) -> list[str]:
    """Every CVE id of the store in API order (published, then id), from the records."""
    page = store.search_cves(CveQuery(results_per_page=2000))
    assert page.total <= 2000  # (the sample: one page holds it)
    records = [orjson.loads(record) for record in page.records]
    chosen = [r for r in records if not (no_rejected and r["vulnStatus"] == "Rejected")]
    return [r["id"] for r in sorted(chosen, key=lambda r: (r["published"], r["id"]))]


@pytest.fixture(params=backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _facts(store: Store) -> list[CveFacts]:
    page = store.search_cves(CveQuery(results_per_page=2000))
    return [cve_facts(orjson.loads(record), "sample") for record in page.records]


@pytest.fixture
def stores(backend: str, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    """The sample imported in file order, and the same CVEs written in reverse API order
    (their row ids run against the walk's order)."""
    in_order = tmp_path / "in-order"
    reversed_ = tmp_path / "reversed"
    in_order.mkdir()
    reversed_.mkdir()
    for first_url in make_store_url(backend, in_order):
        first = open_store(first_url)
        assert Importer(first).import_files(_sample_files()).ok
        for second_url in make_store_url(backend, reversed_):
            second = open_store(second_url)
            facts = _facts(first)
            order = {cve: place for place, cve in enumerate(_api_order(first, no_rejected=False))}
            second.upsert_cves(sorted(facts, key=lambda f: -order[f.cve_id]))
            try:
                yield first, second
            finally:
                second.close()
        first.close()


@pytest.mark.parametrize("size", [1, 7, 50, 2000])
@pytest.mark.parametrize("no_rejected", [False, True])
def test_walk_pages_hold_the_api_order_whatever_order_rows_were_written_in(
    stores: tuple[Store, Store], size: int, no_rejected: bool
) -> None:
    for store in stores:
        expected = _api_order(store, no_rejected=no_rejected)
        walked: list[str] = []
        start = 0
        while True:
            page = store.search_cves(
                CveQuery(no_rejected=no_rejected, start_index=start, results_per_page=size)
            )
            assert page.total == len(expected)
            walked += [orjson.loads(record)["id"] for record in page.records]
            start += size
            if start >= page.total:
                break
        assert walked == expected
