"""Hostile record content and the browser's defences: only http(s) references are links,
and every answer carries the headers that keep a page from being framed, sniffed or made
to run script."""

from __future__ import annotations

import copy
import gzip
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.conftest import ASSETS, make_store_url

from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import open_store
from assay.web.app import create_web_app
from assay.web.templating import is_web_url

HOSTILE = ("javascript:alert(document.domain)", " JavaScript:alert(1)", "data:text/html,<b>x</b>",
           "java\tscript:alert(1)", "vbscript:msgbox(1)")  # fmt: skip
CPE_NAME = "cpe:2.3:a:hostile:refs:1.0:*:*:*:*:*:*:*"


def _cve_with_references() -> dict[str, Any]:
    page = orjson.loads((ASSETS / "nvd" / "cves" / "CVE-2022-40482.json").read_bytes())
    cve = copy.deepcopy(page["vulnerabilities"][0]["cve"])
    cve["id"] = "CVE-2099-0001"
    cve["references"] = [{"url": url, "source": "x"} for url in HOSTILE] + [
        {"url": "https://example.org/advisory", "source": "x"}
    ]
    return {**page, "vulnerabilities": [{"cve": cve}]}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("hostile-refs")
    cves = folder / "cves.json"
    cves.write_bytes(orjson.dumps(_cve_with_references()))
    products = folder / "cpes.json.gz"
    product = {
        "cpe": {
            "deprecated": False, "cpeName": CPE_NAME,
            "cpeNameId": "0F6E7A51-0000-4000-8000-000000000001",
            "lastModified": "2024-01-01T00:00:00.000", "created": "2024-01-01T00:00:00.000",
            "titles": [{"title": "Hostile refs", "lang": "en"}],
            "refs": [{"ref": url, "type": "Vendor"} for url in HOSTILE]
            + [{"ref": "https://example.org/product", "type": "Product"}],
        }
    }  # fmt: skip
    products.write_bytes(
        gzip.compress(
            orjson.dumps(
                {"resultsPerPage": 1, "startIndex": 0, "totalResults": 1, "format": "NVD_CPE",
                 "version": "2.0", "timestamp": "2024-01-01T00:00:00.000", "products": [product]}
            )
        )
    )  # fmt: skip
    for url in make_store_url("sqlite", folder):
        store = open_store(url)
        assert Importer(store).import_files([cves, products]).ok
        try:
            with TestClient(create_web_app(store)) as test_client:
                yield test_client
        finally:
            store.close()


def _refuses_script(html: str) -> None:
    lowered = html.lower()
    for url in HOSTILE:
        assert f'href="{url.lower()}' not in lowered
    assert 'href="javascript' not in lowered
    assert 'href=" javascript' not in lowered
    assert 'href="data:' not in lowered


@pytest.mark.parametrize("path", ["/cve/CVE-2099-0001", f"/cpe/{CPE_NAME}"])
def test_only_http_references_are_links(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    _refuses_script(page.text)
    assert 'href="https://example.org/' in page.text
    assert "alert(document.domain)" in page.text or "alert(1)" in page.text  # shown as text


def test_pages_send_the_browser_defences(client: TestClient) -> None:
    for path in ("/", "/cve/CVE-2099-0001", "/cve/CVE-1900-0001", "/scan", "/verify", "/docs"):
        answer = client.get(path)
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp
        assert "script-src" not in csp or "'unsafe-inline'" not in csp
        assert "frame-ancestors 'none'" in csp
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
    api = client.get("/rest/json/cves/2.0?cveId=CVE-2099-0001")
    assert api.headers["x-content-type-options"] == "nosniff"
    assert (
        client.get("/rest/json/cves/2.0?resultsPerPage=5").headers["x-content-type-options"]
        == "nosniff"
    )


@given(st.text(max_size=40))
def test_a_web_url_is_http_or_https_and_nothing_else(text: str) -> None:
    if is_web_url(text):
        assert text[:8].lower().startswith(("http://", "https://"))
        assert all(ord(ch) > 0x20 and ord(ch) != 0x7F for ch in text)
    assert not is_web_url("javascript:" + text)
