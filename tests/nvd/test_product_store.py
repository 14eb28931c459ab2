"""Store rules for CPE products, match criteria and changes, on every backend.

Counts, lastModified (or created) precedence, the latest revision within a batch,
all-or-nothing batches, generation moves, expansions replaced with their record, and
cached result lists that follow writes.
"""

from __future__ import annotations

import copy
import dataclasses
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from tests.nvd.conftest import CPEMATCH_FILE, CPES_FILE, HISTORY_FILE, response

from assay.errors import InputError, StoreError
from assay.nvd.change_record import change_facts
from assay.nvd.cpe import CriteriaRange, criteria_expands_to, parse_cpe
from assay.nvd.cpe_query import CpeQuery, parse_cpe_query
from assay.nvd.cpe_record import cpe_facts
from assay.nvd.cpematch_query import parse_cpematch_query
from assay.nvd.cpematch_record import match_facts
from assay.nvd.cve_record import cve_facts
from assay.nvd.history_query import parse_history_query
from assay.nvd.storage import Store, open_store
from assay.nvd.storage import _cache as result_cache
from assay.nvd.storage.interface import UpsertCounts

PRODUCTS = [item["cpe"] for item in response(CPES_FILE)["products"]]
CRITERIA = [item["matchString"] for item in response(CPEMATCH_FILE)["matchStrings"]]
CHANGES = [item["change"] for item in response(HISTORY_FILE)["cveChanges"]]
WINDOWS = "A2572D17-1DE6-457B-99CC-64AFD54487EA"
WRITE_FAILURES = (StoreError, sqlite3.Error)  # the driver's error on SQLite


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


def cpes(store: Store, text: str) -> list[dict[str, Any]]:
    import orjson

    return [orjson.loads(r) for r in store.search_cpes(parse_cpe_query(_pairs(text))).records]


def _pairs(text: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(text, keep_blank_values=True)


def counts(added: int = 0, updated: int = 0, unchanged: int = 0) -> UpsertCounts:
    return UpsertCounts(added=added, updated=updated, unchanged=unchanged)


def revised_cpe(record: dict[str, Any], last_modified: str, title: str) -> dict[str, Any]:
    changed = copy.deepcopy(record)
    changed["lastModified"] = last_modified
    changed["titles"] = [{"title": title, "lang": "en"}]
    return changed


def test_product_upserts_count_and_respect_last_modified(store: Store) -> None:
    batch = [cpe_facts(p) for p in PRODUCTS[:50]]
    assert store.upsert_cpes(batch) == counts(added=50)
    assert store.upsert_cpes(batch) == counts(unchanged=50)
    first = PRODUCTS[0]
    older = revised_cpe(first, "2001-01-01T00:00:00.000", "older title")
    assert store.upsert_cpes([cpe_facts(older)]) == counts(unchanged=1)
    assert cpes(store, "keywordSearch=older") == []
    newer = revised_cpe(first, "2026-06-01T00:00:00.000", "zanzibar gadget")
    assert store.upsert_cpes([cpe_facts(newer)]) == counts(updated=1)
    assert cpes(store, "keywordSearch=zanzibar") == [newer]
    # The old title's words left the index with the old revision.
    assert (
        cpes(
            store,
            f"keywordSearch={first['titles'][0]['title'].split()[1]}&cpeNameId={first['cpeNameId']}",
        )
        == []
    )
    same_time = revised_cpe(newer, newer["lastModified"], "quokka gadget")
    assert store.upsert_cpes([cpe_facts(same_time)]) == counts(updated=1)
    assert cpes(store, "keywordSearch=quokka") == [same_time]


def test_within_a_batch_the_latest_revision_wins(store: Store) -> None:
    first = PRODUCTS[0]
    newest = revised_cpe(first, "2026-06-01T00:00:00.000", "newest")
    batch = [
        cpe_facts(newest),
        cpe_facts(first),
        cpe_facts(revised_cpe(first, "2020-01-01T00:00:00.000", "mid")),
    ]
    assert store.upsert_cpes(batch) == counts(added=1, unchanged=2)
    assert cpes(store, f"cpeNameId={first['cpeNameId']}") == [newest]


def test_match_string_updates_replace_the_expansion(store: Store) -> None:
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS])
    assert store.upsert_match_strings([match_facts(m) for m in CRITERIA]) == counts(added=6)
    windows = next(m for m in CRITERIA if m["matchCriteriaId"] == WINDOWS)
    assert [p["cpeName"] for p in cpes(store, f"matchCriteriaId={WINDOWS}")] == [
        "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    ]
    narrowed = copy.deepcopy(windows)
    narrowed["lastModified"] = "2026-06-01T00:00:00.000"
    narrowed["matches"] = [m for m in windows["matches"] if ":x64:" in m["cpeName"]]
    assert store.upsert_match_strings([match_facts(narrowed)]) == counts(updated=1)
    assert cpes(store, f"matchCriteriaId={WINDOWS}") == []
    older = copy.deepcopy(windows)
    older["lastModified"] = "2000-01-01T00:00:00.000"
    assert store.upsert_match_strings([match_facts(older)]) == counts(unchanged=1)
    page = store.search_match_strings(parse_cpematch_query([("matchCriteriaId", WINDOWS)]))
    assert page.total == 1
    assert b"2026-06-01T00:00:00.000" in page.records[0]


def test_change_upserts_are_keyed_by_change_id(store: Store) -> None:
    assert store.upsert_changes([change_facts(c) for c in CHANGES]) == counts(added=4)
    assert store.upsert_changes([change_facts(c) for c in CHANGES]) == counts(unchanged=4)
    edited = copy.deepcopy(CHANGES[0])
    edited["details"] = edited["details"][:1]
    assert store.upsert_changes([change_facts(edited)]) == counts(updated=1)
    earlier = copy.deepcopy(CHANGES[0])
    earlier["created"] = "2001-01-01T00:00:00.000"
    assert store.upsert_changes([change_facts(earlier)]) == counts(unchanged=1)
    page = store.search_changes(parse_history_query([("cveId", "CVE-2019-1010218")]))
    assert page.total == 4
    assert b'"details":[{"action":"Added","type":"CVSS V2"' in page.records[0]
    assert b"CWE-119" not in page.records[0]


def test_a_failing_batch_leaves_the_store_exactly_as_before(store: Store) -> None:
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS[:10]])
    spoiled = [cpe_facts(p) for p in PRODUCTS[10:20]]
    # A record the backend cannot bind fails the write half-way through the batch.
    spoiled[5] = dataclasses.replace(spoiled[5], record=object())  # type: ignore[arg-type]
    with pytest.raises(WRITE_FAILURES):
        store.upsert_cpes(spoiled, meta={"sync.cpes": "after"})
    assert store.search_cpes(CpeQuery()).total == 10
    changes = [change_facts(c) for c in CHANGES]
    changes[2] = dataclasses.replace(changes[2], record=object())  # type: ignore[arg-type]
    with pytest.raises(WRITE_FAILURES):
        store.upsert_changes(changes, meta={"sync.changes": "after"})
    assert store.search_changes(parse_history_query([])).total == 0
    assert store.get_meta("sync.cpes") is None
    assert store.get_meta("sync.changes") is None


def test_every_kind_writes_its_meta_with_its_batch(store: Store) -> None:
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS[:3]], meta={"sync.cpes": "1"})
    store.upsert_match_strings([match_facts(c) for c in CRITERIA[:3]], meta={"sync.m": "2"})
    store.upsert_changes([change_facts(c) for c in CHANGES[:3]], meta={"sync.changes": "3"})
    store.upsert_cpes([], meta={"sync.cpes": "4"})
    assert [store.get_meta(k) for k in ("sync.cpes", "sync.m", "sync.changes")] == ["4", "2", "3"]
    assert store.search_cpes(CpeQuery()).total == 3


def test_generation_and_cached_lists_follow_writes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(result_cache, "MIN_CACHED_RESULTS", 1)
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS[:100]])
    before = store.get_meta("generation")
    assert store.search_cpes(CpeQuery()).total == 100
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS[:100]])  # nothing changes
    assert store.get_meta("generation") == before
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS[100:150]])
    assert store.get_meta("generation") != before
    assert store.search_cpes(CpeQuery()).total == 150
    store.upsert_changes([change_facts(CHANGES[0])])
    assert store.search_changes(parse_history_query([])).total == 1


def test_deep_pages_are_slices_of_one_ordered_list(store: Store) -> None:
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS])
    whole = store.search_cpes(CpeQuery()).records
    assert len(whole) == 10000
    for start in (0, 1, 4321, 9999, 10000):
        page = store.search_cpes(CpeQuery(start_index=start, results_per_page=7))
        assert page.total == 10000
        assert page.records == whole[start : start + 7]


def test_cve_criteria_without_stored_records_expand_by_rule(store: Store) -> None:
    store.upsert_cpes([cpe_facts(p) for p in PRODUCTS])
    record = {
        "id": "CVE-2000-0001",
        "published": "2000-01-01T00:00:00.000",
        "lastModified": "2000-01-01T00:00:00.000",
        "configurations": [{"nodes": [{"operator": "OR", "negate": False, "cpeMatch": [
            {"vulnerable": True, "criteria": "cpe:2.3:o:ibm:aix:*:*:*:*:*:*:*:*", "versionStartExcluding": "3.2", "versionEndIncluding": "4.1", "matchCriteriaId": "11111111-2222-3333-4444-555555555555"},
        ]}]}],
    }  # fmt: skip
    store.upsert_cves([cve_facts(record)])
    versions = [
        p["cpeName"].split(":")[5]
        for p in cpes(store, "matchCriteriaId=11111111-2222-3333-4444-555555555555")
    ]
    rule = CriteriaRange.from_json(record["configurations"][0]["nodes"][0]["cpeMatch"][0])
    expected = [
        p["cpeName"].split(":")[5]
        for p in PRODUCTS
        if criteria_expands_to(rule, parse_cpe(p["cpeName"], partial=False))
    ]
    assert "3.2" not in versions  # excluded
    assert "4.1" in versions  # included
    assert sorted(versions) == sorted(expected)


@pytest.mark.parametrize(
    ("function", "value", "where"),
    [
        (cpe_facts, {**PRODUCTS[0], "cpeNameId": "nope"}, "$.cpeNameId"),
        (cpe_facts, {k: v for k, v in PRODUCTS[0].items() if k != "deprecated"}, "$.deprecated"),
        (cpe_facts, {**PRODUCTS[0], "cpeName": "cpe:2.3:a:x"}, "$.cpeName"),
        (cpe_facts, {**PRODUCTS[0], "created": "yesterday"}, "$.created"),
        (cpe_facts, {**PRODUCTS[0], "titles": [{"lang": "en"}]}, "$.titles[0].title"),
        (cpe_facts, {**PRODUCTS[0], "refs": "x"}, "$.refs"),
        (match_facts, {**CRITERIA[0], "criteria": "cpe:2.3:o:microsoft"}, "$.criteria"),
        (match_facts, {**CRITERIA[0], "versionEndIncluding": 7}, "$.versionEndIncluding"),
        (match_facts, {**CRITERIA[0], "status": None}, "$.status"),
        (
            match_facts,
            {**CRITERIA[0], "matches": [{"cpeName": "cpe:2.3:o:x:y:1:*:*:*:*:*:*:*"}]},
            "$.matches[0].cpeNameId",
        ),
        (match_facts, {**CRITERIA[0], "cpeLastModified": "2021"}, "$.cpeLastModified"),
        (match_facts, {**CRITERIA[0], "matchCriteriaId": None}, "$.matchCriteriaId"),
        (change_facts, {**CHANGES[0], "cveId": "CVE-2019"}, "$.cveId"),
        (change_facts, {**CHANGES[0], "cveChangeId": ""}, "$.cveChangeId"),
        (change_facts, {**CHANGES[0], "details": [{"action": "Added"}]}, "$.details[0].type"),
        (change_facts, [CHANGES[0]], "$"),
    ],
)
def test_malformed_records_are_rejected_with_their_path(
    function: Any, value: Any, where: str
) -> None:
    with pytest.raises(InputError) as raised:
        function(value, "$")
    assert raised.value.where == where
