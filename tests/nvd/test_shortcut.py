"""The `?cveId=` shortcut answers exactly as the full CVE handler does."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

TIMESTAMP = re.compile(rb'"timestamp":"[^"]+"')


@pytest.fixture(scope="module")
def client(sample_store_url: str) -> Iterator[TestClient]:
    store = open_store(sample_store_url)
    with TestClient(create_app(store)) as test_client:
        yield test_client
    store.close()


def _some_ids(client: TestClient) -> list[str]:
    page = client.get("/rest/json/cves/2.0", params={"resultsPerPage": "40"}).json()
    return [item["cve"]["id"] for item in page["vulnerabilities"]]


def test_the_query_it_builds_is_the_parsed_one() -> None:
    for cve_id in ("CVE-1999-0095", "CVE-2021-44228", "CVE-2024-1234567"):
        assert CveQuery(cve_id=cve_id) == parse_cve_query([("cveId", cve_id)])


@pytest.mark.parametrize("suffix", ["", "/"])
def test_same_bytes_and_headers_as_the_full_handler(client: TestClient, suffix: str) -> None:
    ids = _some_ids(client)
    assert ids
    for cve_id in [*ids, "CVE-2099-0001"]:
        plain = {"accept-encoding": "identity"}  # (compressed lengths vary with the timestamp)
        short = client.get(f"/rest/json/cves/2.0{suffix}?cveId={cve_id}", headers=plain)
        # A lower-case parameter name does not take the shortcut.
        full = client.get(f"/rest/json/cves/2.0{suffix}?cveid={cve_id}", headers=plain)
        assert short.status_code == full.status_code == 200
        assert list(short.headers.items()) == list(full.headers.items())
        assert TIMESTAMP.sub(b"", short.content) == TIMESTAMP.sub(b"", full.content)


def test_other_shapes_go_to_the_full_handler(client: TestClient) -> None:
    bad = client.get("/rest/json/cves/2.0?cveId=CVE-12-1")
    assert bad.status_code == 404
    assert bad.headers["message"]
    head = client.head(f"/rest/json/cves/2.0?cveId={_some_ids(client)[0]}")
    assert head.status_code == 200
    assert head.content == b""
