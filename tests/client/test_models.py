"""Parsing real NVD response bodies into typed, lossless results."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import orjson
import pytest

from assay.nvd.client import (
    Cve,
    NvdResponseError,
    parse_cpe_match,
    parse_cpes,
    parse_cve_history,
    parse_cves,
)

from .conftest import asset_bytes, asset_json

CVE_ASSETS = ["cves-1999.json.gz", "search_full_page.json", "conversion-test.json"]


@pytest.mark.parametrize("name", CVE_ASSETS)
def test_cve_pages_parse_and_keep_every_record_losslessly(name: str) -> None:
    body = asset_bytes(name)
    doc = orjson.loads(body)
    result = parse_cves(body)
    assert result.total_results == doc["totalResults"]
    assert result.results_per_page == doc["resultsPerPage"]
    assert result.start_index == doc["startIndex"]
    assert result.format == "NVD_CVE"
    assert result.version == "2.0"
    assert result.timestamp == doc["timestamp"]
    assert [item.cve.raw for item in result.vulnerabilities] == [
        item["cve"] for item in doc["vulnerabilities"]
    ]
    for item, original in zip(result.vulnerabilities, doc["vulnerabilities"], strict=True):
        assert orjson.loads(bytes(item.cve.raw_json)) == original["cve"]
        assert item.cve.id == original["cve"]["id"]


def test_cve_fields_are_typed() -> None:
    cve = parse_cves(asset_bytes("conversion-test.json")).vulnerabilities[0].cve
    assert isinstance(cve, Cve)
    assert cve.id.startswith("CVE-")
    assert cve.published_at.tzinfo is UTC
    assert cve.last_modified_at >= cve.published_at
    assert cve.description
    assert cve.cve_tags == []
    assert cve.extra == {}
    metric = cve.metrics.cvss_metric_v31[0]
    assert metric.base_score is not None
    assert metric.severity in {"LOW", "MEDIUM", "HIGH", "CRITICAL"}
    assert metric.vector_string is not None
    assert metric.vector_string.startswith("CVSS:3.1/")


def test_v2_severity_outside_cvss_data_and_configurations() -> None:
    result = parse_cves(asset_bytes("cves-1999.json.gz"))
    cve = result.vulnerabilities[0].cve
    v2 = cve.metrics.cvss_metric_v2[0]
    assert v2.base_severity is not None
    assert v2.severity == cve.raw["metrics"]["cvssMetricV2"][0]["baseSeverity"]
    matches = [m for c in cve.configurations for n in c.nodes for m in n.cpe_match]
    assert matches
    assert all(m.criteria.startswith("cpe:2.3:") for m in matches)


def test_unknown_fields_are_kept_in_raw_and_extra() -> None:
    doc = asset_json("search_full_page.json")
    record = doc["vulnerabilities"][0]["cve"]
    record["futureField"] = {"nested": [1, 2]}
    record["metrics"]["cvssMetricV50"] = [{"source": "x", "type": "Primary", "cvssData": {}}]
    doc["someNewEnvelopeKey"] = True
    cve = parse_cves(orjson.dumps(doc)).vulnerabilities[0].cve
    assert cve.extra == {"futureField": {"nested": [1, 2]}}
    assert cve.raw == record
    assert cve.raw["metrics"]["cvssMetricV50"][0]["source"] == "x"


def test_escaped_slashes_survive_in_raw_json() -> None:
    doc = asset_json("search_full_page.json")
    body = orjson.dumps(doc).replace(b"/", b"\\/")
    cve = parse_cves(body).vulnerabilities[0].cve
    assert b"\\/" in bytes(cve.raw_json)
    assert cve.raw == doc["vulnerabilities"][0]["cve"]


def test_history_page() -> None:
    body = asset_bytes("cvehistory-CVE-2019-1010218.json.gz")
    result = parse_cve_history(body)
    assert result.format == "NVD_CVEHistory"
    changes = [item.change for item in result.cve_changes]
    assert [c.raw for c in changes] == [i["change"] for i in orjson.loads(body)["cveChanges"]]
    first = changes[0]
    assert first.cve_id == "CVE-2019-1010218"
    assert first.event_name == "Initial Analysis"
    assert first.created_at == datetime(2019, 7, 24, 16, 3, 52, 787000, tzinfo=UTC)
    assert {d.action for d in first.details} <= {"Added", "Changed", "Removed"}


def test_cpe_match_page() -> None:
    body = asset_bytes("nvdgo-cpematch-CVE-2022-32223.json.gz")
    result = parse_cpe_match(body)
    assert result.format == "NVD_CPEMatchString"
    assert result.total_results == 6
    first = result.match_strings[0].match_string
    assert first.match_criteria_id == "A2572D17-1DE6-457B-99CC-64AFD54487EA"
    assert first.criteria == "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
    assert first.status in {"Active", "Inactive"}
    assert first.matches
    assert first.raw == orjson.loads(body)["matchStrings"][0]["matchString"]


def test_cpe_page_of_ten_thousand() -> None:
    body = asset_bytes("cpes-2023.json.gz")
    result = parse_cpes(body)
    assert result.format == "NVD_CPE"
    assert len(result.products) == result.results_per_page == 10000
    assert result.total_results == 1121454
    cpe = result.products[0].cpe
    assert cpe.cpe_name.startswith("cpe:2.3:")
    assert cpe.titles
    assert cpe.raw == orjson.loads(body)["products"][0]["cpe"]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b"", "vulnerabilities"),
        (b"<html>", "vulnerabilities"),
        (b'{"resultsPerPage": 1}', "startIndex"),
        (
            b'{"resultsPerPage":1,"startIndex":0,"totalResults":1,"vulnerabilities":[{"cve":{}}]}',
            "vulnerabilities[0].cve",
        ),
        (
            b'{"resultsPerPage":1,"startIndex":0,"totalResults":1,"vulnerabilities":[{"x":1}]}',
            "vulnerabilities[0]",
        ),
        (b'{"resultsPerPage":"1","startIndex":0,"totalResults":1}', "resultsPerPage"),
    ],
)
def test_malformed_bodies_raise_response_error_with_location(body: bytes, where: str) -> None:
    with pytest.raises(NvdResponseError, match=r"\S") as caught:
        parse_cves(body)
    assert where in str(caught.value)


def _page_of_2000() -> bytes:
    records = []
    for name in CVE_ASSETS:
        records += asset_json(name)["vulnerabilities"]
    page = (records * (2000 // len(records) + 1))[:2000]
    return orjson.dumps(
        {
            "resultsPerPage": 2000,
            "startIndex": 0,
            "totalResults": 2000,
            "format": "NVD_CVE",
            "version": "2.0",
            "timestamp": "2024-07-12T14:25:09.140",
            "vulnerabilities": page,
        }
    )


def test_a_2000_record_page_parses_fast() -> None:
    body = _page_of_2000()
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        result = parse_cves(body)
        timings.append(time.perf_counter() - started)
    assert len(result.vulnerabilities) == 2000
    # Target 60 ms (measured ~35 ms); the bound leaves room for a loaded shared runner.
    assert min(timings) < 0.120, timings


def test_records_built_in_code_render_their_typed_fields_as_raw() -> None:
    cve = Cve(id="CVE-2000-0001", published="2000-01-01T00:00:00.000", last_modified="x")
    assert cve.raw["id"] == "CVE-2000-0001"
    assert cve.raw["lastModified"] == "x"
    assert cve.raw["metrics"] == {
        "cvssMetricV40": [],
        "cvssMetricV31": [],
        "cvssMetricV30": [],
        "cvssMetricV2": [],
    }
    assert "sourceIdentifier" not in cve.raw
    assert cve.extra == {}


def test_results_know_their_records() -> None:
    result = parse_cves(asset_bytes("search_full_page.json"))
    assert len(result) == 47
    assert [c.id for c in result.records()] == [i.cve.id for i in result.vulnerabilities]
