"""The blocking NVD API 2.0 client, on `httpx.Client`."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

import httpx

from assay.nvd.client._base import (
    CPEMATCH,
    CPES,
    CVEHISTORY,
    CVES,
    MAX_REDIRECTS,
    SOURCES,
    Endpoint,
    Failed,
    Pager,
    SettingsView,
    concat,
    filters_only,
    pager_for,
    query_for,
    settle,
)
from assay.nvd.client._errors import (
    NvdRedirectError,
    NvdTimeoutError,
    NvdTransportError,
)
from assay.nvd.client._models import (
    Change,
    Cpe,
    CpeMatchResult,
    CpeResult,
    Cve,
    CveHistoryResult,
    CveResult,
    MatchString,
    Result,
    Source,
    SourceResult,
)
from assay.nvd.client._params import (
    CpeMatchFilters,
    CpeMatchParams,
    CpesFilters,
    CpesParams,
    CveHistoryFilters,
    CveHistoryParams,
    CvesFilters,
    CvesParams,
    Query,
    SourcesFilters,
    SourcesParams,
)
from assay.urls import redact_url

__all__ = ["NvdClient"]

R = TypeVar("R", bound=Result)

_log = logging.getLogger("assay.nvd.client")


class NvdClient(SettingsView[httpx.BaseTransport]):
    """NVD API 2.0 client with the reference client's interface (`nvd-api` 0.9.1).

    ```python
    with NvdClient(api_key=key) as nvd:
        page = nvd.get_cves(cve_id="CVE-2021-44228")
        for cve in nvd.iter_cves(has_kev=True):
            print(cve.id, cve.raw["lastModified"])
    ```

    `wait_time` (ms) is the pause after the previous request finished, `request_timeout`
    (ms) the time allowed for one complete answer, `max_retries` how often a throttled
    (403, 429), failing (5xx), timed-out or broken request is retried with exponential
    back-off (`backoff` seconds, doubling, at most `max_backoff`) or as `Retry-After`
    asks. An answer's body is capped at `max_wire_bytes` as received and
    `max_decoded_bytes` once decoded (`NvdResponseTooLarge`, not retried); redirects are
    followed within the base URL's origin only (`NvdRedirectError`). `transport` injects an `httpx.BaseTransport` (tests, proxies).
    """

    def _open(self, transport: httpx.BaseTransport | None) -> None:
        self._http = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(self._settings.timeout_seconds),
            follow_redirects=False,  # followed in `_send`, within the origin only
        )
        self._lock = threading.Lock()

    # --- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- one page -----------------------------------------------------------------------

    def get_cves(self, **params: Unpack[CvesParams]) -> CveResult:
        """One page of CVE records (`GET /cves/2.0`)."""
        return self._request(CVES, query_for(CVES, params))

    def get_cve_history(self, **params: Unpack[CveHistoryParams]) -> CveHistoryResult:
        """One page of CVE change events (`GET /cvehistory/2.0`)."""
        return self._request(CVEHISTORY, query_for(CVEHISTORY, params))

    def get_cpes(self, **params: Unpack[CpesParams]) -> CpeResult:
        """One page of CPE records (`GET /cpes/2.0`)."""
        return self._request(CPES, query_for(CPES, params))

    def get_cpe_match(self, **params: Unpack[CpeMatchParams]) -> CpeMatchResult:
        """One page of match criteria (`GET /cpematch/2.0`)."""
        return self._request(CPEMATCH, query_for(CPEMATCH, params))

    def get_sources(self, **params: Unpack[SourcesParams]) -> SourceResult:
        """One page of CVE sources, the assigners (`GET /source/2.0`)."""
        return self._request(SOURCES, query_for(SOURCES, params))

    # --- every page, concatenated -------------------------------------------------------

    def get_all_cves(self, **params: Unpack[CvesFilters]) -> CveResult:
        """Every matching CVE record, fetched with 2000-record pages."""
        filters_only("get_all_cves", params)
        return concat(CVES, list(self._iter_pages(CVES, params)))

    def get_all_cve_history(self, **params: Unpack[CveHistoryFilters]) -> CveHistoryResult:
        """Every matching change event, fetched with 5000-record pages."""
        filters_only("get_all_cve_history", params)
        return concat(CVEHISTORY, list(self._iter_pages(CVEHISTORY, params)))

    def get_all_cpes(self, **params: Unpack[CpesFilters]) -> CpeResult:
        """Every matching CPE record, fetched with 10000-record pages."""
        filters_only("get_all_cpes", params)
        return concat(CPES, list(self._iter_pages(CPES, params)))

    def get_all_cpe_match(self, **params: Unpack[CpeMatchFilters]) -> CpeMatchResult:
        """Every matching match criteria record, fetched with 500-record pages."""
        filters_only("get_all_cpe_match", params)
        return concat(CPEMATCH, list(self._iter_pages(CPEMATCH, params)))

    def get_all_sources(self, **params: Unpack[SourcesFilters]) -> SourceResult:
        """Every matching source, fetched with 1000-record pages."""
        filters_only("get_all_sources", params)
        return concat(SOURCES, list(self._iter_pages(SOURCES, params)))

    # --- streaming ----------------------------------------------------------------------

    def iter_cve_pages(self, **params: Unpack[CvesParams]) -> Iterator[CveResult]:
        """Pages of CVE records, fetched one at a time, from `start_index` to the end."""
        return self._iter_pages(CVES, params)

    def iter_cve_history_pages(
        self, **params: Unpack[CveHistoryParams]
    ) -> Iterator[CveHistoryResult]:
        """Pages of change events, fetched one at a time."""
        return self._iter_pages(CVEHISTORY, params)

    def iter_cpe_pages(self, **params: Unpack[CpesParams]) -> Iterator[CpeResult]:
        """Pages of CPE records, fetched one at a time."""
        return self._iter_pages(CPES, params)

    def iter_cpe_match_pages(self, **params: Unpack[CpeMatchParams]) -> Iterator[CpeMatchResult]:
        """Pages of match criteria, fetched one at a time."""
        return self._iter_pages(CPEMATCH, params)

    def iter_source_pages(self, **params: Unpack[SourcesParams]) -> Iterator[SourceResult]:
        """Pages of sources, fetched one at a time."""
        return self._iter_pages(SOURCES, params)

    def iter_cves(self, **params: Unpack[CvesParams]) -> Iterator[Cve]:
        """CVE records one by one; only one page is held at a time."""
        return _records(self._iter_pages(CVES, params))

    def iter_cve_history(self, **params: Unpack[CveHistoryParams]) -> Iterator[Change]:
        """Change events one by one; only one page is held at a time."""
        return _records(self._iter_pages(CVEHISTORY, params))

    def iter_cpes(self, **params: Unpack[CpesParams]) -> Iterator[Cpe]:
        """CPE records one by one; only one page is held at a time."""
        return _records(self._iter_pages(CPES, params))

    def iter_cpe_match(self, **params: Unpack[CpeMatchParams]) -> Iterator[MatchString]:
        """Match criteria one by one; only one page is held at a time."""
        return _records(self._iter_pages(CPEMATCH, params))

    def iter_sources(self, **params: Unpack[SourcesParams]) -> Iterator[Source]:
        """Sources one by one; only one page is held at a time."""
        return _records(self._iter_pages(SOURCES, params))

    # --- machinery ----------------------------------------------------------------------

    def _iter_pages(self, endpoint: Endpoint[R], params: Mapping[str, Any]) -> Iterator[R]:
        pager = pager_for(endpoint, params)  # validates before the first request
        return self._pages(endpoint, pager)

    def _pages(self, endpoint: Endpoint[R], pager: Pager) -> Iterator[R]:
        while not pager.done:
            page = self._request(endpoint, pager.next_query())
            pager.advance(len(endpoint.items(page)), page.total_results)
            yield page

    def _request(self, endpoint: Endpoint[R], query: Query) -> R:
        url = self._settings.url(endpoint, query)
        _log.debug("GET %s", redact_url(url))
        attempt = 0
        while True:
            with self._lock:
                time.sleep(self._pause())
                try:
                    outcome = settle(endpoint, self._send(url), url, self._retry)
                except NvdTransportError as exc:
                    outcome = Failed(exc)
                finally:
                    self._last_finished = time.monotonic()
            if not isinstance(outcome, Failed):
                return outcome
            time.sleep(self._next_delay(attempt, outcome))
            attempt += 1

    def _send(self, url: str) -> tuple[int, httpx.Headers, bytearray]:
        """One GET with a deadline on the whole answer, following redirects within the
        origin, reading the body within the caps; httpx errors are translated here."""
        timeout = self._settings.timeout_seconds
        deadline = time.monotonic() + timeout
        target = url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                with self._http.stream("GET", target, headers=self._headers) as response:
                    following = self._settings.redirect(
                        target, response.status_code, response.headers
                    )
                    if following is None:
                        return self._read(response, target, deadline, url)
                target = following
        except httpx.TimeoutException as exc:
            raise NvdTimeoutError(f"no complete answer within {timeout:g} s", url) from exc
        except httpx.HTTPError as exc:
            raise NvdTransportError(f"{type(exc).__name__}: {exc}", url) from exc
        raise NvdRedirectError(f"more than {MAX_REDIRECTS} redirects", url)

    def _read(
        self, response: httpx.Response, target: str, deadline: float, url: str
    ) -> tuple[int, httpx.Headers, bytearray]:
        """The answer to `target` (redirected from `url`): status, headers and body, read
        within the caps and by `deadline`."""
        status, headers = response.status_code, response.headers
        if response.is_stream_consumed:  # held in memory, decoded (MockTransport)
            return status, headers, self._settings.read_decoded(target, headers, response.content)
        reader = self._settings.body_reader(target, headers)
        for chunk in response.iter_raw():
            reader.feed(chunk)
            if time.monotonic() > deadline:
                timeout = self._settings.timeout_seconds
                raise NvdTimeoutError(f"no complete answer within {timeout:g} s", url)
        return status, headers, reader.finish()


def _records(pages: Iterator[R]) -> Iterator[Any]:
    for page in pages:
        yield from page.records()
