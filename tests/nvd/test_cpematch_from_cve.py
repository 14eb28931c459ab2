"""`cpematch?cveId=` is complete when the store holds the CVE but not its match-criteria
records: the criteria its configurations name, with `matches` from the dictionary held."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient
from tests.conftest import backends, make_store_url

from assay.nvd.cve_match_strings import criteria_of
from assay.nvd.ingest.importer import Importer
from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

from .conftest import CPEMATCH_FILE, CPES_FILE, CVE_32223_FILE, bundled_cves, response

PATH = "/rest/json/cpematch/2.0"


@pytest.fixture(scope="module", params=backends())
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """A store of the CVE and the dictionary sample, without any match-criteria record."""
    folder = tmp_path_factory.mktemp(f"cve-only-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        assert Importer(store).import_files([bundled_cves(), CPES_FILE, CVE_32223_FILE]).ok
        with TestClient(create_app(store)) as test_client:
            yield test_client
        store.close()


def _records(client: TestClient, query: str) -> list[dict[str, Any]]:
    answer = client.get(f"{PATH}?{query}")
    assert answer.status_code == 200, answer.headers.get("message")
    return [item["matchString"] for item in answer.json()["matchStrings"]]


def test_every_criteria_of_the_cve_is_answered_as_nvd_names_it(client: TestClient) -> None:
    real = {
        m["matchString"]["matchCriteriaId"]: m["matchString"]
        for m in response(CPEMATCH_FILE)["matchStrings"]
    }
    cve = response(CVE_32223_FILE)["vulnerabilities"][0]["cve"]
    records = _records(client, "cveId=CVE-2022-32223")
    assert (
        {r["matchCriteriaId"] for r in records}
        == set(real)
        == {c.match_criteria_id for c in criteria_of(cve)}
    )
    for record in records:
        nvd = real[record["matchCriteriaId"]]
        for key in ("criteria", "versionStartIncluding", "versionStartExcluding",
                    "versionEndIncluding", "versionEndExcluding"):  # fmt: skip
            assert record.get(key) == nvd.get(key), key
        assert record["status"] == "Active"
        assert record["created"] == cve["published"]
        assert record["lastModified"] == cve["lastModified"]
        # The dictionary sample holds some of NVD's expansion names: those, and only those.
        names = {m["cpeName"] for m in record.get("matches", [])}
        assert names <= {m["cpeName"] for m in nvd.get("matches", [])}
    windows = next(r for r in records if r["criteria"].startswith("cpe:2.3:o:microsoft:windows"))
    assert [m["cpeName"] for m in windows["matches"]] == [
        "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"  # the one Windows name the sample holds
    ]


def test_paging_covers_the_made_up_records_once(client: TestClient) -> None:
    everything = [r["matchCriteriaId"] for r in _records(client, "cveId=CVE-2022-32223")]
    paged: list[str] = []
    for start in range(0, len(everything), 4):
        answer = client.get(f"{PATH}?cveId=CVE-2022-32223&resultsPerPage=4&startIndex={start}")
        body = answer.json()
        assert body["totalResults"] == len(everything)
        paged.extend(item["matchString"]["matchCriteriaId"] for item in body["matchStrings"])
    assert paged == everything


def test_other_filters_and_unknown_cves_are_answered_from_stored_records(
    client: TestClient,
) -> None:
    assert _records(client, "cveId=CVE-2099-0001") == []
    window = "lastModStartDate=2022-01-01T00:00:00&lastModEndDate=2022-04-01T00:00:00"
    assert _records(client, f"cveId=CVE-2022-32223&{window}") == []


def test_stored_records_win_over_made_up_ones(products_client: TestClient) -> None:
    stored = {
        m["matchString"]["matchCriteriaId"]: m["matchString"]
        for m in response(CPEMATCH_FILE)["matchStrings"]
    }
    for record in _records(products_client, "cveId=CVE-2022-32223"):
        assert orjson.dumps(record) == orjson.dumps(stored[record["matchCriteriaId"]])
