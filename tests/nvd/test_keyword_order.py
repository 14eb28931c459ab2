"""Keyword searches put in the API's order without reading the CVE rows
(`assay.nvd.storage._sqlite_order`) select and order exactly what the SQL over the CVE
rows selects, on the real records of the bundled sample."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay._cli.nvd import bundled_files
from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import open_store
from assay.nvd.storage._sql import SQLITE, SqlBuilder, cve_where
from assay.nvd.storage._sqlite_order import SORT_SHARE, keyword_ids
from assay.nvd.storage.sqlite import SqliteStore

PHRASES = ("buffer overflow", "cross-site scripting", "remote attackers", "sql injection",
           "denial of service", "linux kernel", "arbitrary code", "a", "the", "x", "of",
           "microsoft windows", "use-after-free", "CVE", "2021", "1.2", "é", "--", "\"quoted\"")  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    url = f"sqlite:///{tmp_path_factory.mktemp('keywords') / 'store.db'}"
    opened = open_store(url)
    assert Importer(opened).import_files(list(bundled_files())).ok
    assert isinstance(opened, SqliteStore)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def words(store: SqliteStore) -> list[str]:
    """Words of the stored descriptions (a few of each record)."""
    found: set[str] = set()
    page = store.search_cves(parse_cve_query([("resultsPerPage", "2000")]))
    for record in page.records:
        for description in orjson.loads(record)["descriptions"]:
            found.update(re.findall(r"[\w.-]+", description["value"].lower())[:6])
    return sorted(found)


def previous(store: SqliteStore, query: CveQuery) -> array[int]:
    """The ids the SQL over the CVE rows gives (what the store ran before)."""
    builder = SqlBuilder(SQLITE)
    where = cve_where(query, builder)
    rows = store._connection().execute(
        f"SELECT c.id FROM cve c WHERE {where} ORDER BY c.published, c.cve_id", builder.params
    )
    return array("q", (row[0] for row in rows))


def now(store: SqliteStore, query: CveQuery) -> array[int] | None:
    connection = store._connection()
    return keyword_ids(connection, store.generation(), query, store._orders)


def _query(text: str, exact: bool, no_rejected: bool) -> CveQuery:
    pairs = [("keywordSearch", text)]
    if exact:
        pairs.append(("keywordExactMatch", ""))
    if no_rejected:
        pairs.append(("noRejected", ""))
    return parse_cve_query(pairs)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("no_rejected", [False, True])
def test_the_phrases_select_and_order_as_before(
    store: SqliteStore, exact: bool, no_rejected: bool
) -> None:
    sizes = []
    for text in PHRASES:
        query = _query(text, exact, no_rejected)
        assert now(store, query) == previous(store, query), text
        sizes.append(len(previous(store, query)))
    # Both ways of ordering are taken: a few matches sorted, many picked out of the order.
    everything = len(previous(store, CveQuery()))
    assert min(sizes) * SORT_SHARE < everything < max(sizes) * SORT_SHARE


@settings(max_examples=150)
@given(data=st.data())
def test_words_of_the_records_select_and_order_as_before(
    store: SqliteStore, words: list[str], data: st.DataObject
) -> None:
    picked = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))
    prefixes = [word[: data.draw(st.integers(1, max(1, len(word))))] for word in picked]
    query = _query(" ".join(prefixes), data.draw(st.booleans()), data.draw(st.booleans()))
    assert now(store, query) == previous(store, query)


def test_other_filters_go_the_sql_way(store: SqliteStore) -> None:
    query = parse_cve_query([("keywordSearch", "overflow"), ("hasKev", "")])
    assert now(store, query) is None
    assert now(store, parse_cve_query([("noRejected", "")])) is None


def test_pages_through_the_store_are_the_ordered_ids(store: SqliteStore, tmp_path: Path) -> None:
    """Through `search_cves`: every page of a broad search is its slice of the order."""
    query = _query("the", False, False)
    ordered = previous(store, query)
    seen: list[bytes] = []
    for start in range(0, len(ordered), 700):
        page = store.search_cves(
            parse_cve_query(
                [("keywordSearch", "the"), ("startIndex", str(start)), ("resultsPerPage", "700")]
            )
        )
        assert page.total == len(ordered)
        seen.extend(page.records)
    ids = [orjson.loads(record)["id"] for record in seen]
    expected = [
        row[0]
        for row in store._connection().execute(
            "SELECT cve_id FROM cve WHERE id IN (SELECT value FROM json_each(?)) "
            "ORDER BY published, cve_id",
            (orjson.dumps(list(ordered)).decode(),),
        )
    ]
    assert ids == expected
