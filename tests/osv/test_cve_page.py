"""The CVE page lists the OSV advisories that alias the CVE, from the same store, next to
NVD's record (the page's OSV hook reads `osv_by_alias`)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.testclient import TestClient
from tests.conftest import ASSETS

from assay.nvd.storage import open_store
from assay.web.app import create_web_app

ADVISORY = ASSETS / "osv/ghsa/GHSA-g4mx-q9vg-27p4.json"  # urllib3; aliases CVE-2023-45803


def test_the_cve_page_shows_the_osv_advisory_that_aliases_it(
    store_url: str, cli: Callable[..., int]
) -> None:
    assert cli("nvd", "import", "--bundled", "--store", store_url) == 0
    assert cli("osv", "import", str(ADVISORY), "--store", store_url) == 0
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store)) as client:
            page = client.get("/cve/CVE-2023-45803")
    finally:
        store.close()
    assert page.status_code == 200
    assert "GHSA-g4mx-q9vg-27p4" in page.text
    assert "https://osv.dev/vulnerability/GHSA-g4mx-q9vg-27p4" in page.text
