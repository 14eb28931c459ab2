"""`Store.bulk_load`: an import session's writes, with the indexes of an empty SQLite
store built once at the end. What the store answers never depends on it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qsl

import orjson
import pytest
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import SAMPLE, facts

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store
from assay.nvd.storage.sqlite import BULK_DEFERRED_INDEXES

QUERIES = (
    "",
    "resultsPerPage=50&startIndex=20",
    "lastModStartDate=2024-01-01T00:00:00.000&lastModEndDate=2024-04-01T00:00:00.000",
    "cpeName=cpe:2.3:o:linux:linux_kernel:5.10.1:*:*:*:*:*:*:*",
    "virtualMatchString=cpe:2.3:a:apache",
    "keywordSearch=overflow",
    "noRejected",
)


@pytest.fixture(params=backends())
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    with (
        contextmanager(make_store_url)(request.param, tmp_path / "bulk") as bulk_url,
        contextmanager(make_store_url)(request.param, tmp_path / "plain") as plain_url,
    ):
        (tmp_path / "bulk").mkdir()
        (tmp_path / "plain").mkdir()
        bulk, plain = open_store(bulk_url), open_store(plain_url)
        try:
            yield bulk, plain
        finally:
            bulk.close()
            plain.close()


def _indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}


def _answers(store: Store) -> list[tuple[int, list[bytes]]]:
    answers = []
    for text in QUERIES:
        page = store.search_cves(parse_cve_query(parse_qsl(text, keep_blank_values=True)))
        answers.append((page.total, page.records))
    return answers


def test_a_bulk_load_answers_as_row_by_row_writes(two_stores: tuple[Store, Store]) -> None:
    bulk, plain = two_stores
    records = facts(SAMPLE)
    half = len(records) // 2
    with bulk.bulk_load():
        bulk.upsert_cves(records[:half])
        bulk.upsert_cves(records[half:])
        bulk.upsert_cves(records[:10])  # the same again: unchanged
    plain.upsert_cves(records[:half])
    plain.upsert_cves(records[half:])
    assert _answers(bulk) == _answers(plain)
    assert bulk.generation() == plain.generation()


def test_an_empty_sqlite_store_builds_its_indexes_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = open_store(f"sqlite:///{path}")
    try:
        everything = _indexes(path)
        assert set(BULK_DEFERRED_INDEXES) <= everything
        with store.bulk_load():
            assert _indexes(path) == everything - set(BULK_DEFERRED_INDEXES)
            store.upsert_cves(facts(SAMPLE[:50]))
        assert _indexes(path) == everything
        # A store that holds CVEs keeps its indexes through a bulk load.
        with store.bulk_load():
            assert _indexes(path) == everything
            store.upsert_cves(facts(SAMPLE[50:100]))
    finally:
        store.close()


def _failing_load(store: Store) -> None:
    with store.bulk_load():
        store.upsert_cves(facts(SAMPLE[:20]))
        raise RuntimeError("the import failed")


def test_the_indexes_come_back_when_the_load_fails(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = open_store(f"sqlite:///{path}")
    everything = _indexes(path)
    try:
        with pytest.raises(RuntimeError, match="the import failed"):
            _failing_load(store)
        assert _indexes(path) == everything
    finally:
        store.close()


def test_a_store_left_without_its_indexes_gets_them_back_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = open_store(f"sqlite:///{path}")
    everything = _indexes(path)
    store.upsert_cves(facts(SAMPLE[:20]))
    with sqlite3.connect(path) as connection:  # as a killed bulk load leaves it
        for name in BULK_DEFERRED_INDEXES:
            connection.execute(f"DROP INDEX {name}")
    store.close()
    reopened = open_store(f"sqlite:///{path}")
    try:
        assert _indexes(path) == everything
        assert reopened.count_cves() == 20
    finally:
        reopened.close()


def test_an_import_session_is_a_bulk_load_with_the_atomic_rule(tmp_path: Path) -> None:
    """`--atomic` within a bulk load: a file with a rejected record stores nothing, and
    the indexes are there at the end."""
    path = tmp_path / "store.db"
    good = tmp_path / "good.jsonl"
    bad = tmp_path / "bad.jsonl"
    good.write_bytes(b"\n".join(orjson.dumps(record) for record in SAMPLE[:30]) + b"\n")
    broken = {**SAMPLE[40], "published": "yesterday"}
    bad.write_bytes(b"\n".join(orjson.dumps(record) for record in [*SAMPLE[30:40], broken]))
    store = open_store(f"sqlite:///{path}")
    everything = _indexes(path)
    try:
        with Importer(store, batch_size=7, atomic=True) as importer:
            importer.import_files([bad, good])
        assert importer.report.rejected == 1
        assert store.count_cves() == 30
        assert _indexes(path) == everything
    finally:
        store.close()


def test_criteria_a_writer_never_saw_are_found_in_the_store(tmp_path: Path) -> None:
    """Two writers on one SQLite file: the second meets criteria the first stored, which
    it does not remember; each distinct criteria stays one row, its uses link to it."""
    path = tmp_path / "store.db"
    first, second = open_store(f"sqlite:///{path}"), open_store(f"sqlite:///{path}")
    try:
        records = facts(SAMPLE)
        half = len(records) // 2
        first.upsert_cves(records[:half])
        second.upsert_cves(records[half:])
        reference = open_store(f"sqlite:///{tmp_path / 'reference.db'}")
        reference.upsert_cves(records)
        try:
            assert _answers(second) == _answers(reference)
        finally:
            reference.close()
        with sqlite3.connect(path) as connection:
            distinct = connection.execute("SELECT count(*), count(DISTINCT identity) FROM criteria")
            total, unique = distinct.fetchone()
        assert total == unique
        assert total == len({c.identity for f in records for c in f.criteria})
    finally:
        first.close()
        second.close()


@pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")
def test_a_postgresql_bulk_load_leaves_the_planner_statistics_current(tmp_path: Path) -> None:
    """Autovacuum may notice a large import minutes later: the import analyzes the
    store's tables itself, so queries right after it are planned for what is there."""
    import psycopg

    with contextmanager(make_store_url)("postgres", tmp_path) as url:
        store = open_store(url)
        try:
            with store.bulk_load():
                store.upsert_cves(facts(SAMPLE[:40]))
        finally:
            store.close()
        schema = dict(parse_qsl(url.split("?", 1)[1]))["schema"]
        with psycopg.connect(url.split("?", 1)[0]) as connection:
            analyzed = dict(
                connection.execute(
                    "SELECT relname, last_analyze IS NOT NULL FROM pg_stat_user_tables "
                    "WHERE schemaname = %s",
                    (schema,),
                ).fetchall()
            )
    assert analyzed["cve"] is True
    assert all(analyzed.values()), analyzed
