"""Pacing, time-outs, retries and errors against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
import pytest

from assay.errors import ClientError
from assay.nvd.client import (
    AsyncNvdClient,
    NvdApiError,
    NvdClient,
    NvdRateLimitError,
    NvdResponseError,
    NvdTimeoutError,
    NvdTransportError,
)

from .conftest import (
    HANG,
    RESET,
    LoopbackServer,
    asset_bytes,
    asset_json,
    page_server,
    respond,
    trickle,
    truncated,
)

T = TypeVar("T")

CVE_BODY = asset_bytes("cves-1999.json.gz")


def client(server: LoopbackServer, **options: Any) -> NvdClient:
    settings: dict[str, Any] = {"wait_time": 0, "request_timeout": 2000, "backoff": 0.01}
    settings.update(options)
    return NvdClient(base_url=server.base_url, **settings)


def run(factory: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(factory())  # type: ignore[arg-type]


def ok(body: bytes = CVE_BODY) -> Any:
    return respond(200, body)


# --- what goes on the wire -------------------------------------------------------------


def test_request_line_headers_and_query(server: LoopbackServer) -> None:
    server.script.append(ok())
    with client(server, api_key="0e8a4b7c-key") as nvd:
        nvd.get_cves(
            cve_id="CVE-1999-0095",
            has_kev=True,
            keyword_search="buffer overflow",
            pub_start_date="2022-01-01T00:00:00",
            pub_end_date="2022-02-01T01:00:00+01:00",
        )
    (request,) = server.requests
    assert request.method == "GET"
    assert request.path == "/rest/json/cves/2.0"
    assert request.raw_query == (
        "cveId=CVE-1999-0095&hasKev&keywordSearch=buffer%20overflow"
        "&pubStartDate=2022-01-01T00:00:00.000%2B00:00"
        "&pubEndDate=2022-02-01T00:00:00.000%2B00:00"
    )
    assert request.query["pubStartDate"] == "2022-01-01T00:00:00.000+00:00"
    assert request.headers["apikey"] == "0e8a4b7c-key"
    assert request.headers["accept"] == "application/json"


def test_no_api_key_header_without_a_key(server: LoopbackServer) -> None:
    server.script.append(ok())
    with client(server) as nvd:
        nvd.get_cves()
    assert "apikey" not in server.requests[0].headers
    assert server.requests[0].raw_query == ""


@pytest.mark.parametrize(
    ("method", "path", "asset"),
    [
        ("get_cve_history", "/rest/json/cvehistory/2.0", "cvehistory-CVE-2019-1010218.json.gz"),
        ("get_cpe_match", "/rest/json/cpematch/2.0", "nvdgo-cpematch-CVE-2022-32223.json.gz"),
    ],
)
def test_other_endpoints(server: LoopbackServer, method: str, path: str, asset: str) -> None:
    server.script.append(ok(asset_bytes(asset)))
    with client(server) as nvd:
        result = getattr(nvd, method)(cve_id="CVE-2019-1010218")
    assert server.requests[0].path == path
    assert result.total_results == len(result.records()) > 0


def test_invalid_arguments_send_nothing(server: LoopbackServer) -> None:
    with client(server) as nvd, pytest.raises(ValueError, match="cpe_name"):
        nvd.get_cves(is_vulnerable=True)
    assert server.requests == []


# --- errors ----------------------------------------------------------------------------


def test_404_raises_with_nvd_message_header_and_is_not_retried(server: LoopbackServer) -> None:
    server.script.append(respond(404, message="Invalid apiKey."))
    with client(server) as nvd, pytest.raises(NvdApiError) as caught:
        nvd.get_cves()
    assert caught.value.status == 404
    assert caught.value.message == "Invalid apiKey."
    assert "Invalid apiKey." in str(caught.value)
    assert isinstance(caught.value, ClientError)
    assert len(server.requests) == 1


def test_non_json_success_body_is_a_response_error_after_retries(
    server: LoopbackServer,
) -> None:
    server.fallback = lambda _r: respond(200, b"<html>maintenance</html>")
    with client(server, max_retries=1) as nvd, pytest.raises(NvdResponseError):
        nvd.get_cves()
    assert len(server.requests) == 2


# --- retries ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [403, 429, 500, 502, 503, 504])
def test_retryable_status_then_success(server: LoopbackServer, status: int) -> None:
    server.script.extend([respond(status), respond(status), ok()])
    with client(server) as nvd:
        result = nvd.get_cves()
    assert len(result.vulnerabilities) == 200
    assert len(server.requests) == 3


def test_gives_up_after_max_retries(server: LoopbackServer) -> None:
    server.fallback = lambda _r: respond(503, message="Service Unavailable")
    with client(server, max_retries=3) as nvd, pytest.raises(NvdApiError) as caught:
        nvd.get_cves()
    assert caught.value.status == 503
    assert len(server.requests) == 4


def test_rate_limit_error_after_403s(server: LoopbackServer) -> None:
    server.fallback = lambda _r: respond(403)
    with client(server, max_retries=2) as nvd, pytest.raises(NvdRateLimitError) as caught:
        nvd.get_cves()
    assert caught.value.status == 403
    assert len(server.requests) == 3


def test_zero_retries(server: LoopbackServer) -> None:
    server.script.extend([respond(503), ok()])
    with client(server, max_retries=0) as nvd, pytest.raises(NvdApiError):
        nvd.get_cves()
    assert len(server.requests) == 1


def test_exponential_back_off(server: LoopbackServer) -> None:
    server.script.extend([respond(503), respond(503), respond(503), ok()])
    with client(server, backoff=0.1) as nvd:
        nvd.get_cves()
    arrivals = [r.arrived for r in server.requests]
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert gaps[0] >= 0.095
    assert gaps[1] >= 0.195
    assert gaps[2] >= 0.395


def test_retry_after_is_honoured(server: LoopbackServer) -> None:
    server.script.extend([respond(429, retry_after="1"), ok()])
    with client(server, backoff=0.01) as nvd:
        nvd.get_cves()
    first, second = server.requests
    assert second.arrived - first.arrived >= 0.95


def test_retry_after_is_capped(server: LoopbackServer) -> None:
    server.script.extend([respond(503, retry_after="3600"), ok()])
    with client(server, backoff=0.01, max_retry_after=0.05) as nvd:
        started = time.monotonic()
        nvd.get_cves()
    assert time.monotonic() - started < 2


def test_hang_times_out_then_retry_succeeds(server: LoopbackServer) -> None:
    server.script.extend([HANG, ok()])
    with client(server, request_timeout=300) as nvd:
        started = time.monotonic()
        result = nvd.get_cves()
    assert len(result.vulnerabilities) == 200
    assert 0.29 <= time.monotonic() - started < 3
    assert len(server.requests) == 2


def test_hang_every_time_raises_timeout(server: LoopbackServer) -> None:
    server.fallback = lambda _r: HANG
    nvd = client(server, request_timeout=200, max_retries=1)
    with nvd, pytest.raises(NvdTimeoutError) as caught:
        nvd.get_cves()
    assert isinstance(caught.value, NvdTransportError)
    assert len(server.requests) == 2


def test_a_body_trickling_past_the_time_out_times_out(server: LoopbackServer) -> None:
    # every piece arrives well within the time-out, but the whole answer does not
    server.fallback = lambda _r: trickle(CVE_BODY, pieces=6, pause=0.1)
    nvd = client(server, request_timeout=350, max_retries=0)
    started = time.monotonic()
    with nvd, pytest.raises(NvdTimeoutError):
        nvd.get_cves()
    assert time.monotonic() - started < 1.5


def test_async_body_trickling_past_the_time_out_times_out(server: LoopbackServer) -> None:
    server.fallback = lambda _r: trickle(CVE_BODY, pieces=6, pause=0.1)

    async def go() -> None:
        async with aclient(server, request_timeout=350, max_retries=0) as nvd:
            await nvd.get_cves()

    with pytest.raises(NvdTimeoutError):
        run(go)


def test_a_slow_body_within_the_time_out_is_fine(server: LoopbackServer) -> None:
    server.fallback = lambda _r: trickle(CVE_BODY, pieces=3, pause=0.05)
    with client(server, request_timeout=2000) as nvd:
        assert len(nvd.get_cves().vulnerabilities) == 200


def test_connection_reset_then_success(server: LoopbackServer) -> None:
    server.script.extend([RESET, RESET, ok()])
    with client(server) as nvd:
        assert len(nvd.get_cves().vulnerabilities) == 200
    assert len(server.requests) == 3


def test_connection_reset_every_time(server: LoopbackServer) -> None:
    server.fallback = lambda _r: RESET
    with client(server, max_retries=2) as nvd, pytest.raises(NvdTransportError) as caught:
        nvd.get_cves()
    assert caught.value.__cause__ is not None
    assert len(server.requests) == 3


def test_truncated_body_is_retried(server: LoopbackServer) -> None:
    server.script.extend([truncated(CVE_BODY), ok()])
    with client(server) as nvd:
        assert len(nvd.get_cves().vulnerabilities) == 200
    assert len(server.requests) == 2


def test_cut_json_with_matching_length_is_retried(server: LoopbackServer) -> None:
    server.script.extend([respond(200, CVE_BODY[:5000]), ok()])
    with client(server) as nvd:
        assert len(nvd.get_cves().vulnerabilities) == 200
    assert len(server.requests) == 2


def test_connection_refused(server: LoopbackServer) -> None:
    url = server.base_url
    server.stop()
    nvd = NvdClient(wait_time=0, max_retries=1, backoff=0.01, base_url=url)
    with nvd, pytest.raises(NvdTransportError):
        nvd.get_cves()


# --- pacing ----------------------------------------------------------------------------


def test_waits_wait_time_after_the_previous_call_finished(server: LoopbackServer) -> None:
    server.fallback = lambda _r: ok()
    with client(server, wait_time=300) as nvd:
        started = time.monotonic()
        nvd.get_cves()
        finished = time.monotonic()
        nvd.get_cves()
    first, second = server.requests
    assert first.arrived - started < 0.25  # no pause before the first call
    assert second.arrived - first.arrived >= 0.3
    # Measured from after the call returned, so a loaded machine may eat into it a little.
    assert second.arrived - finished >= 0.2


def test_pacing_applies_between_retries(server: LoopbackServer) -> None:
    server.script.extend([respond(503), ok()])
    with client(server, wait_time=250, backoff=0.01) as nvd:
        nvd.get_cves()
    first, second = server.requests
    assert second.arrived - first.arrived >= 0.24


# --- paging ----------------------------------------------------------------------------


def test_get_all_steps_start_index_by_records_received(server: LoopbackServer) -> None:
    doc = asset_json("cves-1999.json.gz")
    server.fallback = page_server(doc, "vulnerabilities", cap=37)
    with client(server) as nvd:
        result = nvd.get_all_cves(no_rejected=True)
    ids = [item.cve.id for item in result.vulnerabilities]
    assert ids == [item["cve"]["id"] for item in doc["vulnerabilities"]]
    starts = [int(r.query["startIndex"]) for r in server.requests]
    assert starts == list(range(0, 200, 37))
    assert {r.query["resultsPerPage"] for r in server.requests} == {"2000"}
    assert all("noRejected" in r.query for r in server.requests)
    assert result.total_results == 200
    assert result.results_per_page == 200


def test_get_all_survives_faults_mid_way(server: LoopbackServer) -> None:
    doc = asset_json("cves-1999.json.gz")
    serve = page_server(doc, "vulnerabilities", cap=50)
    calls = {"n": 0}

    def flaky(request: Any) -> Any:
        calls["n"] += 1
        if calls["n"] in (2, 4):
            return respond(403)
        if calls["n"] == 5:
            return RESET
        if calls["n"] == 6:
            return truncated(CVE_BODY)
        return serve(request)

    server.fallback = flaky
    with client(server) as nvd:
        ids = [cve.id for cve in nvd.iter_cves()]
    assert ids == [item["cve"]["id"] for item in doc["vulnerabilities"]]


@pytest.mark.parametrize(
    ("method", "asset", "list_key", "max_page"),
    [
        ("get_all_cve_history", "cvehistory-CVE-2019-1010218.json.gz", "cveChanges", "5000"),
        ("get_all_cpe_match", "nvdgo-cpematch-CVE-2022-32223.json.gz", "matchStrings", "500"),
        ("get_all_cpes", "cpes-2023.json.gz", "products", "10000"),
    ],
)
def test_get_all_other_endpoints(
    server: LoopbackServer, method: str, asset: str, list_key: str, max_page: str
) -> None:
    doc = asset_json(asset)
    doc[list_key] = doc[list_key][:23]
    server.fallback = page_server(doc, list_key, cap=5)
    with client(server) as nvd:
        result = getattr(nvd, method)()
    assert [r.raw for r in result.records()] == [next(iter(i.values())) for i in doc[list_key]]
    assert {r.query["resultsPerPage"] for r in server.requests} == {max_page}
    assert len(server.requests) == -(-len(doc[list_key]) // 5)


def test_get_all_refuses_paging_arguments(server: LoopbackServer) -> None:
    with client(server) as nvd, pytest.raises(TypeError):
        nvd.get_all_cves(start_index=5)  # type: ignore[call-arg]


def test_iterating_with_empty_pages_is_refused(server: LoopbackServer) -> None:
    with client(server) as nvd, pytest.raises(ValueError, match="results_per_page"):
        nvd.iter_cve_pages(results_per_page=0)
    assert server.requests == []


# --- async -----------------------------------------------------------------------------


def aclient(server: LoopbackServer, **options: Any) -> AsyncNvdClient:
    settings: dict[str, Any] = {"wait_time": 0, "request_timeout": 2000, "backoff": 0.01}
    settings.update(options)
    return AsyncNvdClient(base_url=server.base_url, **settings)


def test_async_get_and_headers(server: LoopbackServer) -> None:
    server.script.append(ok())

    async def go() -> int:
        async with aclient(server, api_key="k") as nvd:
            result = await nvd.get_cves(cvss_v3_severity="critical")
            return len(result.vulnerabilities)

    assert run(go) == 200
    assert server.requests[0].raw_query == "cvssV3Severity=CRITICAL"
    assert server.requests[0].headers["apikey"] == "k"


def test_async_retries_faults(server: LoopbackServer) -> None:
    server.script.extend([respond(403), RESET, truncated(CVE_BODY), HANG, ok()])

    async def go() -> int:
        async with aclient(server, request_timeout=300, max_retries=4) as nvd:
            return len((await nvd.get_cves()).vulnerabilities)

    assert run(go) == 200
    assert len(server.requests) == 5


def test_async_404_and_timeout(server: LoopbackServer) -> None:
    server.script.append(respond(404, message="Invalid parameter: foo"))

    async def not_found() -> None:
        async with aclient(server) as nvd:
            await nvd.get_cpes()

    with pytest.raises(NvdApiError, match="Invalid parameter: foo"):
        run(not_found)

    server.fallback = lambda _r: HANG

    async def hang() -> None:
        async with aclient(server, request_timeout=200, max_retries=1) as nvd:
            await nvd.get_cpes()

    with pytest.raises(NvdTimeoutError):
        run(hang)


def test_async_pacing_and_paging(server: LoopbackServer) -> None:
    doc = asset_json("cves-1999.json.gz")
    server.fallback = page_server(doc, "vulnerabilities", cap=80)

    async def go() -> list[str]:
        async with aclient(server, wait_time=150) as nvd:
            all_ids = [item.cve.id for item in (await nvd.get_all_cves()).vulnerabilities]
            streamed = [cve.id async for cve in nvd.iter_cves(start_index=10)]
            assert streamed == all_ids[10:]
            return all_ids

    assert run(go) == [item["cve"]["id"] for item in doc["vulnerabilities"]]
    arrivals = [r.arrived for r in server.requests]
    assert all(b - a >= 0.14 for a, b in itertools.pairwise(arrivals))


def test_body_bytes_are_kept_exactly(server: LoopbackServer) -> None:
    body = orjson.dumps(asset_json("cves-1999.json.gz")).replace(b"/", b"\\/")
    server.script.append(ok(body))
    with client(server) as nvd:
        cve = nvd.get_cves().vulnerabilities[0].cve
    assert bytes(cve.raw_json) in body
    assert b"\\/" in bytes(cve.raw_json)
