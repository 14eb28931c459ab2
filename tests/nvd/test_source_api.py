"""`/rest/json/source/2.0`, NVD's Source API, over the real 20-source response, on both
stores: import, paging, filters, NVD's shape, and nvdlib's `searchSource`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.conftest import ASSETS, backends, make_store_url
from tests.live import redirect_nvdlib, serving

from assay.nvd.ingest.importer import Importer
from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

from .conftest import response

SOURCES_FILE = ASSETS / "nvd" / "sources-20.json.gz"
PATH = "/rest/json/source/2.0"


@pytest.fixture(scope="module", params=backends())
def sources_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    folder = tmp_path_factory.mktemp(f"sources-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = Importer(store).import_files([SOURCES_FILE])
        store.close()
        assert report.ok, report.problems
        assert report.counts["source"].added == 20
        yield url


@pytest.fixture(scope="module")
def client(sources_store_url: str) -> Iterator[TestClient]:
    store = open_store(sources_store_url)
    with TestClient(create_app(store)) as test_client:
        yield test_client
    store.close()


def test_every_source_comes_back_as_nvd_sent_it_in_nvd_order(client: TestClient) -> None:
    expected = response(SOURCES_FILE)["sources"]
    body = client.get(PATH).json()
    assert list(body)[:6] == [
        "resultsPerPage",
        "startIndex",
        "totalResults",
        "format",
        "version",
        "timestamp",
    ]
    assert body["format"] == "NVD_SOURCE"
    assert body["totalResults"] == body["resultsPerPage"] == 20
    assert body["sources"] == expected  # unwrapped, unchanged, ties in NVD's order


def test_pages_cover_the_set_once(client: TestClient) -> None:
    expected = response(SOURCES_FILE)["sources"]
    seen: list[Any] = []
    for start in range(0, 20, 7):
        body = client.get(PATH, params={"resultsPerPage": "7", "startIndex": str(start)}).json()
        assert body["startIndex"] == start
        assert body["totalResults"] == 20
        seen.extend(body["sources"])
    assert seen == expected


def test_source_identifier_finds_a_source_by_any_of_its_identifiers(client: TestClient) -> None:
    for identifier in ("josh@bress.net", "cve-assign@distributedweaknessfiling.org"):
        (source,) = client.get(PATH, params={"sourceIdentifier": identifier}).json()["sources"]
        assert source["name"] == "DWF"
    assert (
        client.get(PATH, params={"sourceIdentifier": "nobody@example"}).json()["totalResults"] == 0
    )


def test_last_modified_window(client: TestClient) -> None:
    expected = [
        s["name"]
        for s in response(SOURCES_FILE)["sources"]
        if "2019-09-09T16:18:46.010" <= s["lastModified"] <= "2019-09-09T16:18:46.050"
    ]
    body = client.get(
        PATH,
        params={
            "lastModStartDate": "2019-09-09T16:18:46.010",
            "lastModEndDate": "2019-09-09T16:18:46.050Z",
        },
    ).json()
    assert [s["name"] for s in body["sources"]] == expected
    assert len(expected) >= 3


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"resultsPerPage": "1001"}, "resultsPerPage parameter cannot exceed 1000"),
        ({"lastModStartDate": "2019-09-09T00:00:00"}, "Both lastModStartDate and lastModEndDate"),
        ({"cveId": "CVE-2020-0001"}, "Invalid parameter: cveId"),
    ],
)
def test_bad_queries_are_404s_with_a_message(
    client: TestClient, params: dict[str, str], message: str
) -> None:
    answer = client.get(PATH, params=params)
    assert answer.status_code == 404
    assert answer.headers["message"].startswith(message)


def test_the_api_description_lists_the_source_api(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"][PATH]["get"]
    assert operation["operationId"] == "get_sources"
    names = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
    assert names == {
        "sourceIdentifier",
        "lastModStartDate",
        "lastModEndDate",
        "resultsPerPage",
        "startIndex",
        "sinceGeneration",  # assay's change cursor, on every list path
    }
    assert PATH in client.get("/docs").text


def test_importing_the_same_file_again_changes_nothing(sources_store_url: str) -> None:
    store = open_store(sources_store_url)
    try:
        report = Importer(store).import_files([SOURCES_FILE])
    finally:
        store.close()
    assert report.counts["source"].unchanged == 20
    assert report.counts["source"].added == report.counts["source"].updated == 0


def test_nvdlib_search_source(sources_store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(sources_store_url) as base_url:
        nvdlib = redirect_nvdlib(monkeypatch, base_url)
        everything = nvdlib.searchSource()
        assert len(everything) == 20
        assert everything[0].name == "MITRE"
        (dwf,) = nvdlib.searchSource(sourceIdentifier="josh@bress.net")
        assert dwf.contactEmail == "cve-assign@distributedweaknessfiling.org"
        assert dwf.sourceIdentifiers == [
            "cve-assign@distributedweaknessfiling.org",
            "josh@bress.net",
        ]
        assert any("/rest/json/source/2.0" in url for url in nvdlib.sent)


def test_the_client_and_the_mirror_read_sources(sources_store_url: str, tmp_path: Path) -> None:
    from tests.sync.harness import assert_mirrored, quick_options

    from assay.nvd.client import NvdClient
    from assay.nvd.sync import Mirror

    expected = response(SOURCES_FILE)["sources"]
    mirror_url = f"sqlite:///{tmp_path / 'mirror.db'}"
    with serving(sources_store_url) as base_url:
        with NvdClient(wait_time=0, base_url=f"{base_url}/rest/json") as client:
            everything = client.get_all_sources()
            assert [source.raw for source in everything.sources] == expected
            (dwf,) = client.get_sources(source_identifier="josh@bress.net").sources
            assert dwf.name == "DWF"
            assert dwf.cwe_acceptance_level is not None
            assert [s.name for s in client.iter_sources(results_per_page=6)] == [
                s.get("name") for s in expected
            ]
        store = open_store(mirror_url)
        try:
            options = quick_options(f"{base_url}/rest/json", kinds=("source",), page_size=7)
            report = Mirror(store, options).run()
        finally:
            store.close()
    assert report.ok
    assert_mirrored(sources_store_url, mirror_url, ("source",))


def test_pontos_source_api(sources_store_url: str) -> None:
    import asyncio

    from pontos.nvd.source import SourceApi

    async def read(base_url: str) -> tuple[list[Any], list[Any]]:
        async with SourceApi(rate_limit=False) as api:
            api._url = f"{base_url}/rest/json/source/2.0"
            everything = [source async for source in api.sources(results_per_page=7)]
            dwf = [source async for source in api.sources(source_identifier="josh@bress.net")]
        return everything, dwf

    with serving(sources_store_url) as base_url:
        everything, dwf = asyncio.run(read(base_url))
    assert [source.name for source in everything] == [
        source.get("name") for source in response(SOURCES_FILE)["sources"]
    ]
    assert [source.contact_email for source in dwf] == ["cve-assign@distributedweaknessfiling.org"]
