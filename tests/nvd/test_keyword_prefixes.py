"""A PostgreSQL keyword search reads each prefix as the lexemes it stands for
(`_sql.tsquery_condition`, from `cve_lexeme`) and answers exactly as the prefix term
would, and as SQLite's FTS5 does: for every prefix length, a prefix standing for no
lexeme or for more than `MAX_PREFIX_LEXEMES`, hyphenated words and phrases. The lexeme
table is written with the texts, so a word a write brings is found by its prefix at
once."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import revised

from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.cve_record import cve_facts
from assay.nvd.storage._postgres_rows import bound
from assay.nvd.storage._sql import (
    CVE_TEXT,
    MAX_PREFIX_LEXEMES,
    POSTGRES,
    SqlBuilder,
    keyword_ids,
    search_tokens,
)
from assay.nvd.storage.postgres import PostgresStore
from assay.nvd.storage.sqlite import SqliteStore

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")

# The same search without the lexeme table: the index's own prefix terms.
PREFIX_TERMS = replace(CVE_TEXT, lexeme_table=None)


@pytest.fixture(scope="module")
def tokens(bundled_stores: tuple[SqliteStore, PostgresStore]) -> list[str]:
    """Tokens of the stored descriptions (a dozen of each record)."""
    found: set[str] = set()
    page = bundled_stores[0].search_cves(parse_cve_query([("resultsPerPage", "2000")]))
    for record in page.records:
        for description in orjson.loads(record)["descriptions"]:
            found.update(re.findall(r"[\w.-]+", description["value"].lower())[:12])
    return sorted(found)


def _ids(store: SqliteStore | PostgresStore, words: list[str], exact: bool = False) -> list[str]:
    query = CveQuery(keywords=tuple(words), keyword_exact=exact, results_per_page=2000)
    return [orjson.loads(r)["id"] for r in store.search_cves(query).records]


def _prefix_term_ids(store: PostgresStore, words: list[str]) -> set[int]:
    builder = SqlBuilder(POSTGRES)
    select = keyword_ids(builder, words, False, PREFIX_TERMS)
    with store._using("testing") as connection:
        return {int(r[0]) for r in connection.execute(select, bound(builder.params)).fetchall()}


def _expanded_ids(store: PostgresStore, words: list[str]) -> set[int]:
    builder = SqlBuilder(POSTGRES)
    select = keyword_ids(builder, words, False, CVE_TEXT)
    with store._using("testing") as connection:
        return {int(r[0]) for r in connection.execute(select, bound(builder.params)).fetchall()}


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_prefix_searched_as_its_lexemes_matches_what_the_prefix_term_matches(
    data: st.DataObject, bundled_stores: tuple[SqliteStore, PostgresStore], tokens: list[str]
) -> None:
    sqlite, postgres = bundled_stores
    count = data.draw(st.integers(1, 3))
    words = []
    for _ in range(count):
        token = data.draw(st.sampled_from(tokens))
        words.append(token[: data.draw(st.integers(1, len(token)))])
    assert _expanded_ids(postgres, words) == _prefix_term_ids(postgres, words)
    assert _ids(postgres, words) == _ids(sqlite, words)


@pytest.mark.parametrize(
    "words",
    [
        ["s"],  # more lexemes than MAX_PREFIX_LEXEMES: left a prefix term
        ["cross-site", "scr"],  # a phrase whose last token is a prefix
        ["microsoft", "windows"],
        ["zzzzqqq"],  # no lexeme: matches nothing
        ["remote", "zzzzqqq"],
        ["1.2"],
    ],
)
def test_chosen_prefixes_answer_as_sqlite(
    words: list[str], bundled_stores: tuple[SqliteStore, PostgresStore]
) -> None:
    sqlite, postgres = bundled_stores
    assert _expanded_ids(postgres, words) == _prefix_term_ids(postgres, words)
    assert _ids(postgres, words) == _ids(sqlite, words)


def test_a_short_prefix_stands_for_more_lexemes_than_are_listed(
    bundled_stores: tuple[SqliteStore, PostgresStore],
) -> None:
    # The case above that keeps the prefix term does stand for that many lexemes.
    with bundled_stores[1]._using("testing") as connection:
        row = connection.execute(
            "SELECT count(*) FROM cve_lexeme WHERE lexeme >= 's' AND lexeme < 't'"
        ).fetchone()
    assert row is not None
    assert int(row[0]) > MAX_PREFIX_LEXEMES


def test_a_word_a_write_brings_is_found_by_its_prefix(
    bundled_stores: tuple[SqliteStore, PostgresStore],
) -> None:
    # "remot" stands for lexemes the store holds already ("remote", ...): the new word
    # is found only if its own lexeme was written with the text.
    sqlite, postgres = bundled_stores
    record = orjson.loads(postgres.search_cves(CveQuery(results_per_page=1)).records[0])
    text = "A remotexyzzy flaw lets attackers read memory."
    later = revised(record, "2030-01-01T00:00:00.000", text)
    for store in (sqlite, postgres):
        store.upsert_cves([cve_facts(later)])
    assert "remote" not in search_tokens(text)
    with postgres._using("testing") as connection:
        written = connection.execute(
            "SELECT lexeme FROM cve_lexeme WHERE lexeme = 'remotexyzzy'"
        ).fetchall()
    assert written == [("remotexyzzy",)]
    assert record["id"] in _ids(postgres, ["remot"])
    assert _ids(postgres, ["remot"]) == _ids(sqlite, ["remot"])
    # Rewritten again without the word: its lexeme may stay, nothing matches it.
    again = revised(record, "2030-01-02T00:00:00.000", "Nothing of that word is left.")
    for store in (sqlite, postgres):
        store.upsert_cves([cve_facts(again)])
    assert record["id"] not in _ids(postgres, ["remot"])
    assert _ids(postgres, ["remotex"]) == _ids(sqlite, ["remotex"]) == []


def _complete(store: PostgresStore) -> bool:
    with store._using("testing") as connection:
        return (
            connection.execute("SELECT 1 FROM cve_lexeme WHERE lexeme = ''").fetchone() is not None
        )


def _lexemes(store: PostgresStore) -> set[str]:
    with store._using("testing") as connection:
        return {str(r[0]) for r in connection.execute("SELECT lexeme FROM cve_lexeme")}


def test_a_load_into_an_empty_store_lists_the_lexemes_at_its_end(
    tmp_path: Path, bundled_stores: tuple[SqliteStore, PostgresStore]
) -> None:
    sqlite, _ = bundled_stores
    for url in make_store_url("postgres", tmp_path):
        store = PostgresStore(url)
        try:
            assert _complete(store)  # (an empty store lists every lexeme it has: none)
            with store.bulk_load():
                store.upsert_cves([cve_facts(orjson.loads(r)) for r in _all_records(sqlite)])
                # Meanwhile the list is not complete: prefixes stay prefix terms.
                assert not _complete(store)
                assert _ids(store, ["remot"]) == _ids(sqlite, ["remot"])
            assert _complete(store)
            with store._using("testing") as connection:
                vectors = {
                    str(r[0])
                    for r in connection.execute(
                        "SELECT DISTINCT unnest(tsvector_to_array(search_vector)) FROM cve_text"
                    )
                }
            assert _lexemes(store) == vectors | {""}
            # A load killed before its end: the store opened next lists them.
            with store._using("testing") as connection:
                connection.execute("DELETE FROM cve_lexeme")
        finally:
            store.close()
        reopened = PostgresStore(url)
        try:
            assert _complete(reopened)
            assert _lexemes(reopened) == vectors | {""}
            assert _ids(reopened, ["remot"]) == _ids(sqlite, ["remot"])
        finally:
            reopened.close()


def _all_records(store: SqliteStore) -> list[bytes]:
    return list(store.search_cves(parse_cve_query([("resultsPerPage", "2000")])).records)


@pytest.mark.parametrize(
    ("words", "phrase"),
    [
        (["microsoft", "windows"], None),
        (["remote"], None),
        # A phrase: its tokens are read by the index as words, the phrase (with its
        # prefix terms) is checked on each candidate's vector.
        (["cross-site", "scripting"], "('cross' <-> 'site':*) & ('scripting':*)"),
        (["out-of-bounds", "read"], "('out' <-> 'of' <-> 'bounds':*) & ('read':*)"),
    ],
)
def test_the_index_reads_prefixes_as_lexemes_and_a_phrase_is_checked_on_the_vectors(
    words: list[str], phrase: str | None, bundled_stores: tuple[SqliteStore, PostgresStore]
) -> None:
    builder = SqlBuilder(POSTGRES)
    select = keyword_ids(builder, words, False, CVE_TEXT)
    assert "cve_lexeme" in select
    assert [p for p in builder.params if isinstance(p, str) and "<->" in p] == (
        [] if phrase is None else [phrase]
    )
    with bundled_stores[1]._using("testing") as connection:
        connection.execute("SET enable_seqscan = off")  # (a small table: else read whole)
        try:
            plan = connection.execute(
                "EXPLAIN (FORMAT JSON) " + select, bound(builder.params)
            ).fetchone()
        finally:
            connection.execute("RESET enable_seqscan")
    assert plan is not None
    nodes = _plan_nodes(plan[0][0]["Plan"])
    index_conditions = [n["Index Cond"] for n in nodes if n["Node Type"] == "Bitmap Index Scan"]
    assert index_conditions, nodes
    assert not any("<->" in condition for condition in index_conditions)
    filters = [n.get("Filter", "") for n in nodes if n["Node Type"] == "Bitmap Heap Scan"]
    assert any("ts_match_vq" in f for f in filters) is (phrase is not None)
    assert _ids(bundled_stores[1], words) == _ids(bundled_stores[0], words)
    exact = SqlBuilder(POSTGRES)
    assert "cve_lexeme" not in keyword_ids(exact, words, True, CVE_TEXT)


def _plan_nodes(node: dict[str, object]) -> list[dict[str, object]]:
    children = node.get("Plans", [])
    assert isinstance(children, list)
    return [node, *(found for child in children for found in _plan_nodes(child))]
