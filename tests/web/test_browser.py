"""The pages in a real browser: Debian's chromium driven by Playwright, against a real
`assay serve` process over a SQLite store loaded with the bundled sample."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from tests.conftest import ASSETS

GCB_IMAGE = "sha256:1a033b002f89ed2b8ea733162497fb70f1a4049a7f8602d6a33682b4ad9921fd"
GCB_PROVENANCE = ASSETS / "verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
UV_LOCK = ASSETS / "lockfiles/fastapi-mvc/uv.lock"

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None, reason=f"{CHROMIUM} is absent (.ci/run installs it)"
    ),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browser")
    store = f"sqlite:///{folder / 'store.db'}"
    subprocess.run(
        [sys.executable, "-m", "assay", "nvd", "import", "--store", store, "--bundled"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--store", store, "--port", str(port),
         "--reserve-memory", "0"],
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/healthz", timeout=2)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
    yield url
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import expect, sync_playwright

    # CI's 2 cores run the suite on both of them: give slow answers time.
    expect.set_options(timeout=20_000)

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object, base_url: str) -> Iterator[object]:
    context = browser.new_context(base_url=base_url, java_script_enabled=False)  # type: ignore[attr-defined]
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    yield page
    context.close()
    assert all(url.startswith(base_url) for url in requests), "a page asked another site"


def test_search_open_a_cve_and_follow_a_criteria_link(page: object, base_url: str) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto("/")
    expect(page.get_by_role("heading", name="This mirror")).to_be_visible()
    page.get_by_label("Keyword, CVE id, CPE name or match string, or purl").fill("windows")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("heading", level=2).first).to_contain_text("CVE")
    page.get_by_role("link", name="CVE-2023-0001").click()
    expect(page).to_have_url(f"{base_url}/cve/CVE-2023-0001")
    expect(page.get_by_role("heading", name="CVE-2023-0001")).to_be_visible()
    expect(page.get_by_role("heading", name="Affected configurations")).to_be_visible()
    expect(page.get_by_text("Attack Vector").first).to_be_attached()
    page.locator('a[href="/criteria/A2572D17-1DE6-457B-99CC-64AFD54487EA"]').first.click()
    expect(page.get_by_role("heading", name="Match criteria")).to_be_visible()
    expect(page.get_by_text("cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*").first).to_be_visible()
    product = page.locator("ul.products a").first
    name = product.inner_text()
    product.click()
    expect(page.get_by_role("heading", name="Product")).to_be_visible()
    expect(page.locator("code.big")).to_have_text(name)


def test_a_cve_id_in_the_box_opens_it_and_an_unknown_one_is_a_404(
    page: object, base_url: str
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto("/")
    page.get_by_label("Keyword, CVE id, CPE name or match string, or purl").fill("cve-2024-23113")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{base_url}/cve/CVE-2024-23113")
    expect(page.get_by_text("Known exploited (CISA KEV)")).to_be_visible()
    response = page.goto("/cve/CVE-2099-0001")
    assert response is not None
    assert response.status == 404
    expect(page.get_by_role("heading", level=1)).to_contain_text("not in this store")


def test_filters_and_the_json_twin(page: object, base_url: str) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto("/")
    page.get_by_label("Severity").select_option("CRITICAL")
    page.get_by_label("Known exploited (CISA KEV)").check()
    page.get_by_role("button", name="Search").click()
    heading = page.get_by_role("heading", level=2).first
    expect(heading).to_contain_text("CVE")
    shown = int(heading.inner_text().split()[0])
    twin = page.get_by_role("link", name="The same page from the API (JSON)").get_attribute("href")
    assert twin is not None
    assert "hasKev" in twin
    assert "cvssV3Severity=CRITICAL" in twin
    assert httpx.get(base_url + twin).json()["totalResults"] == shown


def test_a_phone_sized_page_does_not_scroll_sideways(browser: object, base_url: str) -> None:
    context = browser.new_context(base_url=base_url, viewport={"width": 375, "height": 740})  # type: ignore[attr-defined]
    page = context.new_page()
    for path in ("/", "/cve/CVE-2024-23113", "/docs", "/verify", "/scan"):
        page.goto(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"{path} is {width} px wide on a 375 px screen"
    context.close()


def test_upload_an_attestation_and_verify_it(page: object, base_url: str) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto("/")
    page.get_by_role("link", name="Verify").click()
    expect(page.get_by_role("heading", name="Verify provenance against a policy")).to_be_visible()
    page.get_by_label("Attestation files").set_input_files(str(GCB_PROVENANCE))
    page.get_by_label("A shipped policy").select_option("gcb")
    page.get_by_label("Artifact digests").fill(GCB_IMAGE)
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page).to_have_url(f"{base_url}/verify")
    expect(page.locator(".verdict")).to_have_text("PASSED: SLSA build level 3")
    expect(page.get_by_role("heading", name="gcloud-container-github.json: valid")).to_be_visible()
    expect(page.get_by_text("signed by gcb-regional-legacy")).to_be_visible()
    page.get_by_label("Artifact digests").fill("sha256:" + "0" * 64)
    page.get_by_label("Attestation files").set_input_files(str(GCB_PROVENANCE))
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page.locator(".verdict")).to_have_text("FAILED")
    page.get_by_role("button", name="Verify", exact=True).click()  # files are not kept
    expect(page.get_by_role("alert")).to_contain_text("attestation: expected an attestation")
    page.get_by_label("Attestation files").set_input_files(str(GCB_PROVENANCE))
    page.get_by_label("Artifact digests").fill("md5:abc")
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("artifact digests line 1")
    expect(page.get_by_label("A shipped policy")).to_have_value("gcb")


def test_the_verdict_heads_the_page_and_long_digests_wrap(page: object, base_url: str) -> None:
    # A sha512 digest made the checks table 4,484 px wide in a 1,120 px box, and a wrong
    # digest's page said "passed, level 2" in a heading while the verdict was FAILED.
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto("/verify")
    page.get_by_label("Attestation files").set_input_files(str(GCB_PROVENANCE))
    page.get_by_label("A shipped policy").select_option("gcb")
    page.get_by_label("Artifact digests").fill("sha512:" + "ab" * 64)
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page.get_by_role("heading", name="Verdict: FAILED")).to_be_visible()
    expect(page.get_by_role("heading", name="passed")).to_have_count(0)
    for table in page.locator("table.checks").all():
        box = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
        assert box[0] <= box[1], f"a checks table is {box[0]} px wide in {box[1]} px"


def test_upload_an_sbom_and_scan_it(page: object, base_url: str, tmp_path: object) -> None:
    import json
    from pathlib import Path

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    assert isinstance(tmp_path, Path)
    bom = tmp_path / "bom.cdx.json"
    bom.write_text(
        json.dumps(
            {
                "bomFormat": "CycloneDX",
                "specVersion": "1.5",
                "version": 1,
                "components": [
                    {
                        "type": "library",
                        "bom-ref": "tensorflow",
                        "name": "tensorflow",
                        "version": "2.9.0",
                        "purl": "pkg:pypi/tensorflow@2.9.0",
                    }
                ],
            }
        )
    )
    page.goto("/scan")
    page.get_by_label("SBOM or lock files").set_input_files([str(bom), str(UV_LOCK)])
    page.get_by_role("button", name="Scan", exact=True).click()
    expect(page.get_by_role("heading", name="Affected components")).to_be_visible()
    expect(page.get_by_role("heading", level=2).first).to_have_text("1 finding")
    expect(page.get_by_role("rowheader", name="bom.cdx.json")).to_be_visible()
    expect(page.get_by_role("cell", name="cyclonedx-json")).to_be_visible()
    expect(page.get_by_role("heading", name="Unidentified components")).to_be_visible()
    page.get_by_role("link", name="CVE-2022-29194").click()
    expect(page).to_have_url(f"{base_url}/cve/CVE-2022-29194")
    expect(page.get_by_role("heading", name="CVE-2022-29194")).to_be_visible()


def test_a_vex_document_and_a_rule_on_the_scan_page(
    page: object, base_url: str, tmp_path: object
) -> None:
    """The page takes VEX documents and fail-on rules as `assay scan --vex --fail-on` does:
    the finding a statement calls `not_affected` stays listed, marked, and fails nothing."""
    import json
    from pathlib import Path

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    assert isinstance(tmp_path, Path)
    vex = tmp_path / "vendor.openvex.json"
    statement = {
        "vulnerability": {"name": "CVE-2022-29194"},
        "products": [{"@id": "pkg:pypi/tensorflow"}],
        "status": "not_affected",
        "justification": "vulnerable_code_not_in_execute_path",
    }
    vex.write_text(
        json.dumps(
            {
                "@context": "https://openvex.dev/ns/v0.2.0",
                "@id": "https://example.com/vex/browser",
                "author": "Example Vendor",
                "timestamp": "2024-01-01T00:00:00Z",
                "version": 1,
                "statements": [statement],
            }
        )
    )
    page.goto("/scan")
    page.get_by_label("Package URLs, one per line").fill("pkg:pypi/tensorflow@2.9.0")
    page.get_by_label("VEX documents").set_input_files([str(vex)])
    page.get_by_label("Fail on (one rule per line)").fill("severity>=LOW")
    page.get_by_role("button", name="Scan", exact=True).click()
    expect(page.get_by_text("Verdict: passed")).to_be_visible()
    expect(page.get_by_role("cell", name="VEX not_affected").first).to_be_visible()
    expect(page.get_by_role("rowheader", name="vendor.openvex.json")).to_be_visible()
