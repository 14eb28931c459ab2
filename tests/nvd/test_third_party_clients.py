"""nvdlib 0.9.0 and nvd-api 0.9.1, unchanged, against the running server on loopback."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import ASSETS, backends, make_store_url
from tests.live import redirect_nvdlib, serving

from assay._cli.nvd import bundled_files
from assay.nvd.ingest.importer import Importer
from assay.nvd.server.app import ServerSettings
from assay.nvd.storage import open_store

EXTRA_COPIES = 9  # 285 real records x 10 > 2000: nvdlib must fetch a second page


@pytest.fixture(scope="module", params=backends())
def large_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The real sample, plus copies of its records under new ids, so that the whole
    collection spans more than one 2000-record page."""
    folder = tmp_path_factory.mktemp("large")
    records = [
        orjson.loads(line)
        for path in bundled_files()
        if "cve" in path.name
        for line in gzip.decompress(path.read_bytes()).splitlines()
    ]
    # nvdlib cannot read the 2022-beta shape (v2 baseSeverity inside cvssData) of one
    # real record; the current NVD shape has it beside cvssData.
    records = [r for r in records if not _beta_shaped(r)]
    collection = folder / "collection.jsonl"
    with collection.open("wb") as out:
        for copy in range(EXTRA_COPIES + 1):
            for number, record in enumerate(records):
                renamed = (
                    record if copy == 0 else {**record, "id": f"CVE-{2100 + copy}-{10000 + number}"}
                )
                out.write(orjson.dumps(renamed) + b"\n")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = Importer(store).import_files(
            [*sorted((ASSETS / "nvd" / "cves").glob("*.json")), collection]
        )
        store.close()
        assert report.ok, report.problems
        yield url


def _beta_shaped(record: dict[str, Any]) -> bool:
    return any("baseSeverity" in m["cvssData"] for m in record["metrics"].get("cvssMetricV2", []))


@pytest.fixture(scope="module")
def live_url(large_store_url: str) -> Iterator[str]:
    with serving(large_store_url) as url:
        yield url


@pytest.fixture
def nvdlib_at(live_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    return redirect_nvdlib(monkeypatch, live_url)


def test_nvdlib_pages_through_the_whole_collection(nvdlib_at: Any) -> None:
    results = nvdlib_at.searchCVE()
    ids = [cve.id for cve in results]
    assert len(ids) == len(set(ids)) > 2000
    assert any("startIndex=2000" in url for url in nvdlib_at.sent)


def test_nvdlib_filters(nvdlib_at: Any) -> None:
    [laravel] = nvdlib_at.searchCVE(
        cpeName="cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:*:*:*", isVulnerable=True
    )
    assert laravel.id == "CVE-2022-40482"
    assert laravel.score[0] == "V31"
    kev = nvdlib_at.searchCVE(hasKev=True, noRejected=True)
    assert {"CVE-2024-23113", "CVE-2022-20699"} <= {cve.id for cve in kev}
    phrase = nvdlib_at.searchCVE(keywordSearch="buffer overflow", keywordExactMatch=True)
    assert phrase
    assert all("buffer overflow" in cve.descriptions[0].value.lower() for cve in phrase)
    dated = nvdlib_at.searchCVE(pubStartDate="2023-04-01 00:00", pubEndDate="2023-05-01 00:00")
    assert "CVE-2022-40482" in {cve.id for cve in dated}
    limited = nvdlib_at.searchCVE(cweId="CWE-79", limit=5)
    assert len(limited) == 5


def test_nvdlib_surfaces_the_message_header(nvdlib_at: Any) -> None:
    import requests

    with pytest.raises(requests.HTTPError, match="Invalid cveId"):
        nvdlib_at.searchCVE(cveId="CVE-22-1")


def _nvd_api(base: str) -> Any:
    from nvd_api import NvdApiClient

    client = NvdApiClient(wait_time=0)
    client._vulnerabilities_api.api_client.configuration.host = f"{base}/rest/json"
    client._products_api.api_client.configuration.host = f"{base}/rest/json"
    return client


def test_nvd_api_fails_on_post_2023_fields_without_the_compatibility_path(live_url: str) -> None:
    from nvd_api.low_api.exceptions import ApiAttributeError, ApiTypeError

    with pytest.raises((ApiAttributeError, ApiTypeError)):
        # CVE-2016-15012 carries cveTags, CVE-2024-23113 cvssMetricV40-era fields.
        _nvd_api(live_url).get_cves(cve_id="CVE-2016-15012")


def test_nvd_api_get_cves_through_the_compatibility_path(live_url: str) -> None:
    client = _nvd_api(f"{live_url}/compat/nvd-api")
    page = client.get_cves(results_per_page=500, start_index=0)
    assert page.total_results > 2000
    assert len(page.vulnerabilities) == 500
    tagged = client.get_cves(cve_id="CVE-2016-15012")
    assert tagged.vulnerabilities[0].cve.id == "CVE-2016-15012"
    second = client.get_cves(results_per_page=500, start_index=500)
    assert {v.cve.id for v in page.vulnerabilities}.isdisjoint(
        v.cve.id for v in second.vulnerabilities
    )
    dated = client.get_cves(pub_start_date=datetime(2023, 4, 1), pub_end_date=datetime(2023, 5, 1))
    assert "CVE-2022-40482" in {v.cve.id for v in dated.vulnerabilities}
    laravel = client.get_cves(
        cpe_name="cpe:2.3:a:laravel:framework:8.83.27:*:*:*:*:*:*:*", is_vulnerable=True
    )
    assert [v.cve.id for v in laravel.vulnerabilities] == ["CVE-2022-40482"]


def test_server_wide_compatibility_option(large_store_url: str) -> None:
    with serving(large_store_url, ServerSettings(legacy_fields_only=True)) as url:
        client = _nvd_api(url)
        result = client.get_cves(cve_id="CVE-2016-15012")
        assert result.vulnerabilities[0].cve.id == "CVE-2016-15012"


def test_nvd_api_sees_404_as_not_found(live_url: str) -> None:
    from nvd_api.low_api.exceptions import NotFoundException

    client = _nvd_api(f"{live_url}/compat/nvd-api")
    with pytest.raises(NotFoundException):
        client._vulnerabilities_api.get_cves(cpe_name="INVALID:2.3:a:b:c:1")


def test_assets_are_present() -> None:
    assert Path(ASSETS / "nvd" / "cves" / "CVE-2022-40482.json").is_file()
