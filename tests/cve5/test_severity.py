"""Severity is chosen in one order (`assay.audit.severity`) for the CVE page and the scan."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay._cli import main
from assay.audit.model import Cvss
from assay.audit.severity import Rating, choose_severity
from assay.nvd.storage import open_store
from assay.web.app import create_web_app

NVD_ASSETS = Path(__file__).parent.parent / "assets" / "nvd"
BOM = {
    "bomFormat": "CycloneDX",
    "specVersion": "1.5",
    "components": [
        {
            "type": "library",
            "name": "protobuf",
            "version": "4.25.3",
            "purl": "pkg:pypi/protobuf@4.25.3",
            "cpe": "cpe:2.3:a:google:protobuf-python:4.25.3:*:*:*:*:*:*:*",
        }
    ],
}


def test_the_cve_page_and_the_scan_agree_on_cve_2025_4565(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["nvd", "import", "--store", store_url, str(NVD_ASSETS / "conversion-test.json")]) == 0
    )
    bom = tmp_path / "bom.json"
    bom.write_text(json.dumps(BOM))
    capsys.readouterr()
    main(["scan", str(bom), "--store", store_url, "--format", "json"])
    found = json.loads(capsys.readouterr().out)["components"][0]["vulnerabilities"]
    (finding,) = [v for v in found if v["id"] == "CVE-2025-4565"]
    # NVD's own CVSS 3.1 rating (5.3) comes before the CNA's CVSS 4.0 one (8.2).
    assert (finding["severity"], finding["cvss"]["version"]) == ("MEDIUM", "3.1")
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store)) as client:
            page = client.get("/cve/CVE-2025-4565").text
    finally:
        store.close()
    headline = re.search(r'<p class="meta"><span class="sev [^"]*">([^<]*)</span>', page)
    assert headline is not None
    assert headline.group(1).split() == ["5.3", "MEDIUM"]


def test_the_order_of_sources_and_versions() -> None:
    ratings = [
        Rating("osv", "CRITICAL", Cvss("3.1", 9.8, "v-osv")),
        Rating("adp", "HIGH", Cvss("3.1", 7.5, "v-adp")),
        Rating("cna", "HIGH", Cvss("4.0", 8.2, "v-cna4")),
        Rating("cna", "MEDIUM", Cvss("3.1", 6.5, "v-cna3")),
        Rating("nvd", "MEDIUM", Cvss("2.0", 5.0, "v-nvd2")),
    ]
    chosen = [choose_severity(ratings[i:]) for i in range(len(ratings))]
    assert [c.cvss.vector if c and c.cvss else None for c in chosen] == [
        "v-cna4",
        "v-cna4",
        "v-cna4",
        "v-cna3",
        "v-nvd2",
    ]
    first = choose_severity([Rating("nvd", "MEDIUM", Cvss("3.0", 5.0, "n")), *ratings])
    assert first is not None
    assert first.cvss == Cvss("3.0", 5.0, "n")
    assert choose_severity([]) is None
