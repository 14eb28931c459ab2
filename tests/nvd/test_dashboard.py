"""`/rest/public/dashboard/statistics?reporttype=countsbystatus` in NVD's form, on both
stores, read as cve-bin-tool reads it."""

from __future__ import annotations

from collections import Counter

import pytest
from starlette.testclient import TestClient

from assay.nvd.cve_query import parse_cve_query

PATH = "/rest/public/dashboard/statistics"


def _stored_statuses(client: TestClient) -> Counter[str]:
    store = client.app.state.store  # type: ignore[attr-defined]
    import orjson

    page = store.search_cves(parse_cve_query([]))
    return Counter(orjson.loads(record).get("vulnStatus", "") for record in page.records)


def test_counts_by_status_in_nvds_form(products_client: TestClient) -> None:
    answer = products_client.get(PATH, params={"reporttype": "countsbystatus"})
    assert answer.status_code == 200
    entries = answer.json()["vulnsByStatusCounts"]
    assert entries[0]["name"] == "Total"
    for entry in entries:
        assert set(entry) == {"name", "count", "description", "startDate", "endDate"}
        assert isinstance(entry["count"], int)
    counts = {entry["name"]: entry["count"] for entry in entries}
    stored = _stored_statuses(products_client)
    assert counts["Total"] == sum(stored.values()) > 0
    unlabelled = stored.pop("", 0)  # records without a status count in Total only
    assert sum(count for name, count in counts.items() if name != "Total") == (
        counts["Total"] - unlabelled
    )
    for name, count in stored.items():
        assert counts[name] == count
    # What cve-bin-tool reads before it downloads.
    for name in ("Total", "Rejected", "Received", "Awaiting Analysis", "Modified"):
        assert name in counts


@pytest.mark.parametrize("query", [{}, {"reporttype": "countsbyscore"}, {"other": "1"}])
def test_other_reports_are_404s_with_a_message(
    products_client: TestClient, query: dict[str, str]
) -> None:
    answer = products_client.get(PATH, params=query)
    assert answer.status_code == 404
    assert answer.headers["message"]


def test_the_api_description_lists_it(products_client: TestClient) -> None:
    assert PATH in products_client.get("/openapi.json").json()["paths"]
