"""`assay serve --enrich`: records NVD has not analysed gain `assayConfigurations` from
their CVE 5 records and `cpeName` finds them; without it the API is NVD's bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from starlette.testclient import TestClient

from assay._cli import main
from assay.nvd.server.app import ServerSettings, create_app
from assay.nvd.storage import open_store

from .conftest import ASSETS

API = "/rest/json/cves/2.0"
WAZUH = "cpe:2.3:a:wazuh:wazuh:{}:*:*:*:*:*:*:*"


@pytest.fixture
def store_loaded(store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    lines = tmp_path / "nvd.jsonl"
    records = sorted((ASSETS / "nvd").glob("*.json"))
    lines.write_text("".join(json.dumps(json.loads(p.read_bytes())) + "\n" for p in records))
    assert main(["nvd", "import", str(lines), "--store", store_url]) == 0
    assert main(["cve", "import", str(ASSETS), "--store", store_url]) == 0
    capsys.readouterr()
    return store_url


def _client(url: str, *, enrich: bool) -> Iterator[TestClient]:
    store = open_store(url)
    try:
        with TestClient(create_app(store, ServerSettings(enrich=enrich))) as client:
            yield client
    finally:
        store.close()


@pytest.fixture
def enriched(store_loaded: str) -> Iterator[TestClient]:
    yield from _client(store_loaded, enrich=True)


@pytest.fixture
def plain(store_loaded: str) -> Iterator[TestClient]:
    yield from _client(store_loaded, enrich=False)


def test_an_unanalysed_record_gains_assay_configurations(enriched: TestClient) -> None:
    answer = enriched.get(API, params={"cveId": "CVE-2025-24016"}).json()
    cve = answer["vulnerabilities"][0]["cve"]
    assert "configurations" not in cve
    (configuration,) = cve["assayConfigurations"]
    (node,) = configuration["nodes"]
    assert (node["source"], node["rule"]) == ("cve5", "$.containers.cna.affected[0]")
    (match,) = node["cpeMatch"]
    assert match == {
        "vulnerable": True,
        "criteria": WAZUH.format("*"),
        "versionStartIncluding": "4.4.0",
        "versionEndExcluding": "4.9.1",
        "matchCriteriaId": match["matchCriteriaId"],
    }
    # NVD's configuration shape: valid under NVD's schema once the node's two added
    # members (source, rule) are set aside.
    schema = json.loads((ASSETS / "nvd" / "cve_api_json_2.0.schema").read_bytes())
    validator = jsonschema.Draft7Validator({**schema, "$ref": "#/definitions/config"})
    plain_node = {k: v for k, v in node.items() if k not in ("source", "rule")}
    assert list(validator.iter_errors({**configuration, "nodes": [plain_node]})) == []
    assert list(validator.iter_errors(configuration)) != []  # (the added members)
    analysed = enriched.get(API, params={"cveId": "CVE-2022-33891"}).json()
    assert "assayConfigurations" not in analysed["vulnerabilities"][0]["cve"]


def test_cpe_name_searches_use_them(enriched: TestClient, plain: TestClient) -> None:
    def total(client: TestClient, version: str) -> int:
        answer = client.get(API, params={"cpeName": WAZUH.format(version)}).json()
        return int(answer["totalResults"])

    assert (total(enriched, "4.9.0"), total(enriched, "4.4.0")) == (1, 1)
    assert (total(enriched, "4.9.1"), total(enriched, "4.3.9")) == (0, 0)
    assert total(plain, "4.9.0") == 0
    answer = enriched.get(
        API, params={"cpeName": WAZUH.format("4.9.0"), "keywordSearch": "nothing-like-this"}
    ).json()
    assert answer["totalResults"] == 0  # the query's other filters still apply


def test_without_enrich_the_api_is_byte_faithful(plain: TestClient) -> None:
    answer = plain.get(API, params={"cveId": "CVE-2025-24016"}).json()
    stored = json.loads((ASSETS / "nvd" / "CVE-2025-24016.json").read_bytes())
    assert answer["vulnerabilities"][0]["cve"] == stored


def test_every_real_record_gives_configurations_nvd_s_schema_accepts() -> None:
    from assay.cve5.enrich import configurations
    from assay.cve5.record import read_record

    from .conftest import record_paths

    schema = json.loads((ASSETS / "nvd" / "cve_api_json_2.0.schema").read_bytes())
    validator = jsonschema.Draft7Validator({**schema, "$ref": "#/definitions/config"})
    made = 0
    for path in record_paths():
        for configuration in configurations(read_record(path.read_bytes(), str(path))):
            nodes = [
                {k: v for k, v in node.items() if k not in ("source", "rule")}
                for node in configuration["nodes"]
            ]
            errors = list(validator.iter_errors({**configuration, "nodes": nodes}))
            assert errors == [], (path, errors[0].message)
            made += 1
    assert made > 100
