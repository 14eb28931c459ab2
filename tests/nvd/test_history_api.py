"""The CVE Change History API (`/rest/json/cvehistory/2.0`) over HTTP, on the real
history of CVE-2019-1010218, for every backend."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient
from tests.nvd.conftest import HISTORY_FILE, response

from assay.nvd.history_query import EVENT_NAMES

HISTORY = "/rest/json/cvehistory/2.0"
CVE = "CVE-2019-1010218"


@pytest.fixture(scope="module")
def changes() -> list[dict[str, Any]]:
    return [item["change"] for item in response(HISTORY_FILE)["cveChanges"]]


@pytest.fixture(scope="module")
def client(products_client: TestClient) -> TestClient:
    return products_client


def body(client: TestClient, query: str) -> dict[str, Any]:
    answer = client.get(f"{HISTORY}?{query}")
    assert answer.status_code == 200, answer.headers.get("message")
    parsed: dict[str, Any] = answer.json()
    assert parsed["resultsPerPage"] == len(parsed["cveChanges"])
    return parsed


def events(client: TestClient, query: str) -> list[str]:
    return [item["change"]["eventName"] for item in body(client, query)["cveChanges"]]


def error(client: TestClient, query: str) -> str:
    answer = client.get(f"{HISTORY}?{query}")
    assert answer.status_code == 404, f"{query} answered {answer.status_code}"
    assert answer.content == b""
    return answer.headers["message"]


def test_envelope_and_records_byte_for_byte(client: TestClient) -> None:
    answer = client.get(f"{HISTORY}?cveId={CVE}")
    parsed = orjson.loads(answer.content)
    assert list(parsed) == [
        "resultsPerPage", "startIndex", "totalResults", "format", "version", "timestamp", "cveChanges",
    ]  # fmt: skip
    assert (parsed["format"], parsed["version"], parsed["totalResults"]) == (
        "NVD_CVEHistory",
        "2.0",
        4,
    )
    original = gzip.decompress(HISTORY_FILE.read_bytes()).decode()
    # The whole list is NVD's, byte for byte: same records, same order.
    start = original.index('"cveChanges":')
    assert original[start:].encode() in answer.content
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{\"change\":", original):
        _, end = decoder.raw_decode(original, match.start())
        assert original[match.start() : end].encode() in answer.content


def test_every_change_of_a_cve_in_created_order(
    client: TestClient, changes: list[dict[str, Any]]
) -> None:
    listed = body(client, f"cveId={CVE}")["cveChanges"]
    assert [item["change"] for item in listed] == sorted(
        changes, key=lambda c: (c["created"], c["cveChangeId"])
    )
    assert [item["change"]["cveChangeId"] for item in listed] == [c["cveChangeId"] for c in changes]
    assert events(client, f"cveid={CVE.lower()}") == [c["eventName"] for c in changes]
    assert events(client, "cveId=CVE-2099-0001") == []
    assert events(client, f"cveIds={CVE},CVE-2022-40482") == [c["eventName"] for c in changes]
    # No filter: every stored change.
    assert body(client, "")["totalResults"] == 4


def test_details_keep_old_and_new_values_absent_when_not_applicable(client: TestClient) -> None:
    first = body(client, f"cveId={CVE}&resultsPerPage=1")["cveChanges"][0]["change"]
    assert first["details"][0] == {
        "action": "Added",
        "type": "CVSS V2",
        "newValue": "(AV:N/AC:L/Au:N/C:N/I:N/A:P)",
    }


@pytest.mark.parametrize(
    "query",
    [
        "eventName=CVE%20Modified",
        "eventName=CVE+Modified",
        "eventName=cve+modified",
        "EVENTNAME=Cve%20MODIFIED",
        "eventName=CVE++Modified",
    ],
)
def test_event_name_is_case_insensitive_with_either_space(client: TestClient, query: str) -> None:
    assert events(client, f"cveId={CVE}&{query}") == ["CVE Modified"]


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_every_event_name_is_accepted(
    client: TestClient, name: str, changes: list[dict[str, Any]]
) -> None:
    expected = [c["eventName"] for c in changes if c["eventName"] == name]
    assert events(client, f"eventName={name.replace(' ', '%20')}") == expected


def test_change_window_is_on_created_and_inclusive(client: TestClient) -> None:
    assert events(
        client, "changeStartDate=2019-10-09T12:52:24.770&changeEndDate=2019-10-09T23:44:17.243"
    ) == [
        "Reanalysis",
        "CVE Modified",
    ]
    assert (
        events(
            client, "changeStartDate=2019-10-09T12:52:24.771&changeEndDate=2019-10-09T23:44:17.242"
        )
        == []
    )
    # 13:52:24.770+01:00 is 12:52:24.770 UTC.
    assert events(
        client, "changeStartDate=2019-10-09T13:52:24.770%2B01:00&changeEndDate=2019-10-10T00:00:00Z"
    ) == [
        "Reanalysis",
        "CVE Modified",
    ]
    # nvdlib's own example query: a window with no rejection in it.
    assert (
        events(
            client,
            f"cveId={CVE}&changeStartDate=2021-08-04T00:00:00&changeEndDate=2021-10-23T00:00:00&eventName=CVE%20Rejected",
        )
        == []
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("foo=1", "Invalid parameter: foo"),
        ("lastModStartDate=2019-10-01T00:00:00", "Invalid parameter: lastModStartDate"),
        ("resultsPerPage=5001", "resultsPerPage parameter cannot exceed 5000"),
        ("startIndex=-1", "startIndex"),
        ("cveId=CVE-19-1010218", "Invalid cveId"),
        ("cveIds=CVE-2019-1010218,bogus", "Invalid cveIds"),
        ("cveIds=" + ",".join(f"CVE-2020-{n:04d}" for n in range(101)), "cveIds takes 1 to 100"),
        ("eventName=Bogus", "Invalid eventName"),
        ("eventName=", "eventName requires a value"),
        ("changeStartDate=2019-10-01T00:00:00", "Both changeStartDate and changeEndDate"),
        ("changeEndDate=2019-10-01T00:00:00", "Both changeStartDate and changeEndDate"),
        ("changeStartDate=2019-10-01&changeEndDate=2019-10-02T00:00:00", "Invalid ISO 8601"),
        (
            "changeStartDate=2019-01-01T00:00:00&changeEndDate=2019-05-01T00:00:01",
            "Date range cannot exceed 120 days",
        ),
    ],
)
def test_every_error_rule_answers_404_naming_the_parameter(
    client: TestClient, query: str, message: str
) -> None:
    assert message in error(client, query)


def test_exactly_120_days_is_allowed(client: TestClient) -> None:
    assert events(
        client, "changeStartDate=2019-07-01T00:00:00&changeEndDate=2019-10-29T00:00:00"
    ) == [
        "Initial Analysis",
        "Reanalysis",
        "CVE Modified",
    ]


def test_paging_trailing_slash_and_head(client: TestClient) -> None:
    paged = [events(client, f"cveId={CVE}&resultsPerPage=1&startIndex={i}") for i in range(5)]
    assert paged == [
        ["Initial Analysis"],
        ["Reanalysis"],
        ["CVE Modified"],
        ["Modified Analysis"],
        [],
    ]
    past = body(client, f"cveId={CVE}&startIndex=10")
    assert (past["totalResults"], past["startIndex"], past["resultsPerPage"]) == (4, 10, 0)
    plain = client.get(f"{HISTORY}?cveId={CVE}")
    assert client.get(f"{HISTORY}/?cveId={CVE}").json()["cveChanges"] == plain.json()["cveChanges"]
    head = client.head(f"{HISTORY}/?cveId={CVE}")
    assert (head.status_code, head.content) == (200, b"")
    assert int(head.headers["content-length"]) == len(plain.content)
