"""The CVE page shows every source side by side: NVD, the CNA, CISA-ADP (by name), KEV,
EPSS, SSVC, OSV advisories; a CVE that only the CVE List holds has a page too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay._cli import main
from assay.nvd.storage import open_store
from assay.web.app import create_web_app
from assay.web.cve_view import osv_advisories, sources_view
from assay.web.templating import environment

from .conftest import ASSETS, EPSS_FILE, KEV_FILE


@pytest.fixture
def client(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[TestClient]:
    lines = tmp_path / "nvd.jsonl"
    records = sorted((ASSETS / "nvd").glob("*.json"))
    lines.write_text("".join(json.dumps(json.loads(p.read_bytes())) + "\n" for p in records))
    for args in (
        ["nvd", "import", str(lines)],
        ["cve", "import", str(ASSETS)],
        ["kev", "import", str(KEV_FILE)],
        ["epss", "import", str(EPSS_FILE)],
    ):
        assert main([*args, "--store", store_url]) == 0
    capsys.readouterr()
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store)) as test_client:
            yield test_client
    finally:
        store.close()


def test_every_source_of_a_cve_side_by_side(client: TestClient) -> None:
    page = client.get("/cve/CVE-2025-24016")
    assert page.status_code == 200
    text = page.text
    for expected in (
        "CNA: GitHub (CNA)",
        "ADP: CISA ADP Vulnrichment",
        "SSVC Exploitation</dt><dd>active",
        "CISA KEV catalogue",
        "2025-07-01",  # the catalogue's due date
        "93.84 %",  # EPSS
        "CWE-502 Deserialization of Untrusted Data",
        "https://www.cve.org/CVERecord?id=CVE-2025-24016",
        "https://osv.dev/vulnerability/CVE-2025-24016",
        "&gt;= 4.4.0, &lt; 4.9.1: affected",
        "None in this store names CVE-2025-24016",
    ):
        assert expected in text, expected
    assert "134c704f-9b21-4f2e-91b3-4a467353bcc0</code>" in text  # shown, but as a detail


def test_a_cve_only_the_cve_list_holds_has_a_page(client: TestClient) -> None:
    page = client.get("/cve/CVE-2022-25377")
    assert page.status_code == 200
    assert "not in NVD&#39;s data" in page.text
    assert '<span class="sev sev-high">7.5 HIGH</span>' in page.text
    assert "from 0.5.0 before 0.12.2: affected" in page.text
    assert client.get("/cve/CVE-2022-99999").status_code == 404


def test_osv_advisories_that_alias_the_cve_are_listed() -> None:
    advisories = osv_advisories(
        [b'{"id": "GHSA-hcrc-79hj-m3qh", "summary": "Remote code execution in Wazuh server"}']
    )
    assert advisories[0].url == "https://osv.dev/vulnerability/GHSA-hcrc-79hj-m3qh"
    html = (
        environment()
        .get_template("_sources.html")
        .render(
            sources=sources_view("CVE-2025-24016", None, osv=advisories),
            nvd_present=False,
            cve=None,
            cwe_name=lambda cwe: "",
        )
    )
    assert ">GHSA-hcrc-79hj-m3qh</a> Remote code execution in Wazuh server" in html
