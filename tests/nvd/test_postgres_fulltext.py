"""A PostgreSQL store's full-text indexes have no pending entries once an import, or a
write outside it (a sync batch), has ended (`assay.nvd.storage._postgres_fulltext`), and
keyword searches answer as they did."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from tests.conftest import backends, make_store_url

from assay._cli.nvd import bundled_files
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.cve_record import cve_facts
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage._postgres_fulltext import merge_pending
from assay.nvd.storage.postgres import PostgresStore

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="no PostgreSQL")

INDEXES = ("cve_by_text", "cpe_by_text")
KEYWORDS = ("remote attackers", "cross-site scripting", "buffer overflow", "linux")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PostgresStore]:
    for url in make_store_url("postgres", tmp_path):
        opened = PostgresStore(url)
        with opened._using("test") as connection:
            available = connection.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'pgstattuple'"
            ).fetchone()
            if available is None:
                opened.close()
                pytest.skip("no pgstattuple extension to read the pending lists")
            # In the test's own schema (the first of its search path), dropped with it.
            connection.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        yield opened
        opened.close()


def pending_pages(store: PostgresStore) -> dict[str, int]:
    with store._using("test") as connection:
        schema = connection.execute(
            "SELECT extnamespace::regnamespace::text FROM pg_extension "
            "WHERE extname = 'pgstattuple'"
        ).fetchone()
        assert schema is not None
        return {
            index: int(
                connection.execute(
                    f"SELECT pending_pages FROM {schema[0]}.pgstatginindex(%s::regclass)",
                    (index,),
                ).fetchone()[0]  # type: ignore[index]
            )
            for index in INDEXES
        }


def keyword_ids(store: PostgresStore) -> dict[str, list[str]]:
    return {
        keyword: [
            orjson.loads(record)["id"]
            for record in store.search_cves(
                parse_cve_query([("keywordSearch", keyword), ("resultsPerPage", "2000")])
            ).records
        ]
        for keyword in KEYWORDS
    }


def test_imports_and_writes_leave_no_pending_entries(store: PostgresStore) -> None:
    with Importer(store) as importer:
        assert importer.import_files(list(bundled_files())).ok
    assert pending_pages(store) == dict.fromkeys(INDEXES, 0)
    found = keyword_ids(store)
    assert any(found.values())

    # A sync batch: records replaced by newer ones, written outside any import.
    page = store.search_cves(parse_cve_query([("resultsPerPage", "50")]))
    cves = [orjson.loads(record) for record in page.records]
    for cve in cves:
        cve["lastModified"] = "2099-01-01T00:00:00.000"
        cve["descriptions"][0]["value"] += " remote attackers"
    newer = [cve_facts(cve) for cve in cves]
    assert store.upsert_cves(newer).updated == len(newer)
    assert pending_pages(store) == dict.fromkeys(INDEXES, 0)
    after = keyword_ids(store)
    assert after["linux"] == found["linux"]
    assert set(after["remote attackers"]) == set(found["remote attackers"]) | {
        facts.cve_id for facts in newer
    }

    # Writes inside a transaction leave their entries pending until it ends.
    found = after
    for cve in cves:
        cve["lastModified"] = "2099-01-02T00:00:00.000"
    newer = [cve_facts(cve) for cve in cves]
    with store.transaction():  # (merged by whoever ends the writes, not inside them)
        store.upsert_cves(newer)
    assert pending_pages(store)["cve_by_text"] > 0
    assert keyword_ids(store) == found
    with store._using("test") as connection:
        assert merge_pending(connection) > 0
    assert pending_pages(store) == dict.fromkeys(INDEXES, 0)
    assert keyword_ids(store) == found
