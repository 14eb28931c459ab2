"""The CVE API over HTTP, on the real sample, for every backend: parameters, errors, paging.

Expected results come from hand-checked anchors and from an oracle that evaluates each
filter directly on the JSON records (tests/nvd/oracle.py), so the SQL translation is
checked against a second, independent reading of the rules.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient
from tests.conftest import ASSETS
from tests.nvd import oracle

from assay.nvd.cve_query import parse_cve_query
from assay.nvd.server.app import create_app
from assay.nvd.server.responses import CHUNK_BYTES
from assay.nvd.storage import open_store

CVES = "/rest/json/cves/2.0"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}")


@pytest.fixture(scope="module")
def client(sample_store_url: str) -> Iterator[TestClient]:
    store = open_store(sample_store_url)
    with TestClient(create_app(store)) as test_client:
        yield test_client
    store.close()


@pytest.fixture(scope="module")
def records(client: TestClient) -> list[dict[str, Any]]:
    """Every stored record, in API order (also checks that paging covers them all)."""
    return [item["cve"] for item in client.get(CVES).json()["vulnerabilities"]]


def ids(client: TestClient, query: str) -> list[str]:
    response = client.get(f"{CVES}?{query}")
    assert response.status_code == 200, response.headers.get("message")
    body = response.json()
    assert body["resultsPerPage"] == len(body["vulnerabilities"])
    return [item["cve"]["id"] for item in body["vulnerabilities"]]


def error(client: TestClient, query: str) -> str:
    response = client.get(f"{CVES}?{query}")
    assert response.status_code == 404, f"{query} answered {response.status_code}"
    assert response.content == b""
    assert response.headers["content-length"] == "0"
    return response.headers["message"]


# -- envelope and transport ------------------------------------------------------------


def test_envelope_matches_nvd(client: TestClient) -> None:
    response = client.get(f"{CVES}?resultsPerPage=3&startIndex=2")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["apikey"] == "No"
    body = response.content
    parsed = orjson.loads(body)
    assert list(parsed) == [
        "resultsPerPage", "startIndex", "totalResults", "format", "version", "timestamp", "vulnerabilities",
    ]  # fmt: skip
    assert parsed["resultsPerPage"] == 3
    assert parsed["startIndex"] == 2
    assert parsed["format"] == "NVD_CVE"
    assert parsed["version"] == "2.0"
    assert TIMESTAMP.fullmatch(parsed["timestamp"])
    assert b": " not in body[:200]
    assert b", " not in body[:200]
    assert b"https://" not in body  # every slash escaped as NVD does
    for item in parsed["vulnerabilities"]:
        assert list(item) == ["cve"]
        assert "metrics" in item["cve"]


def test_records_are_served_byte_for_byte_as_nvd_sent_them(client: TestClient) -> None:
    original = gzip.decompress((ASSETS / "nvd" / "cves-1999.json.gz").read_bytes()).decode()
    decoder = json.JSONDecoder()
    checked = 0
    for match in re.finditer(r"\{\"cve\":\{\"id\":\"(CVE-\d+-\d+)\"", original):
        _, end = decoder.raw_decode(original, match.start())
        expected = original[match.start() : end].encode()
        served = client.get(f"{CVES}?cveId={match.group(1)}").content
        assert expected in served, match.group(1)
        checked += 1
    assert checked == 200


def test_trailing_slash_head_and_options(client: TestClient) -> None:
    plain = client.get(f"{CVES}?cveId=CVE-2022-40482")
    slashed = client.get(f"{CVES}/?cveId=CVE-2022-40482")
    assert plain.json()["vulnerabilities"] == slashed.json()["vulnerabilities"]
    head = client.head(f"{CVES}?cveId=CVE-2022-40482")
    assert head.status_code == 200
    assert head.content == b""
    assert int(head.headers["content-length"]) == len(plain.content)
    options = client.options(CVES)
    assert options.status_code == 200
    assert "GET" in options.headers["access-control-allow-methods"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("foo=1", "Invalid parameter: foo"),
        ("apiKey=abc", "Invalid parameter: apiKey"),
        ("includeDeprecated", "Invalid parameter: includeDeprecated"),
        ("resultsPerPage=2001", "resultsPerPage parameter cannot exceed 2000"),
        ("resultsPerPage=-1", "resultsPerPage"),
        ("resultsPerPage=ten", "resultsPerPage"),
        ("startIndex=-5", "startIndex"),
        ("cveId=CVE-22-1", "cveId"),
        ("cveId=", "cveId"),
        ("cveIds=CVE-2022-1954,nope", "cveIds"),
        ("cweId=79", "cweId"),
        ("cveTag=bogus", "cveTag"),
        ("cvssV2Severity=CRITICAL", "cvssV2Severity"),
        ("cvssV3Severity=urgent", "cvssV3Severity"),
        (
            "cvssV2Severity=HIGH&cvssV3Severity=HIGH",
            "cvssV2Severity and cvssV3Severity cannot be combined",
        ),
        ("cvssV3Severity=HIGH&cvssV4Severity=HIGH", "cannot be combined"),
        (
            "cvssV2Metrics=AV:N&cvssV3Metrics=AV:N",
            "cvssV2Metrics and cvssV3Metrics cannot be combined",
        ),
        ("cvssV3Metrics=XX:N", "cvssV3Metrics"),
        ("isVulnerable", "isVulnerable requires cpeName"),
        ("keywordExactMatch", "keywordExactMatch requires keywordSearch"),
        ("cpeName=cpe:2.3:a:*:framework:1.0", "the vendor component must not be *"),
        ("cpeName=cpe:2.3:a:laravel:framework", "the version component must not be *"),
        ("cpeName=INVALID:2.3:a:laravel:framework:1.0", "cpeName"),
        ("cpeName=cpe:2.3:a:b:c:d:e:f:g:h:i:j:k:l", "cpeName"),
        ("virtualMatchString=cpe:2.3:o:linux:linux_kernel&isVulnerable", "isVulnerable"),
        ("versionStart=2.6&versionStartType=including", "versionStart requires virtualMatchString"),
        ("virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionStart=2.6", "versionStartType"),
        ("virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionEndType=excluding", "versionEnd"),
        (
            "virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionEnd=3&versionEndType=upto",
            "versionEndType",
        ),
        (
            "virtualMatchString=cpe:2.3:o:linux:linux_kernel:2.6&versionEnd=3&versionEndType=excluding",
            "version",
        ),
        ("pubStartDate=2022-01-01T00:00:00", "Both pubStartDate and pubEndDate are required"),
        ("lastModEndDate=2022-01-01T00:00:00", "lastModStartDate"),
        ("kevStartDate=2022-01-01T00:00:00", "kevEndDate"),
        (
            "pubStartDate=2022-01-01T00:00:00&pubEndDate=2022-05-01T00:00:01",
            "cannot exceed 120 days",
        ),
        ("pubStartDate=2022-02-01T00:00:00&pubEndDate=2022-01-01T00:00:00", "pubStartDate"),
        (
            "pubStartDate=yesterday&pubEndDate=2022-01-01T00:00:00",
            "Invalid ISO 8601 date/time format, see documentation. (pubStartDate)",
        ),
        ("pubStartDate=2022-13-01T00:00:00&pubEndDate=2022-01-01T00:00:00", "Invalid ISO 8601"),
        ("keywordSearch=", "keywordSearch"),
    ],
)
def test_every_error_rule_answers_404_naming_the_parameter(
    client: TestClient, query: str, message: str
) -> None:
    assert message in error(client, query)


def test_parameter_names_are_case_insensitive(client: TestClient) -> None:
    assert ids(client, "CVEID=CVE-2022-1954") == ["CVE-2022-1954"]
    assert ids(client, "resultsperpage=1&STARTINDEX=0") == ids(client, "resultsPerPage=1")
    assert ids(client, "HASKEV") == ids(client, "hasKev")


@pytest.mark.parametrize(
    "form", ["hasKev", "hasKev=", "hasKev=true", "hasKev=false", "hasKev=True"]
)
def test_a_flag_is_on_whatever_its_value(client: TestClient, form: str) -> None:
    assert ids(client, form) == ids(client, "hasKev") != []


def test_unsafe_header_text_is_neutralised(client: TestClient) -> None:
    message = error(client, "cveId=%E2%98%83%0d%0aX-Injected:%201")
    assert "\r" not in message
    assert "\n" not in message
    assert "X-Injected" not in client.get(f"{CVES}?cveId=%0d%0aX-Injected:%201").headers


# -- paging ------------------------------------------------------------------------------


def test_default_page_is_everything_up_to_2000(
    client: TestClient, records: list[dict[str, Any]]
) -> None:
    body = client.get(CVES).json()
    assert body["totalResults"] == len(records) > 300
    assert body["resultsPerPage"] == len(records)


def test_order_is_published_then_id(records: list[dict[str, Any]]) -> None:
    keys = [(r["published"][:23], r["id"]) for r in records]
    assert keys == sorted(keys)


@pytest.mark.parametrize("size", [1, 7, 50, 333])
def test_pages_partition_the_result_exactly_once(
    client: TestClient, records: list[dict[str, Any]], size: int
) -> None:
    seen: list[str] = []
    start = 0
    while True:
        body = client.get(f"{CVES}?resultsPerPage={size}&startIndex={start}").json()
        assert body["totalResults"] == len(records)
        page = [item["cve"]["id"] for item in body["vulnerabilities"]]
        if not page:
            break
        assert len(page) == body["resultsPerPage"] <= size
        seen.extend(page)
        start += len(page)
    assert seen == [r["id"] for r in records]


def test_a_page_past_the_end_is_an_empty_200(
    client: TestClient, records: list[dict[str, Any]]
) -> None:
    body = client.get(f"{CVES}?startIndex=100000").json()
    assert body["vulnerabilities"] == []
    assert body["resultsPerPage"] == 0
    assert body["totalResults"] == len(records)
    assert body["startIndex"] == 100000
    assert client.get(f"{CVES}?resultsPerPage=0").json()["resultsPerPage"] == 0


# -- filters: anchors checked by hand ------------------------------------------------------


def test_cve_id(client: TestClient) -> None:
    assert ids(client, "cveId=CVE-2022-1954") == ["CVE-2022-1954"]
    assert ids(client, "cveId=cve-2022-1954") == ["CVE-2022-1954"]
    assert ids(client, "cveId=CVE-2099-99999") == []
    assert ids(client, "cveIds=CVE-2022-1954,CVE-1999-0095,CVE-2099-0001") == [
        "CVE-1999-0095",
        "CVE-2022-1954",
    ]


def test_cpe_name_honours_version_ranges(client: TestClient) -> None:
    # Real answer of NVD (2024-07-12): laravel 8.83.27 lies in [8.0.0, 9.32.0).
    name = "cpe:2.3:a:laravel:framework:{}:*:*:*:*:*:*:*"
    assert ids(client, "cpeName=" + name.format("8.83.27")) == ["CVE-2022-40482"]
    assert ids(client, "cpeName=" + name.format("v8.83.27")) == []
    assert ids(client, "cpeName=" + name.format("8.0.0")) == ["CVE-2022-40482"]  # including
    assert ids(client, "cpeName=" + name.format("9.32.0")) == []  # excluding
    assert ids(client, "cpeName=" + name.format("7.30.4")) == []
    # Partial names are padded with *, and components compare case-insensitively.
    assert ids(client, "cpeName=cpe:2.3:a:Laravel:FRAMEWORK:8.83.27") == ["CVE-2022-40482"]
    assert ids(client, "cpeName=cpe%3A2.3%3Aa%3Alaravel%3Aframework%3A9.0") == ["CVE-2022-40482"]


def test_is_vulnerable_drops_running_on_platforms(
    client: TestClient, records: list[dict[str, Any]]
) -> None:
    platform = oracle.running_on_only_name(records)
    assert platform is not None, "the sample has a CPE that is only ever a running-on platform"
    assert ids(client, f"cpeName={platform}") != []
    assert ids(client, f"cpeName={platform}&isVulnerable") == []


def test_virtual_match_string_with_version_bounds(client: TestClient) -> None:
    everything = set(ids(client, "virtualMatchString=cpe:2.3:o:linux:linux_kernel"))
    assert everything
    bounded = set(
        ids(
            client,
            "virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionStart=2.6&versionStartType=including&versionEnd=2.6&versionEndType=including",
        )
    )
    assert bounded <= everything
    assert (
        ids(
            client,
            "virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionStart=999&versionStartType=excluding",
        )
        == []
    )


def test_cpe_name_wins_over_virtual_match_string(client: TestClient) -> None:
    both = ids(
        client,
        "cpeName=cpe:2.3:a:laravel:framework:8.83.27&virtualMatchString=cpe:2.3:o:linux:linux_kernel",
    )
    assert both == ["CVE-2022-40482"]


def test_keyword_search_is_an_and_of_word_prefixes(client: TestClient) -> None:
    overflow = set(ids(client, "keywordSearch=overflow"))
    buffer_overflow = set(ids(client, "keywordSearch=buffer%20overflow"))
    assert buffer_overflow
    assert buffer_overflow <= overflow
    assert set(ids(client, "keywordSearch=overfl")) >= overflow  # a prefix finds the word
    assert ids(client, "keywordSearch=verflow") == []  # but not a suffix
    assert set(ids(client, "keywordSearch=BUFFER+OVERFLOW")) == buffer_overflow


def test_keyword_exact_match_is_a_phrase(client: TestClient) -> None:
    phrase = set(ids(client, "keywordSearch=buffer%20overflow&keywordExactMatch"))
    words = set(ids(client, "keywordSearch=overflow%20buffer"))
    reversed_phrase = set(ids(client, "keywordSearch=overflow%20buffer&keywordExactMatch"))
    assert phrase
    assert phrase <= words
    assert reversed_phrase < words


def test_no_rejected(client: TestClient, records: list[dict[str, Any]]) -> None:
    rejected = {r["id"] for r in records if r["vulnStatus"] == "Rejected"}
    assert rejected
    assert not rejected & set(ids(client, "noRejected"))
    assert rejected <= set(ids(client, ""))


def test_source_identifier_matches_any_source_in_the_record(
    client: TestClient, records: list[dict[str, Any]]
) -> None:
    found = set(ids(client, "sourceIdentifier=nvd@nist.gov"))
    assert found
    assert any(r["sourceIdentifier"] != "nvd@nist.gov" for r in records if r["id"] in found)


def test_date_windows_accept_every_offset_form(client: TestClient) -> None:
    # CVE-2022-40482 was published 2023-04-25T19:15:10.180 UTC.
    hit = "CVE-2022-40482"
    for start in (
        "2023-04-25T19:15:10.180",
        "2023-04-25T19:15:10.180Z",
        "2023-04-25T21:15:10.180%2B02:00",
        "2023-04-25T21:15:10.180+02:00",  # a raw + arrives as a space
        "2023-04-25T14:15:10.180-05:00",
        "2023-04-25T19:15",
        "2023-04-25T19:15:10",
    ):
        assert hit in ids(client, f"pubStartDate={start}&pubEndDate=2023-04-26T00:00:00"), start
    assert hit not in ids(
        client, "pubStartDate=2023-04-25T19:15:10.181&pubEndDate=2023-04-26T00:00:00"
    )
    assert hit in ids(
        client, "pubStartDate=2023-01-01T00:00:00&pubEndDate=2023-05-01T00:00:00"
    )  # 120 days exactly


def test_kev_window_and_flag(client: TestClient) -> None:
    kev = ids(client, "hasKev")
    assert "CVE-2024-23113" in kev
    assert ids(client, "kevStartDate=2024-10-09T00:00:00&kevEndDate=2024-10-09T00:00:00") == [
        "CVE-2024-23113"
    ]
    window = ids(client, "kevStartDate=2022-03-01T00:00:00&kevEndDate=2022-03-31T00:00:00")
    assert window
    assert set(window) <= set(kev)
    assert "CVE-2024-23113" not in window


# -- filters: checked against the oracle ----------------------------------------------------

ORACLE_QUERIES = [
    "cweId=CWE-79",
    "cweId=nvd-cwe-noinfo",
    "cweId=CWE-352",
    "cvssV2Severity=HIGH",
    "cvssV3Severity=critical",
    "cvssV3Severity=MEDIUM",
    "cvssV4Severity=MEDIUM",
    "cvssV2Metrics=AV:N/AC:L/Au:N",
    "cvssV3Metrics=AV:N/PR:N",
    "cvssV3Metrics=CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
    "cvssV4Metrics=AV:N/AC:L",
    "cveTag=unsupported-when-assigned",
    "hasCertNotes",
    "hasOval",
    "hasCertAlerts",
    "sourceIdentifier=cve@mitre.org",
    "sourceIdentifier=psirt@us.ibm.com",
    "keywordSearch=remote%20attackers",
    "keywordSearch=sql&keywordExactMatch",
    "keywordSearch=cross-site%20scripting&keywordExactMatch",
    "lastModStartDate=2023-10-01T00:00:00&lastModEndDate=2024-01-01T00:00:00",
    "pubStartDate=2022-01-01T00:00:00.000Z&pubEndDate=2022-04-30T00:00:00Z",
    "cpeName=cpe:2.3:o:fortinet:fortios:7.0.5",
    "cpeName=cpe:2.3:o:fortinet:fortios:6.0.0",
    "cpeName=cpe:2.3:o:linux:linux_kernel:5.10",
    "cpeName=cpe:2.3:a:gitlab:gitlab:14.6.1:*:*:*:community:*:*:*",
    "cpeName=cpe:2.3:o:linux:linux_kernel:2.6.32&isVulnerable",
    "virtualMatchString=cpe:2.3:a:gitlab",
    "virtualMatchString=cpe:2.3:o:fortinet:fortios&versionStart=7.0.0&versionStartType=including&versionEnd=7.0.5&versionEndType=excluding",
    "virtualMatchString=cpe:2.3:a:apache:http_server&versionStart=1.2&versionStartType=excluding&versionEnd=1.3.0&versionEndType=including",
    "virtualMatchString=cpe:2.3:a:apache:http_server:1.2.6",
    "cweId=CWE-79&cvssV3Severity=MEDIUM&noRejected",
]


@pytest.mark.parametrize("query", ORACLE_QUERIES)
def test_filter_agrees_with_the_oracle(
    client: TestClient, records: list[dict[str, Any]], query: str
) -> None:
    expected = [r["id"] for r in records if oracle.matches(query, r)]
    assert ids(client, query) == expected


def test_the_walk_orders_are_built_before_the_first_request(
    sample_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.nvd.server.app import WALK_ORDERS
    from assay.nvd.storage import _cache

    monkeypatch.setattr(_cache, "MIN_CACHED_RESULTS", 0)  # the sample is small
    store = open_store(sample_store_url)
    try:
        generation = store.get_meta("generation")
        keys = [(int(generation or 0), parse_cve_query(pairs).filter_key) for pairs in WALK_ORDERS]
        assert all(store._cache.get(key) is None for key in keys)  # type: ignore[attr-defined]
        with TestClient(create_app(store)):
            cached = [store._cache.get(key) for key in keys]  # type: ignore[attr-defined]
        assert [len(ids) for ids in cached if ids is not None] == [
            store.search_cves(parse_cve_query(pairs)).total for pairs in WALK_ORDERS
        ]
    finally:
        store.close()


def test_a_page_larger_than_one_piece_arrives_whole(client: TestClient) -> None:
    """The whole sample in one page is sent in pieces: one body of the announced length."""
    response = client.get(f"{CVES}?resultsPerPage=2000", headers={"accept-encoding": "identity"})
    body = response.content
    assert len(body) > CHUNK_BYTES
    assert int(response.headers["content-length"]) == len(body)
    parsed = orjson.loads(body)
    assert parsed["resultsPerPage"] == len(parsed["vulnerabilities"]) == parsed["totalResults"]
    head = client.head(f"{CVES}?resultsPerPage=2000")
    assert head.content == b""
    assert int(head.headers["content-length"]) == len(body)
