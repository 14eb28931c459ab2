"""The cache of decoded records (`assay.nvd.storage._decoded`) and its use by the store:
a replaced record is never served from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.nvd.test_store import SAMPLE, facts, revised

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.storage import open_store
from assay.nvd.storage._decoded import DecodedRecords


def test_records_are_kept_within_one_generation() -> None:
    cache = DecodedRecords()
    assert cache.get_many(3, [1, 2]) == {}
    cache.put_many(3, {1: b"one", 2: b"two"})
    assert cache.get_many(3, [1, 2, 5]) == {1: b"one", 2: b"two"}
    # A newer generation empties it.
    assert cache.get_many(4, [1]) == {}
    assert cache.get_many(4, [1, 2]) == {}


def test_a_reader_of_an_older_generation_neither_reads_nor_fills_it() -> None:
    cache = DecodedRecords()
    cache.get_many(5, [])
    cache.put_many(5, {1: b"new"})
    assert cache.get_many(4, [1]) == {}  # (and it does not empty the cache)
    cache.put_many(4, {2: b"old"})
    assert cache.get_many(5, [1, 2]) == {1: b"new"}


@given(st.lists(st.tuples(st.integers(0, 50), st.binary(max_size=250)), max_size=200))
def test_it_never_holds_more_than_its_budget(items: list[tuple[int, bytes]]) -> None:
    cache = DecodedRecords(max_bytes=2000)
    cache.get_many(1, [])
    for row_id, record in items:
        cache.put_many(1, {row_id: record})
    held = cache.get_many(1, list(range(51)))
    assert sum(len(record) for record in held.values()) <= 2000
    # Nothing is mixed up between ids.
    for row_id, record in held.items():
        assert record in {value for key, value in items if key == row_id}
    # The most recent put is always held (it fits: at most an eighth of the budget).
    if items:
        assert items[-1][0] in held


def test_the_store_serves_a_replaced_record_anew(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        store.upsert_cves(facts(SAMPLE[:50]))
        target = SAMPLE[10]
        # A filtered query keeps its records decoded (a walk's pages do not: see below).
        by_source = parse_cve_query([("sourceIdentifier", target["sourceIdentifier"])])
        everything = parse_cve_query([])
        before = store.search_cves(by_source).records  # now decoded and kept
        assert store.search_cves(everything).total == 50
        store.upsert_cves(facts([revised(target, "2026-07-01T00:00:00.000", "REPLACED text")]))
        for query in (by_source, everything):
            after = store.search_cves(query).records
            changed = [json.loads(record) for record in after if record not in before]
            assert [record["id"] for record in changed] == [target["id"]]
            assert changed[0]["descriptions"][0]["value"] == "REPLACED text"
    finally:
        store.close()


@pytest.mark.parametrize("in_api_order", [True, False])
@pytest.mark.parametrize("walk", [[], [("noRejected", "")]])
def test_pages_of_a_walk_give_the_records_in_order_without_filling_the_cache(
    tmp_path: Path, in_api_order: bool, walk: list[tuple[str, str]]
) -> None:
    """Rows written in API order are read as ranges (with the rejected ones skipped),
    others by id: the same pages."""
    # Every fifth rejected: a walk without them skips rows.
    records = [
        dict(r, vulnStatus="Rejected") if i % 5 == 0 else r for i, r in enumerate(SAMPLE[:50])
    ]
    if in_api_order:
        records = sorted(records, key=lambda record: (record["published"], record["id"]))
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        store.upsert_cves(facts(records))
        walked = [
            record
            for start in range(0, 50, 7)
            for record in store.search_cves(
                parse_cve_query([*walk, ("resultsPerPage", "7"), ("startIndex", str(start))])
            ).records
        ]
        assert walked == store.search_cves(parse_cve_query(walk)).records
        # (nothing was kept: a filtered query finds the cache empty)
        generation = store.generation()
        assert store._decoded.get_many(generation, list(range(1, 60))) == {}
    finally:
        store.close()
