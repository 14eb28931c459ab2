"""Keyword searches put in the API's order without reading the CVE rows
(`assay.nvd.storage._sqlite_order`), and PostgreSQL's id-set searches (keywords,
`cpeName`, `virtualMatchString`: `assay.nvd.storage._postgres_order`), select and order
exactly what the SQL over the CVE rows selects, on the real records of the bundled
sample."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import backends, make_store_url

from assay._cli.nvd import bundled_files
from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.cve_record import cve_facts
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import open_store
from assay.nvd.storage._api_order import SORT_SHARE
from assay.nvd.storage._postgres_order import (
    CVE_ORDER,
    RECORDS_WITH_IDS,
    api_ordered_ids,
    walk_order_of,
)
from assay.nvd.storage._postgres_rows import bound
from assay.nvd.storage._sql import POSTGRES, SQLITE, SqlBuilder, cve_where
from assay.nvd.storage._sqlite_order import keyword_ids
from assay.nvd.storage.postgres import PostgresStore
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


# -- PostgreSQL: id-set filters put in the kept order (`_postgres_order`) ---------------------


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresStore]:
    if "postgres" not in backends():
        pytest.skip("the PostgreSQL backend is not being tested")
    for url in make_store_url("postgres", tmp_path_factory.mktemp("postgres")):
        opened = open_store(url)
        assert Importer(opened).import_files(list(bundled_files())).ok
        assert isinstance(opened, PostgresStore)
        yield opened
        opened.close()


@pytest.fixture(scope="module")
def cpe_names(store: SqliteStore) -> list[str]:
    """Criteria of the stored configurations, each as a `cpeName` (a version range's
    criteria named at a version, some inside the range)."""
    found: set[str] = set()
    page = store.search_cves(parse_cve_query([("resultsPerPage", "2000")]))
    for record in page.records:
        for criteria in re.findall(rb'"criteria":"(cpe:2\.3:[^"]+)"', record)[:3]:
            parts = criteria.decode().split(":")
            if "*" not in parts[2:5]:
                for version in ("1.0", "2.3.4") if parts[5] == "*" else (parts[5],):
                    found.add(":".join([*parts[:5], version, *parts[6:]]))
    return sorted(found)


def sql_ordered(postgres: PostgresStore, query: CveQuery) -> list[str]:
    """The CVE ids the SQL over the CVE rows gives (what the store ran before)."""
    builder = SqlBuilder(POSTGRES)
    where = cve_where(query, builder)
    with postgres._using("testing") as connection:
        rows = connection.execute(
            f"SELECT c.cve_id FROM cve c WHERE {where} ORDER BY {CVE_ORDER}", bound(builder.params)
        ).fetchall()
    return [str(row[0]) for row in rows]


def placed(postgres: PostgresStore, query: CveQuery) -> list[str]:
    """The CVE ids `api_ordered_ids` gives (what the store runs now), checked to be
    placed by the kept order rather than sorted by SQL."""
    assert walk_order_of(query) is not None
    with postgres._using("testing") as connection:
        generation = postgres._generation(connection)
        ids = api_ordered_ids(connection, generation, query, postgres._orders, ("", ()))
        rows = connection.execute(
            "SELECT id, cve_id FROM cve WHERE id = ANY(%s::bigint[])", (list(ids),)
        ).fetchall()
    names = {int(row_id): str(cve_id) for row_id, cve_id in rows}
    return [names[row_id] for row_id in ids]


def test_postgres_phrases_select_and_order_as_before(postgres: PostgresStore) -> None:
    for exact in (False, True):
        for no_rejected in (False, True):
            for text in PHRASES:
                query = _query(text, exact, no_rejected)
                assert placed(postgres, query) == sql_ordered(postgres, query), text


@settings(max_examples=60)
@given(data=st.data())
def test_postgres_words_select_and_order_as_before(
    postgres: PostgresStore, words: list[str], data: st.DataObject
) -> None:
    picked = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))
    prefixes = [word[: data.draw(st.integers(1, max(1, len(word))))] for word in picked]
    query = _query(" ".join(prefixes), data.draw(st.booleans()), data.draw(st.booleans()))
    assert placed(postgres, query) == sql_ordered(postgres, query)


def test_postgres_cpe_names_select_and_order_as_before(
    postgres: PostgresStore, cpe_names: list[str]
) -> None:
    assert len(cpe_names) > 50
    hits = 0
    for number, name in enumerate(cpe_names):
        pairs = [("cpeName", name)]
        if number % 3 == 1:
            pairs.append(("isVulnerable", ""))
        if number % 2:
            pairs.append(("noRejected", ""))
        query = parse_cve_query(pairs)
        expected = sql_ordered(postgres, query)
        assert placed(postgres, query) == expected, name
        hits += bool(expected)
        virtual = parse_cve_query([("virtualMatchString", name)])
        assert placed(postgres, virtual) == sql_ordered(postgres, virtual), name
    assert hits > len(cpe_names) // 2  # (most names are some CVE's criteria)


def test_postgres_other_filters_go_the_sql_way() -> None:
    for pairs in (
        [("keywordSearch", "overflow"), ("hasKev", "")],
        [("noRejected", "")],
        [],
        [("cvssV3Severity", "HIGH")],
    ):
        assert walk_order_of(parse_cve_query(pairs)) is None


def test_postgres_pages_are_those_sqlite_gives(
    store: SqliteStore, postgres: PostgresStore, cpe_names: list[str]
) -> None:
    """Through `search_cves` on both stores: the same records, the same totals."""
    for pairs in (
        [("keywordSearch", "the")],
        [("keywordSearch", "remote attackers"), ("keywordExactMatch", ""), ("noRejected", "")],
        [("cpeName", cpe_names[0])],
        [("cpeName", cpe_names[-1]), ("isVulnerable", "")],
    ):
        for start in ("0", "3"):
            query = parse_cve_query([*pairs, ("startIndex", start), ("resultsPerPage", "5")])
            ours, theirs = postgres.search_cves(query), store.search_cves(query)
            assert ours.total == theirs.total
            assert [orjson.loads(r)["id"] for r in ours.records] == [
                orjson.loads(r)["id"] for r in theirs.records
            ]


def test_postgres_few_matches_come_with_their_records(
    postgres: PostgresStore, cpe_names: list[str]
) -> None:
    """A filter of at most `RECORDS_WITH_IDS` matches hands their stored records to
    `keep` from the statement that found them; a larger one reads none."""
    for pairs in ([("cpeName", cpe_names[0])], [("keywordSearch", "remote attackers")]):
        query = parse_cve_query(pairs)
        handed: list[dict[int, bytes]] = []
        with postgres._using("testing") as connection:
            generation = postgres._generation(connection)
            ids = api_ordered_ids(
                connection, generation, query, postgres._orders, ("", ()), keep=handed.append
            )
            rows = connection.execute(
                "SELECT id, record FROM cve WHERE id = ANY(%s::bigint[])", (list(ids),), binary=True
            ).fetchall()
        assert 0 < len(ids) <= RECORDS_WITH_IDS, pairs
        assert handed == [{int(row_id): bytes(record) for row_id, record in rows}]
    with postgres._using("testing") as connection:
        generation = postgres._generation(connection)
        handed = []
        many = parse_cve_query([("keywordSearch", "the")])
        ids = api_ordered_ids(
            connection, generation, many, postgres._orders, ("", ()), keep=handed.append
        )
    assert len(ids) > RECORDS_WITH_IDS
    assert handed == []


def test_postgres_a_newer_revision_is_what_a_few_match_search_gives(tmp_path: Path) -> None:
    """Records read with their ids are kept for the generation they were read at: a
    write moves the generation on, and the same search then gives the new record."""
    if "postgres" not in backends():
        pytest.skip("PostgreSQL is not configured")
    for url in make_store_url("postgres", tmp_path):
        opened = open_store(url)
        try:
            assert Importer(opened).import_files(list(bundled_files())).ok
            query = parse_cve_query(
                [("keywordSearch", "remote attackers"), ("resultsPerPage", "1")]
            )
            first = orjson.loads(opened.search_cves(query).records[0])
            newer = {
                **first,
                "lastModified": "2099-01-01T00:00:00.000",
                "descriptions": [{"lang": "en", "value": "remote attackers, revised"}],
            }
            opened.upsert_cves([cve_facts(newer, "test")])
            again = orjson.loads(opened.search_cves(query).records[0])
            assert again["id"] == first["id"]
            assert again["descriptions"][0]["value"] == "remote attackers, revised"
        finally:
            opened.close()
