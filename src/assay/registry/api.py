"""GET of JSON documents from package registries and GitHub's API, kept in the cache.

npm's `/-/npm/v1/attestations/NAME@VERSION`, PyPI's Integrity API and GitHub's
attestations API are plain HTTPS GETs: bounded, retried with backoff on 429 and 5xx,
failing with a `RegistryError` that names the URL. Each answer is kept in the cache
under its digest (and the URL it answered), so `offline=True` gives the same answer
without the network, or an error saying it was never fetched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from assay.errors import InputError, RegistryError
from assay.registry.cache import Cache
from assay.registry.client import (
    MAX_BACKOFF,
    RequestLog,
    _retry_after,
    _retryable,
    _secure_url,
    bounded_chunks,
)

if TYPE_CHECKING:
    import httpx

MAX_DOCUMENT_BYTES: Final = 16 * 1024 * 1024
_NEXT: Final = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class ApiClient:
    def __init__(
        self,
        *,
        cache: Cache | None = None,
        offline: bool = False,
        timeout: float = 30.0,
        retries: int = 3,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cache = cache
        self.offline = offline
        self._timeout = timeout
        self._retries = retries
        self._headers = dict(headers or {})
        self._transport = transport
        self._sleep = sleep
        self._http: httpx.Client | None = None
        self.log = RequestLog()

    def close(self) -> None:
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def get(
        self, url: str, *, limit: int = MAX_DOCUMENT_BYTES, headers: dict[str, str] | None = None
    ) -> tuple[bytes, str]:
        """(body, next page URL or "") of a GET, from the network or (offline) the cache.
        `headers` go with this request only (a token for one host, never for others)."""
        key = f"GET {url}"
        if self.offline:
            return self._cached(key, url)
        body, next_url = self._fetch(url, limit, headers or {})
        if self.cache is not None:
            self.cache.put_ref(key, body, "application/json", next_url)
        return body, next_url

    def _cached(self, key: str, url: str) -> tuple[bytes, str]:
        """(body, next page URL) of a GET the cache holds: offline, nothing else is asked."""
        if self.cache is None:
            raise InputError("--offline", "expected a cache to read from")
        found = self.cache.get_ref_record(key)
        if found is None:
            raise InputError(
                str(self.cache.root),
                f"offline: {url} is not in the cache (fetch it first: `assay fetch`, or run online)",
            )
        return found[0], found[2]

    def _client(self) -> httpx.Client:
        import httpx

        if self._http is None:
            from assay.registry.client import default_tls_context

            self._http = httpx.Client(
                timeout=self._timeout,
                transport=self._transport,
                verify=default_tls_context(),
                follow_redirects=True,  # httpx drops Authorization when the origin changes
                trust_env=False,
                headers=self._headers,
            )
        return self._http

    def _fetch(self, url: str, limit: int, headers: dict[str, str]) -> tuple[bytes, str]:
        import httpx

        if not _secure_url(url):
            raise RegistryError(url, "expected an https:// URL (plain HTTP only on loopback)")
        client = self._client()
        error = "no answer"
        for attempt in range(self._retries + 1):
            start = time.perf_counter()
            try:
                with client.stream("GET", url, headers=headers) as response:
                    status = response.status_code
                    self.log.entries.append(("GET", url, status, time.perf_counter() - start))
                    if _retryable(status) and attempt < self._retries:
                        error = f"HTTP {status}"
                        delay = _retry_after(response.headers.get("retry-after"), attempt)
                        self._sleep(min(MAX_BACKOFF, delay))
                        continue
                    return _answer(response, url, limit)
            except httpx.TimeoutException:
                error = "timed out"
            except httpx.HTTPError as failure:
                error = f"cannot connect ({type(failure).__name__})"
            if attempt < self._retries:
                self._sleep(_retry_after(None, attempt))
        raise RegistryError(url, error)


_STATUS_WORDS: Final = {401: " unauthorised", 403: " forbidden", 404: " not found"}


def _answer(response: Any, url: str, limit: int) -> tuple[bytes, str]:
    """The body and the next page's link of a final answer; any status but 200 refused."""
    status = response.status_code
    if _retryable(status):
        raise RegistryError(url, f"HTTP {status}")
    if status != 200:
        raise RegistryError(url, f"HTTP {status}{_STATUS_WORDS.get(status, '')}")
    return _read(response, url, limit), _next_link(response.headers.get("link", ""))


def _read(response: Any, url: str, limit: int) -> bytes:
    return b"".join(bounded_chunks(response, url, limit))


def _next_link(header: str) -> str:
    match = _NEXT.search(header)
    return match.group(1) if match else ""
