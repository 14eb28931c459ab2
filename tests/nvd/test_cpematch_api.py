"""The Match Criteria API (`/rest/json/cpematch/2.0`) over HTTP, on the real match
criteria of CVE-2022-32223 and that CVE's configurations, for every backend."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient
from tests.nvd.conftest import CPEMATCH_FILE, CVE_32223_FILE, response

from assay.nvd.cpe import matches_match_string, parse_cpe

CPEMATCH = "/rest/json/cpematch/2.0"
WINDOWS = "A2572D17-1DE6-457B-99CC-64AFD54487EA"


@pytest.fixture(scope="module")
def criteria() -> list[dict[str, Any]]:
    return [item["matchString"] for item in response(CPEMATCH_FILE)["matchStrings"]]


@pytest.fixture(scope="module")
def client(products_client: TestClient) -> TestClient:
    return products_client


def body(client: TestClient, query: str) -> dict[str, Any]:
    answer = client.get(f"{CPEMATCH}?{query}")
    assert answer.status_code == 200, answer.headers.get("message")
    parsed: dict[str, Any] = answer.json()
    assert parsed["resultsPerPage"] == len(parsed["matchStrings"])
    return parsed


def ids(client: TestClient, query: str) -> list[str]:
    return [item["matchString"]["matchCriteriaId"] for item in body(client, query)["matchStrings"]]


def error(client: TestClient, query: str) -> str:
    answer = client.get(f"{CPEMATCH}?{query}")
    assert answer.status_code == 404, f"{query} answered {answer.status_code}"
    assert answer.content == b""
    return answer.headers["message"]


def in_api_order(records: list[dict[str, Any]]) -> list[str]:
    """The documented order: created, then matchCriteriaId."""
    return [
        m["matchCriteriaId"]
        for m in sorted(records, key=lambda m: (m["created"], m["matchCriteriaId"]))
    ]


def test_envelope_and_records_byte_for_byte(client: TestClient) -> None:
    answer = client.get(f"{CPEMATCH}?cveId=CVE-2022-32223")
    parsed = orjson.loads(answer.content)
    assert list(parsed) == [
        "resultsPerPage", "startIndex", "totalResults", "format", "version", "timestamp", "matchStrings",
    ]  # fmt: skip
    assert (parsed["format"], parsed["version"], parsed["totalResults"]) == (
        "NVD_CPEMatchString",
        "2.0",
        6,
    )
    original = gzip.decompress(CPEMATCH_FILE.read_bytes()).decode()
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"\{\"matchString\":", original)]
    assert len(starts) == 6
    for start in starts:
        _, end = decoder.raw_decode(original, start)
        assert original[start:end].encode() in answer.content


def test_trailing_slash_head_and_options(client: TestClient) -> None:
    plain = client.get(f"{CPEMATCH}?matchCriteriaId={WINDOWS}")
    slashed = client.get(f"{CPEMATCH}/?matchCriteriaId={WINDOWS}")
    assert plain.json()["matchStrings"] == slashed.json()["matchStrings"]
    head = client.head(f"{CPEMATCH}/?matchCriteriaId={WINDOWS}")
    assert (head.status_code, head.content) == (200, b"")
    assert int(head.headers["content-length"]) == len(plain.content)
    assert client.options(CPEMATCH).status_code == 200


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("foo=1", "Invalid parameter: foo"),
        ("cpeName=cpe:2.3:a:b:c:1", "Invalid parameter: cpeName"),
        ("resultsPerPage=501", "resultsPerPage parameter cannot exceed 500"),
        ("resultsPerpage=2000", "resultsPerPage parameter cannot exceed 500"),
        ("resultsPerPage=1.5", "resultsPerPage"),
        ("startIndex=x", "startIndex"),
        ("cveId=CVE-2022", "Invalid cveId"),
        ("cveId=", "cveId requires a value"),
        ("matchCriteriaId=A2572D17", "Invalid matchCriteriaId: expected a UUID"),
        ("matchStringSearch=cpe:2.3:a:apache:log4j", "needs all 11 components"),
        ("matchStringSearch=cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*:*", "at most 11 components"),
        (
            "matchStringSearch=INVALID:2.3:a:apache:log4j:*:*:*:*:*:*:*:*",
            "must start with 'cpe:2.3:'",
        ),
        ("lastModStartDate=2022-08-01T00:00:00", "Both lastModStartDate and lastModEndDate"),
        ("lastModStartDate=2022-08-01&lastModEndDate=2022-08-02T00:00:00", "Invalid ISO 8601"),
        (
            "lastModStartDate=2022-01-01T00:00:00&lastModEndDate=2022-12-31T00:00:00",
            "Date range cannot exceed 120 days",
        ),
    ],
)
def test_every_error_rule_answers_404_naming_the_parameter(
    client: TestClient, query: str, message: str
) -> None:
    assert message in error(client, query)


def test_default_page_and_order(client: TestClient, criteria: list[dict[str, Any]]) -> None:
    parsed = body(client, "")
    assert parsed["totalResults"] == 6
    assert [m["matchString"]["matchCriteriaId"] for m in parsed["matchStrings"]] == in_api_order(
        criteria
    )
    paged = [ids(client, f"resultsPerPage=1&startIndex={i}")[0] for i in range(6)]
    assert paged == in_api_order(criteria)
    past = body(client, "startIndex=6")
    assert (past["totalResults"], past["resultsPerPage"]) == (6, 0)


def test_cve_id_gives_every_criteria_of_its_configurations(client: TestClient) -> None:
    cve = response(CVE_32223_FILE)["vulnerabilities"][0]["cve"]
    referenced = {
        match["matchCriteriaId"]
        for configuration in cve["configurations"]
        for node in configuration["nodes"]
        for match in node["cpeMatch"]
    }
    assert set(ids(client, "cveId=CVE-2022-32223")) == referenced
    assert len(referenced) == 6
    assert set(ids(client, "cveid=cve-2022-32223")) == referenced
    assert ids(client, "cveId=CVE-2099-0001") == []
    # CVEs of the bundled sample share the Windows criteria, the only one stored; the
    # others their configurations name are answered from the CVE (test_cpematch_from_cve).
    assert WINDOWS in ids(client, "cveId=CVE-2023-0001")
    assert ids(client, "cveId=CVE-2022-40482") == []  # not in this store


def test_match_criteria_id(client: TestClient) -> None:
    (item,) = body(client, f"matchCriteriaId={WINDOWS.lower()}")["matchStrings"]
    record = item["matchString"]
    assert record["criteria"] == "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    assert record["status"] == "Active"
    assert [m["cpeName"].split(":")[-2] for m in record["matches"]] == ["*", "x64", "x86"]
    assert ids(client, "matchCriteriaId=00000000-0000-0000-0000-000000000000") == []


@pytest.mark.parametrize(
    ("pattern", "count"),
    [
        ("cpe:2.3:a:nodejs:node.js:*:*:*:*:*:*:*:*", 5),
        ("cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*", 2),
        ("cpe:2.3:a:nodejs:node.js:*:*:*:*:-:*:*:*", 3),
        ("cpe:2.3:*:*:*:*:*:*:*:*:*:*:*", 6),
        ("cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*", 1),
        ("cpe:2.3:O:MICROSOFT:Windows:*:*:*:*:*:*:*:*", 1),
        ("cpe:2.3:a:nodejs:node.js:16.13.0:*:*:*:lts:*:*:*", 0),  # a criteria `*` is no version
        ("cpe:2.3:a:apache:log4j:*:*:*:*:*:*:*:*", 0),
    ],
)
def test_match_string_search_agrees_with_the_pure_rule(
    client: TestClient, criteria: list[dict[str, Any]], pattern: str, count: int
) -> None:
    wanted = parse_cpe(pattern, partial=False)
    expected = in_api_order(
        [
            m
            for m in criteria
            if matches_match_string(wanted, parse_cpe(m["criteria"], partial=False))
        ]
    )
    assert len(expected) == count
    assert ids(client, f"matchStringSearch={pattern}") == expected


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        # cpeLastModified of the Windows criteria only.
        (("2021-03-03T22:41:34.363", "2021-03-04T00:00:00"), {WINDOWS}),
        # lastModified of two node.js criteria.
        (
            ("2022-12-07T00:00:00", "2022-12-08T00:00:00"),
            {"428DCD7B-6F66-4F18-B780-5BD80143D482", "1D1D0CEC-62E5-4368-B8F2-1DA5DD0B88FA"},
        ),
        # Both ends inclusive: one instant that is four records' cpeLastModified.
        (
            ("2022-07-26T18:58:13.137", "2022-07-26T18:58:13.137"),
            {
                "D9D9B02E-C965-408B-999E-1F3DA09B62AA",
                "1D1D0CEC-62E5-4368-B8F2-1DA5DD0B88FA",
                "E1789602-0D21-4A6F-A1BB-60D243AB619D",
                "DAE99FBA-CF4F-4DF2-98D5-5D3ACD82A185",
            },
        ),
        (("2022-07-26T18:58:13.138", "2022-07-26T19:00:00"), set()),
    ],
)
def test_last_modified_window_hits_last_modified_or_cpe_last_modified(
    client: TestClient, window: tuple[str, str], expected: set[str]
) -> None:
    assert set(ids(client, f"lastModStartDate={window[0]}&lastModEndDate={window[1]}")) == expected


def test_filters_combine_with_and(client: TestClient) -> None:
    assert ids(client, f"cveId=CVE-2022-32223&matchCriteriaId={WINDOWS}") == [WINDOWS]
    lts = ids(
        client, "cveId=CVE-2022-32223&matchStringSearch=cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*"
    )
    assert len(lts) == 2
    assert (
        ids(
            client,
            "cveId=CVE-2022-40482&matchStringSearch=cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*",
        )
        == []
    )
