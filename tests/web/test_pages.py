"""The pages over the real app and real stores: what a person sees, and its JSON twin."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote

import orjson
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from assay.web.search import Pager


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.labels: set[str] = set()
        self.inputs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"] or "")
        if tag == "label" and values.get("for"):
            self.labels.add(values["for"] or "")
        if tag in ("input", "select") and values.get("type") not in ("hidden", "submit"):
            self.inputs.append(values.get("id") or "")


def parse(html: str) -> Links:
    links = Links()
    links.feed(html)
    return links


def twin(html: str) -> str:
    found = re.findall(r'href="(/rest/json/[^"]+)" rel="alternate"', html)
    assert found, "the page links no JSON twin"
    return str(found[0]).replace("&amp;", "&")


def test_home_shows_the_store_state_and_every_field_is_labelled(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "x-assay-store" not in page.headers
    counts = client.get("/rest/json/cves/2.0?resultsPerPage=0").json()["totalResults"]
    assert f"{counts:,}" in page.text
    links = parse(page.text)
    assert set(links.inputs) <= links.labels
    assert "/docs" in links.hrefs
    assert "<script" not in page.text


def test_keyword_search_lists_the_same_cves_as_its_json_twin(client: TestClient) -> None:
    page = client.get(
        "/", params={"q": "buffer overflow", "order": "oldest", "resultsPerPage": "5"}
    )
    assert page.status_code == 200
    shown = re.findall(r'href="/cve/(CVE-[0-9-]+)"', page.text)
    api = client.get(twin(page.text)).json()
    assert shown == [v["cve"]["id"] for v in api["vulnerabilities"]]
    assert f"{api['totalResults']} CVEs" in page.text
    assert len(shown) == 5


def test_newest_first_is_the_last_api_page_reversed(client: TestClient) -> None:
    page = client.get("/", params={"q": "overflow", "resultsPerPage": "3"})
    shown = re.findall(r'href="/cve/(CVE-[0-9-]+)"', page.text)
    api = client.get(twin(page.text)).json()
    assert shown == [v["cve"]["id"] for v in reversed(api["vulnerabilities"])]
    assert api["startIndex"] + api["resultsPerPage"] == api["totalResults"]


def test_a_cve_id_in_the_box_opens_its_page(client: TestClient) -> None:
    answer = client.get("/", params={"q": " cve-2024-23113 "}, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/cve/CVE-2024-23113"


def test_bad_filters_are_a_400_naming_the_field(client: TestClient) -> None:
    page = client.get("/", params={"publishedFrom": "2024-01-01", "publishedTo": "2024-12-31"})
    assert page.status_code == 400
    assert "pubStartDate" in page.text
    page = client.get("/", params={"severity": "EXTREME"})
    assert page.status_code == 400
    assert "severity" in page.text


def test_the_cve_page_shows_metrics_configurations_and_references(client: TestClient) -> None:
    page = client.get("/cve/CVE-2024-23113")
    assert page.status_code == 200
    record = client.get(twin(page.text)).json()["vulnerabilities"][0]["cve"]
    for metric in record["metrics"].get("cvssMetricV31", []):
        assert metric["cvssData"]["vectorString"] in page.text
    assert "Attack Vector" in page.text
    criteria = {
        m["matchCriteriaId"]
        for c in record["configurations"]
        for n in c["nodes"]
        for m in n["cpeMatch"]
    }
    hrefs = parse(page.text).hrefs
    assert {h.removeprefix("/criteria/") for h in hrefs if h.startswith("/criteria/")} == criteria
    for reference in record["references"]:
        assert reference["url"].replace("&", "&amp;") in page.text
    if "cisaExploitAdd" in record:
        assert "Known exploited" in page.text


def test_an_unknown_cve_is_a_404_page(client: TestClient) -> None:
    page = client.get("/cve/CVE-2099-99999")
    assert page.status_code == 404
    assert "not in this store" in page.text
    assert client.get("/cve/not-a-cve").status_code == 404
    assert client.get("/cve/cve-2024-23113", follow_redirects=False).status_code == 301


def test_the_change_history_is_on_the_cve_page(client: TestClient) -> None:
    for cve_id in ("CVE-2024-23113", "CVE-2019-1010218"):
        page = client.get(f"/cve/{cve_id}")
        history = client.get(f"/rest/json/cvehistory/2.0?cveId={cve_id}").json()
        if page.status_code == 200:
            assert f"Change history ({history['totalResults']})" in page.text
            for change in history["cveChanges"]:
                assert change["change"]["eventName"] in page.text
        else:  # the sample has the history of a CVE it does not hold
            assert page.status_code == 404
            assert f"{history['totalResults']} change history entries" in page.text
            assert f"/rest/json/cvehistory/2.0?cveId={cve_id}" in page.text


def test_a_criteria_page_lists_the_products_it_matches(client: TestClient) -> None:
    cve_page = client.get("/cve/CVE-2023-0001")
    link = "/criteria/A2572D17-1DE6-457B-99CC-64AFD54487EA"
    assert link in parse(cve_page.text).hrefs
    page = client.get(link)
    api = client.get(twin(page.text)).json()
    criteria = api["matchStrings"][0]["matchString"]
    assert page.status_code == 200
    products = [
        unquote(h.removeprefix("/cpe/")) for h in parse(page.text).hrefs if h.startswith("/cpe/")
    ]
    expected = [m["cpeName"] for m in criteria.get("matches", [])][:100]
    assert products == expected
    assert client.get("/criteria/00000000-0000-0000-0000-000000000000").status_code == 404


def test_a_product_page_lists_the_cves_of_cpe_name(client: TestClient) -> None:
    name = "cpe:2.3:o:fortinet:fortios:7.0.5:*:*:*:*:*:*:*"
    page = client.get(f"/cpe/{name}", params={"vulnerable": "1"})
    assert page.status_code == 200
    shown = re.findall(r'href="/cve/(CVE-[0-9-]+)"', page.text)
    api = client.get(twin(page.text)).json()
    assert "isVulnerable" in twin(page.text)
    assert shown == [v["cve"]["id"] for v in api["vulnerabilities"]]
    assert "CVE-2024-23113" in shown


def test_product_search_pages_with_the_api_limits(client: TestClient) -> None:
    page = client.get("/cpe", params={"q": "microsoft", "resultsPerPage": "3"})
    assert page.status_code == 200
    api = client.get(twin(page.text)).json()
    assert len(api["products"]) == 3
    for product in api["products"]:
        assert product["cpe"]["cpeName"] in page.text
    assert 'rel="next"' in page.text
    assert client.get("/cpe", params={"q": "x", "resultsPerPage": "10001"}).status_code == 400


def test_docs_show_a_real_example_per_path_and_try_it_goes_to_the_api(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    for path in (
        "/rest/json/cves/2.0",
        "/rest/json/cpes/2.0",
        "/rest/json/cpematch/2.0",
        "/rest/json/cvehistory/2.0",
    ):
        assert f"GET {path}" in page.text
    assert "CVE-2024-23113" in page.text
    assert "&#34;totalResults&#34;: 1" in page.text
    answer = client.get(
        "/docs/try",
        params={
            "endpoint": "get_cves",
            "cveId": "CVE-2024-23113",
            "keywordSearch": "",
            "hasKev": "1",
        },
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/rest/json/cves/2.0?cveId=CVE-2024-23113&hasKev="


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready"
    assert isinstance(ready["generation"], int)


def test_the_api_is_still_served_unchanged(client: TestClient) -> None:
    answer = client.get("/rest/json/cves/2.0?cveId=CVE-2024-23113")
    assert answer.status_code == 200
    assert orjson.loads(answer.content)["totalResults"] == 1
    assert client.get("/rest/json/cves/2.0?cveId=bogus").status_code == 404


def test_html_in_records_and_queries_is_escaped(client: TestClient) -> None:
    page = client.get("/", params={"q": "<script>alert(1)</script>"})
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;" in page.text


@given(
    total=st.integers(0, 10_000),
    size=st.integers(1, 2000),
    start=st.integers(0, 12_000),
)
def test_pager_links_stay_inside_the_result_set(total: int, size: int, start: int) -> None:
    pager = Pager(total, start, size)
    if pager.next is not None:
        assert start < pager.next < total
    if pager.previous is not None:
        assert 0 <= pager.previous < start
    if pager.last is not None:
        assert pager.last < total
        assert pager.last % size == 0
