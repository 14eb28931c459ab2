"""Requests that used to end in a 500, answered as NVD answers a bad request (404 with a
`message` header), on both stores; a damaged stored record is a 503; redirects are
relative; browsers may read the `message` header."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

from .conftest import bundled_cves

LAST_INSTANT = "9999-12-31T23:59:59.9999"

# Every date window of every path.
WINDOWS = [
    ("/rest/json/cves/2.0", "pubStartDate", "pubEndDate"),
    ("/rest/json/cves/2.0", "lastModStartDate", "lastModEndDate"),
    ("/rest/json/cves/2.0", "kevStartDate", "kevEndDate"),
    ("/rest/json/cpes/2.0", "lastModStartDate", "lastModEndDate"),
    ("/rest/json/cpematch/2.0", "lastModStartDate", "lastModEndDate"),
    ("/rest/json/cvehistory/2.0", "changeStartDate", "changeEndDate"),
]
KEYWORD_PATHS = [
    "/rest/json/cves/2.0",
    "/rest/json/cpes/2.0",
    "/compat/nvd-api/rest/json/cves/2.0",
    "/compat/nvd-api/rest/json/cpes/2.0",
]


def _refused(client: TestClient, url: str, params: dict[str, str]) -> str:
    response = client.get(url, params=params)
    assert response.status_code == 404, (url, params, response.status_code)
    assert response.content == b""
    return response.headers["message"]


@pytest.mark.parametrize("path", KEYWORD_PATHS)
def test_a_nul_byte_in_keyword_search_is_a_404(products_client: TestClient, path: str) -> None:
    message = _refused(products_client, path, {"keywordSearch": "linux\x00kernel"})
    assert message == "Invalid keywordSearch: it contains a NUL character"


@given(st.text(min_size=0, max_size=20), st.text(min_size=0, max_size=20))
def test_no_keyword_is_a_server_error(products_client: TestClient, before: str, after: str) -> None:
    for path in ("/rest/json/cves/2.0", "/rest/json/cpes/2.0"):
        response = products_client.get(path, params={"keywordSearch": f"{before}\x00{after}"})
        assert response.status_code in (200, 404)


@pytest.mark.parametrize(("path", "start", "end"), WINDOWS)
def test_the_last_instant_of_year_9999_is_refused_on_every_window(
    products_client: TestClient, path: str, start: str, end: str
) -> None:
    message = _refused(products_client, path, {start: LAST_INSTANT, end: LAST_INSTANT})
    assert message.startswith("Invalid ISO 8601 date/time format")
    assert start in message


@pytest.mark.parametrize("path", [path for path, _, _ in WINDOWS])
def test_a_start_index_past_64_bits_is_refused_not_echoed_as_another_number(
    products_client: TestClient, path: str
) -> None:
    message = _refused(products_client, path, {"startIndex": "9" * 25})
    assert message == "startIndex parameter cannot exceed 9223372036854775807"
    largest = products_client.get(path, params={"startIndex": str(2**63 - 1)})
    assert largest.status_code == 200
    assert largest.json()["startIndex"] == 2**63 - 1
    assert products_client.get(path, params={"startIndex": str(2**63)}).status_code == 404


@pytest.mark.parametrize(
    ("path", "target"), [("/docs/", "../docs"), ("/openapi.json/", "../openapi.json")]
)
def test_trailing_slash_redirects_are_relative(
    products_client: TestClient, path: str, target: str
) -> None:
    response = products_client.get(
        path, headers={"host": "attacker.example"}, follow_redirects=False
    )
    assert response.status_code in (301, 307, 308)
    assert response.headers["location"] == target
    assert products_client.get(path).status_code == 200  # followed, it lands on the page


def test_browsers_may_read_the_message_header(products_client: TestClient) -> None:
    for url in ("/rest/json/cves/2.0?cveId=bogus", "/rest/json/cves/2.0?resultsPerPage=1"):
        exposed = products_client.get(url).headers["access-control-expose-headers"]
        assert "message" in {name.strip() for name in exposed.split(",")}


@pytest.fixture
def damaged_store(tmp_path: Path) -> str:
    """A SQLite store of the bundled sample whose record of CVE-1999-0095 is damaged."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    from assay.nvd.ingest.importer import Importer

    store = open_store(url)
    assert Importer(store).import_files([bundled_cves()]).ok
    store.close()
    with sqlite3.connect(tmp_path / "store.db") as connection:
        cve_id = connection.execute("SELECT cve_id FROM cve ORDER BY id LIMIT 1").fetchone()[0]
        connection.execute(
            "UPDATE cve SET record = ? WHERE cve_id = ?", (b"\x02not a zstd frame", cve_id)
        )
        # Bump the data generation, as any write does, so no cache holds the old record.
        connection.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )
    return f"{url}#{cve_id}"


def test_a_damaged_stored_record_is_a_503_not_a_500(damaged_store: str) -> None:
    url, cve_id = damaged_store.split("#")
    store = open_store(url)
    try:
        with TestClient(create_app(store), raise_server_exceptions=False) as client:
            for request in (
                f"/rest/json/cves/2.0?cveId={cve_id}",  # the single-id shortcut
                f"/rest/json/cves/2.0?cveId={cve_id}&noRejected",  # the full handler
                f"/compat/nvd-api/rest/json/cves/2.0?cveId={cve_id}",
                "/rest/json/cves/2.0",
            ):
                response = client.get(request)
                assert response.status_code == 503, request
                assert "damaged" in response.headers["message"]
            # The other records are still served.
            assert client.get("/rest/json/cves/2.0?cveId=CVE-2024-23113").status_code == 200
    finally:
        store.close()
