"""An empty PostgreSQL store's bulk load builds its costly indexes (`_postgres_bulk.DEFERRED`)
once at the end, however the load ends, and a store a killed load left without them gets
them back when it is opened. What the store answers never depends on it
(`test_store_bulk.test_a_bulk_load_answers_as_row_by_row_writes`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import SAMPLE, facts

from assay.nvd.storage import Store, open_store
from assay.nvd.storage._postgres_bulk import DEFERRED

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with contextmanager(make_store_url)("postgres", tmp_path) as made:
        yield made


def _indexes(url: str) -> set[str]:
    import psycopg

    schema = dict(parse_qsl(url.split("?", 1)[1]))["schema"]
    with psycopg.connect(url.split("?", 1)[0]) as connection:
        rows = connection.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,)
        ).fetchall()
    return {str(row[0]) for row in rows}


def _failing_load(store: Store) -> None:
    with store.bulk_load():
        store.upsert_cves(facts(SAMPLE[:20]))
        raise RuntimeError("the import failed")


def test_an_empty_store_builds_its_costly_indexes_at_the_end(url: str) -> None:
    store = open_store(url)
    try:
        everything = _indexes(url)
        assert set(DEFERRED) <= everything
        with store.bulk_load():
            assert _indexes(url) == everything - set(DEFERRED)
            store.upsert_cves(facts(SAMPLE[:50]))
            store.upsert_cves(facts(SAMPLE[:60]))  # (ten new, fifty unchanged)
            # A store opened meanwhile (a server) leaves them to the load.
            open_store(url).close()
            assert _indexes(url) == everything - set(DEFERRED)
        assert _indexes(url) == everything
        assert store.count_cves() == 60
        # A store that holds CVEs keeps its indexes through a bulk load.
        with store.bulk_load():
            assert _indexes(url) == everything
            store.upsert_cves(facts(SAMPLE[60:100]))
        with pytest.raises(RuntimeError, match="the import failed"):
            _failing_load(store)  # (not empty: nothing dropped, nothing lost)
        assert store.count_cves() == 100
    finally:
        store.close()


def _vacuumed(url: str, table: str) -> bool:
    """Whether a VACUUM of one table of the store has run (it marks the pages every
    transaction sees as all-visible; one still open elsewhere in the database, as a
    test running beside this one, may hold some back, so that is not what is asked)."""
    import psycopg

    schema = dict(parse_qsl(url.split("?", 1)[1]))["schema"]
    with psycopg.connect(url.split("?", 1)[0]) as connection:
        row = connection.execute(
            "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables "
            "WHERE schemaname = %s AND relname = %s",
            (schema, table),
        ).fetchone()
    return row is not None and bool(row[0])


def test_a_load_into_an_empty_store_vacuums_its_tables(url: str) -> None:
    # The visibility map then lets index-only scans (a cpeName's cve_criteria look-ups)
    # skip the table, with autovacuum off or not yet come to it.
    store = open_store(url)
    try:
        with store.bulk_load():
            store.upsert_cves(facts(SAMPLE[:60]))
    finally:
        store.close()
    for table in ("cve", "cve_criteria", "cve_text"):
        assert _vacuumed(url, table), table
    # A load into a store that holds CVEs only analyzes (its pages were vacuumed or
    # are autovacuum's).


def test_the_indexes_come_back_when_the_load_fails(url: str) -> None:
    store = open_store(url)
    everything = _indexes(url)
    try:
        with pytest.raises(RuntimeError, match="the import failed"):
            _failing_load(store)  # (empty: dropped, then built again)
        assert _indexes(url) == everything
        assert store.count_cves() == 20
    finally:
        store.close()


def test_a_store_left_without_its_indexes_gets_them_back_when_opened(url: str) -> None:
    import psycopg

    store = open_store(url)
    everything = _indexes(url)
    store.upsert_cves(facts(SAMPLE[:20]))
    store.close()
    schema = dict(parse_qsl(url.split("?", 1)[1]))["schema"]
    with psycopg.connect(url.split("?", 1)[0], autocommit=True) as connection:
        connection.execute(f"SET search_path TO {schema}")
        for drop, _ in DEFERRED.values():  # as a killed bulk load leaves them
            connection.execute(drop)
    assert _indexes(url) == everything - set(DEFERRED)
    reopened = open_store(url)
    try:
        assert _indexes(url) == everything
        assert reopened.count_cves() == 20
    finally:
        reopened.close()
