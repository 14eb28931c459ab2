"""Records a store keeps between reads (the PostgreSQL store's records by CVE id and by
row, the SQLite store's decoded records) never outlive a write made elsewhere: a server
answers the new record as soon as a sync on another connection has committed, and never
a record older than the generation its answer claims."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.nvd.test_store import SAMPLE, facts, revised

from assay.nvd.cve_query import CveQuery
from assay.nvd.server.app import create_app
from assay.nvd.server.responses import GENERATION_HEADER
from assay.nvd.storage import Page, Store, open_store

API = "/rest/json/cves/2.0"
TARGET = SAMPLE[7]


@pytest.fixture
def stores(store_url: str) -> Iterator[tuple[Store, Store]]:
    """The server's store and a writer's: two stores on one URL, so two connections
    (two pools on PostgreSQL), as a sync process and a server have."""
    served = open_store(store_url)
    served.upsert_cves(facts(SAMPLE[:40]))
    writer = open_store(store_url)
    try:
        yield served, writer
    finally:
        writer.close()
        served.close()


def _at_generation(store: Store, query: CveQuery) -> tuple[int, Page]:
    """The generation and the look-up, read as a server reads them (`read_at_generation`
    where the store has it)."""
    read = getattr(store, "read_at_generation", None)
    if read is None:
        return store.generation(), store.search_cves(query)
    found: tuple[int, Page] = read(lambda: store.search_cves(query))
    return found


def _description(body: bytes, cve_id: str) -> str:
    for item in json.loads(body)["vulnerabilities"]:
        if item["cve"]["id"] == cve_id:
            return str(item["cve"]["descriptions"][0]["value"])
    raise AssertionError(f"{cve_id} is not in the answer")


def test_a_server_answers_the_record_a_sync_elsewhere_just_wrote(
    stores: tuple[Store, Store],
) -> None:
    served, writer = stores
    cve_id = TARGET["id"]
    with TestClient(create_app(served)) as client:
        for _ in range(3):  # read and kept (both the look-up and the page)
            single = client.get(API, params={"cveId": cve_id})
            page = client.get(API, params={"resultsPerPage": "2000"})
        assert _description(single.content, cve_id) == TARGET["descriptions"][0]["value"]
        before = int(single.headers[GENERATION_HEADER])

        writer.upsert_cves(facts([revised(TARGET, "2026-07-01T00:00:00.000", "written elsewhere")]))

        single = client.get(API, params={"cveId": cve_id})
        page = client.get(API, params={"resultsPerPage": "2000"})
        for answer in (single, page):
            assert int(answer.headers[GENERATION_HEADER]) == before + 1
            assert _description(answer.content, cve_id) == "written elsewhere"


def test_an_id_the_store_lacked_is_found_once_written_elsewhere(
    stores: tuple[Store, Store],
) -> None:
    served, writer = stores
    missing = SAMPLE[60]
    query = CveQuery(cve_id=missing["id"])
    for _ in range(3):
        assert _at_generation(served, query)[1].total == 0
    writer.upsert_cves(facts([missing]))
    _, page = _at_generation(served, query)
    assert [json.loads(r)["id"] for r in page.records] == [missing["id"]]
    # Outside `read_at_generation`, the look-up reads the store itself.
    writer.upsert_cves(facts([revised(missing, "2026-07-01T00:00:00.000", "later")]))
    (record,) = served.search_cves(query).records
    assert json.loads(record)["descriptions"][0]["value"] == "later"


def test_no_answer_is_older_than_the_generation_it_claims(
    stores: tuple[Store, Store],
) -> None:
    """A writer revises one record again and again (each write moves the generation by
    one); readers in other threads read the record at a generation, as the server does,
    and must find at least the revision of that generation."""
    served, writer = stores
    cve_id = TARGET["id"]
    start = writer.generation()
    revisions = 25
    problems: list[str] = []
    done = threading.Event()

    def read() -> None:
        query = CveQuery(cve_id=cve_id)
        while not done.is_set():
            generation, page = _at_generation(served, query)
            (record,) = page.records
            text = json.loads(record)["descriptions"][0]["value"]
            found = int(text.removeprefix("revision ")) if text.startswith("revision ") else 0
            if found < generation - start:
                problems.append(f"generation {generation} answered revision {found}")

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for number in range(1, revisions + 1):
            stamp = f"2026-07-01T00:00:{number:02d}.000"
            writer.upsert_cves(facts([revised(TARGET, stamp, f"revision {number}")]))
    finally:
        done.set()
        for reader in readers:
            reader.join()
    assert writer.generation() == start + revisions
    assert problems == []
