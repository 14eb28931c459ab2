"""The client against the real assay app: in-process (ASGI) and over loopback (uvicorn)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from starlette.testclient import TestClient
from tests.live import serving

from assay.nvd.client import AsyncNvdClient, NvdApiError, NvdClient, build_query, encode_query
from assay.nvd.server.app import create_app
from assay.nvd.storage import Store, open_store

from .test_properties import cves_kwargs


@pytest.fixture(scope="module")
def base_url(sample_store_url: str) -> Iterator[str]:
    with serving(sample_store_url) as root:
        yield f"{root}/rest/json"


@pytest.fixture(scope="module")
def every_record(sample_store_url: str) -> list[dict[str, object]]:
    """Every CVE the app serves, fetched without the client."""
    store = open_store(sample_store_url)
    try:
        with TestClient(create_app(store)) as http:
            response = http.get("/rest/json/cves/2.0", params={"resultsPerPage": "2000"})
            body = orjson.loads(response.content)
    finally:
        store.close()
    assert body["totalResults"] == len(body["vulnerabilities"]) > 0
    return [item["cve"] for item in body["vulnerabilities"]]


def test_get_all_cves_returns_every_record_byte_for_byte(
    base_url: str, every_record: list[dict[str, object]]
) -> None:
    with NvdClient(wait_time=0, base_url=base_url) as nvd:
        result = nvd.get_all_cves()
    assert result.total_results == len(every_record)
    assert [item.cve.raw for item in result.vulnerabilities] == every_record


def test_small_pages_partition_the_records(
    base_url: str, every_record: list[dict[str, object]]
) -> None:
    with NvdClient(wait_time=0, base_url=base_url) as nvd:
        ids = [cve.id for cve in nvd.iter_cves(results_per_page=7)]
        pages = list(nvd.iter_cve_pages(results_per_page=7, start_index=3))
    assert ids == [record["id"] for record in every_record]
    assert [p.start_index for p in pages] == list(range(3, len(every_record), 7))


def test_filters_reach_the_app(base_url: str, every_record: list[dict[str, object]]) -> None:
    target = str(every_record[0]["id"])
    with NvdClient(wait_time=0, base_url=base_url) as nvd:
        one = nvd.get_cves(cve_id=target.lower())
        none_rejected = nvd.get_all_cves(no_rejected=True)
        dated = nvd.get_all_cves(
            last_mod_start_date="2000-01-01T00:00:00Z", last_mod_end_date="2000-04-01T00:00:00Z"
        )
    assert [item.cve.id for item in one.vulnerabilities] == [target]
    assert all(item.cve.vuln_status != "Rejected" for item in none_rejected.vulnerabilities)
    assert dated.total_results == 0


def test_app_errors_surface_as_nvd_api_errors(base_url: str) -> None:
    nvd = NvdClient(wait_time=0, base_url=base_url, max_retries=0)
    with nvd, pytest.raises(NvdApiError) as caught:
        nvd.get_cves(keyword_search="overflow " * 3000)  # a query string the app refuses
    assert caught.value.status == 404
    assert caught.value.message  # the reason, from the `message` header


def test_async_client_in_process(
    sample_store_url: str, every_record: list[dict[str, object]]
) -> None:
    store = open_store(sample_store_url)

    async def go() -> list[str]:
        transport = httpx.ASGITransport(app=create_app(store))
        async with AsyncNvdClient(
            wait_time=0, base_url="http://assay.test/rest/json", transport=transport
        ) as nvd:
            result = await nvd.get_all_cves()
            streamed = [cve.id async for cve in nvd.iter_cves(results_per_page=5)]
            assert streamed == [item.cve.id for item in result.vulnerabilities]
            return streamed

    try:
        assert asyncio.run(go()) == [record["id"] for record in every_record]
    finally:
        store.close()


@pytest.fixture(scope="module")
def app_store(sample_store_url: str) -> Iterator[Store]:
    store = open_store(sample_store_url)
    try:
        yield store
    finally:
        store.close()


# The app runs only inside each example, never while Hypothesis draws the next one: a
# TestClient keeps an event-loop thread alive, and Hypothesis takes any use of the global
# `random` by another thread during generation for `random` used inside a strategy
# (a deprecation that newer Hypothesis releases turn into an error).
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kwargs=cves_kwargs())
def test_the_app_accepts_every_query_the_client_sends(
    app_store: Store, kwargs: dict[str, Any]
) -> None:
    query = encode_query(build_query("cves", kwargs))
    with TestClient(create_app(app_store)) as http:
        response = http.get(f"/rest/json/cves/2.0?{query}")
    assert response.status_code == 200, (query, response.headers.get("message"))
