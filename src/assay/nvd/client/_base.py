"""What the sync and async clients share, free of I/O: endpoints, settings, paging.

`ClientSettings` holds the constructor options and turns a query into a URL and
headers; `classify` turns an HTTP answer into a result or an error; `Pager` steps
`startIndex` by the number of records each page actually held, so a service that
returns short pages never makes the client skip or repeat records.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Final, Generic, TypeVar
from urllib.parse import SplitResult, urljoin, urlsplit

import msgspec

from assay.nvd.client._body import (
    ACCEPT_ENCODING,
    MAX_DECODED_BYTES,
    MAX_WIRE_BYTES,
    BodyReader,
)
from assay.nvd.client._errors import (
    NvdApiError,
    NvdClientError,
    NvdRateLimitError,
    NvdRedirectError,
    NvdResponseError,
)
from assay.nvd.client._models import (
    Body,
    CpeMatchResult,
    CpeResult,
    CveHistoryResult,
    CveResult,
    Result,
    SourceResult,
    parse_cpe_match,
    parse_cpes,
    parse_cve_history,
    parse_cves,
    parse_sources,
)
from assay.nvd.client._params import (
    InvalidQuery,
    Query,
    build_query,
    encode_query,
)
from assay.nvd.client._retry import RetryPolicy
from assay.nvd.defaults import DEFAULT_BASE_URL
from assay.nvd.operations import OPERATIONS
from assay.nvd.operations import Operation as OperationFacts
from assay.urls import redact_url

__all__ = [
    "CPEMATCH",
    "CPES",
    "CVEHISTORY",
    "CVES",
    "DEFAULT_BASE_URL",
    "SOURCES",
    "ClientSettings",
    "Endpoint",
    "Pager",
    "concat",
]

USER_AGENT: Final = "assay-nvd-client/0.1"
MAX_REDIRECTS: Final = 5
REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

R = TypeVar("R", bound=Result)
T = TypeVar("T")

_log = logging.getLogger("assay.nvd.client")


@dataclass(frozen=True)
class Endpoint(Generic[R]):
    """One NVD API 2.0 operation (`assay.nvd.operations`) and how its pages are read."""

    facts: OperationFacts
    parse: Callable[[Body], R]
    result_type: type[R]

    @property
    def path(self) -> str:
        """The path below the base URL (`cves/2.0`)."""
        return self.facts.path.lstrip("/")

    def items(self, result: R) -> list[Any]:
        """The wrapped items of a page (`CveItem`, `ChangeItem`, ...)."""
        items: list[Any] = getattr(result, self.facts.result_attr)
        return items


CVES: Final = Endpoint(OPERATIONS["cves"], parse_cves, CveResult)
CVEHISTORY: Final = Endpoint(OPERATIONS["cvehistory"], parse_cve_history, CveHistoryResult)
CPES: Final = Endpoint(OPERATIONS["cpes"], parse_cpes, CpeResult)
CPEMATCH: Final = Endpoint(OPERATIONS["cpematch"], parse_cpe_match, CpeMatchResult)
SOURCES: Final = Endpoint(OPERATIONS["source"], parse_sources, SourceResult)

_PAGING: Final = ("results_per_page", "start_index")


@dataclass(frozen=True)
class ClientSettings:
    """Constructor options, validated, with the URL and header logic built on them: the
    reference client's five in its order, then assay's own by keyword."""

    wait_time: int
    request_timeout: int
    max_retries: int
    api_key: str | None
    base_url: str
    _: KW_ONLY
    backoff: float = 1.0
    max_backoff: float = 60.0
    max_retry_after: float = 300.0
    user_agent: str = USER_AGENT
    max_wire_bytes: int = MAX_WIRE_BYTES
    """Cap on one answer's body as received; past it the request fails."""
    max_decoded_bytes: int = MAX_DECODED_BYTES
    """Cap on one answer's body once decoded (gzip, zstd)."""

    def __post_init__(self) -> None:
        for name, least in _LEAST.items():
            value = getattr(self, name)
            if not _is_int(value) or value < least:
                raise ValueError(f"{name}: expected an integer >= {least}, got {value!r}")
        if self.request_timeout == 0:
            raise ValueError("request_timeout: must be at least 1 ms")
        problem = base_url_problem(self.base_url)
        if problem is not None:
            raise ValueError(f"base_url: {problem}")

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy these settings describe."""
        return RetryPolicy(
            max_retries=self.max_retries,
            backoff=self.backoff,
            max_backoff=self.max_backoff,
            max_retry_after=self.max_retry_after,
        )

    @property
    def wait_seconds(self) -> float:
        """Pause after the previous request finished, in seconds."""
        return self.wait_time / 1000

    @property
    def timeout_seconds(self) -> float:
        """Time allowed for one complete request, in seconds."""
        return self.request_timeout / 1000

    def url(self, endpoint: Endpoint[Any], query: Mapping[str, str | None]) -> str:
        """The full request URL; the query string is encoded here, not by httpx."""
        base = f"{self.base_url.rstrip('/')}/{endpoint.path}"
        encoded = encode_query(query)
        return f"{base}?{encoded}" if encoded else base

    def headers(self) -> dict[str, str]:
        """Request headers: JSON, a user agent, and the API key in `apiKey` when given."""
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": self.user_agent,
        }
        if self.api_key:
            headers["apiKey"] = self.api_key
        return headers

    def body_reader(self, url: str, headers: Mapping[str, str]) -> BodyReader:
        """A reader for the body of the answer to `url`, within this client's caps."""
        return BodyReader(
            url, headers, max_wire=self.max_wire_bytes, max_decoded=self.max_decoded_bytes
        )

    def read_decoded(self, url: str, headers: Mapping[str, str], content: bytes) -> bytearray:
        """The body of an answer that httpx already read and decoded (an in-memory
        transport), checked against the same caps."""
        reader = self.body_reader(url, _decoded(headers))
        reader.feed(content)
        return reader.finish()

    def redirect(self, url: str, status: int, headers: Mapping[str, str]) -> str | None:
        """Where a redirect answer to `url` leads (`None`: not a redirect). Only a target
        of the base URL's origin (scheme, host, port) is followed: the `apiKey` header
        goes with every request, and httpx drops only `Authorization` on the way to
        another host. Raises `NvdRedirectError` for any other target."""
        location = headers.get("location")
        if status not in REDIRECT_STATUSES or location is None:
            return None
        target = urljoin(url, location.strip())
        if _origin(target) != _origin(self.base_url):
            raise NvdRedirectError(
                f"the upstream redirected ({status}) to another origin, "
                f"{redact_url(target)!r}; not followed (only redirects within "
                f"{redact_url(self.base_url)!r} are, so that the API key stays there)",
                url,
            )
        return target


# The least value of each integer setting (`request_timeout` 0 is refused on its own).
_LEAST: Final = {
    "wait_time": 0,
    "request_timeout": 0,
    "max_retries": 0,
    "max_wire_bytes": 1,
    "max_decoded_bytes": 1,
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be a service's base URL (`None`: it can). Paths and query
    parameters are appended to it, so it has no query string or fragment (a secret in
    one would also be sent to every path); the problem quotes it redacted."""
    shown = repr(redact_url(url))
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return f"expected a URL without spaces or control characters, got {shown}"
    # The parsers' own messages are not quoted: they may hold what the URL hides.
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"expected an http(s) URL, got {shown} (a [ without its ] in the host?)"
    try:
        port = parts.port
    except ValueError:
        return f"expected a port from 1 to 65535 in {shown}"
    return _shape_problem(url, parts, port, shown) or _httpx_problem(url, shown)


def _shape_problem(url: str, parts: SplitResult, port: int | None, shown: str) -> str | None:
    """The first rule a parsed base URL breaks, checked in this order."""
    rules = (
        (
            parts.scheme.lower() not in ("http", "https") or "://" not in url,
            f"expected an http(s) URL, got {shown}",
        ),
        (not parts.hostname, f"expected a host name in {shown}"),
        (port == 0, f"expected a port from 1 to 65535 in {shown}"),
        (
            "?" in url,
            f"expected no query string in {shown}: parameters are added to each request "
            "(an API key is sent in the apiKey header)",
        ),
        ("#" in url, f"expected no fragment in {shown}"),
    )
    return next((problem for broken, problem in rules if broken), None)


def _httpx_problem(url: str, shown: str) -> str | None:
    import httpx

    try:
        httpx.URL(url)
    except httpx.InvalidURL:
        return f"expected an http(s) URL, got {shown} (httpx cannot use it)"
    return None


def _decoded(headers: Mapping[str, str]) -> dict[str, str]:
    """`headers` of an answer whose body httpx already decoded (an in-memory transport
    reads it at once): without the coding and length of the body as sent."""
    return {
        name: value
        for name, value in headers.items()
        if name.lower() not in ("content-encoding", "content-length")
    }


def _origin(url: str) -> tuple[str, str, int | None]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ("", url, None)
    scheme = parts.scheme.lower()
    return (scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme))


def query_for(endpoint: Endpoint[Any], params: Mapping[str, object]) -> Query:
    """Validate one call's arguments (raises `InvalidQuery` / `TypeError`)."""
    return build_query(endpoint.facts.name, params)


def filters_only(name: str, params: Mapping[str, object]) -> None:
    """`get_all_*` chooses the paging itself: refuse paging arguments."""
    for key in _PAGING:
        if key in params:
            raise TypeError(f"{name}() pages by itself; it does not take {key!r}")


def api_error(
    status: int, headers: Mapping[str, str], body: bytes | bytearray, url: str
) -> NvdApiError:
    """The error for a non-success answer, carrying NVD's `message` header."""
    message = headers.get("message", "").strip()
    if not message and body:
        message = body[:500].decode("utf-8", "replace").strip()
    if status in (403, 429):
        return NvdRateLimitError(status, message, url)
    return NvdApiError(status, message, url)


class Pager:
    """Page positions for one query: steps `startIndex` by records received."""

    def __init__(self, query: Query, *, start_index: int, results_per_page: int) -> None:
        self._query = query
        self.start_index = start_index
        self.results_per_page = results_per_page
        self.done = False

    def next_query(self) -> Query:
        """The query for the next page."""
        return {
            **self._query,
            "resultsPerPage": str(self.results_per_page),
            "startIndex": str(self.start_index),
        }

    def advance(self, received: int, total_results: int) -> None:
        """Record a page of `received` items; `done` once past the end or on an empty page."""
        self.start_index += received
        if received == 0 or self.start_index >= total_results:
            self.done = True


def pager_for(endpoint: Endpoint[Any], params: Mapping[str, object]) -> Pager:
    """A pager for `params`; paging arguments default to index 0 and the largest page."""
    per_page = params.get("results_per_page")
    start = params.get("start_index")
    if per_page == 0 and not isinstance(per_page, bool):
        raise InvalidQuery(
            ["results_per_page"],
            "results_per_page (resultsPerPage): must be at least 1 when reading every page",
        )
    largest = endpoint.facts.max_page
    query = build_query(
        endpoint.facts.name,
        {**params, "results_per_page": per_page or largest, "start_index": start or 0},
    )
    query.pop("resultsPerPage", None)
    query.pop("startIndex", None)
    return Pager(
        query,
        start_index=int(start or 0),  # type: ignore[call-overload]
        results_per_page=int(per_page or largest),  # type: ignore[call-overload]
    )


def concat(endpoint: Endpoint[R], pages: Sequence[R]) -> R:
    """One result holding the items of every page, in order."""
    items = [item for page in pages for item in endpoint.items(page)]
    changes: dict[str, Any] = {endpoint.facts.result_attr: items}
    return msgspec.structs.replace(
        pages[0], results_per_page=len(items), total_results=pages[-1].total_results, **changes
    )


@dataclass(frozen=True, slots=True)
class Failed:
    """A request that failed in a way worth another try."""

    error: NvdClientError
    retry_after: str | None = None


def settle(
    endpoint: Endpoint[R],
    answer: tuple[int, Mapping[str, str], bytes | bytearray],
    url: str,
    retry: RetryPolicy,
) -> R | Failed:
    """The page an answer holds, or a failure worth retrying; raises one that is not."""
    status, headers, body = answer
    if 200 <= status < 300:
        try:
            return endpoint.parse(body)
        except NvdResponseError as exc:
            return Failed(exc)  # a cut or garbled body: worth another try
    error = api_error(status, headers, body, url)
    if not retry.should_retry_status(status):
        raise error
    return Failed(error, headers.get("retry-after"))


class SettingsView(Generic[T]):
    """What both clients share: the reference client's constructor and read-only
    settings, the pacing and retry state. `T` is the client's httpx transport type."""

    def __init__(
        self,
        wait_time: int = 6000,
        request_timeout: int = 20000,
        max_retries: int = 3,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        *,
        transport: T | None = None,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_retry_after: float = 300.0,
        headers: Mapping[str, str] | None = None,
        max_wire_bytes: int = MAX_WIRE_BYTES,
        max_decoded_bytes: int = MAX_DECODED_BYTES,
    ) -> None:
        self._settings = ClientSettings(
            wait_time,
            request_timeout,
            max_retries,
            api_key,
            base_url,
            backoff=backoff,
            max_backoff=max_backoff,
            max_retry_after=max_retry_after,
            max_wire_bytes=max_wire_bytes,
            max_decoded_bytes=max_decoded_bytes,
        )
        self._retry = self._settings.retry
        self._headers = {**self._settings.headers(), **(headers or {})}
        self._last_finished: float | None = None
        self._open(transport)

    def _open(self, transport: T | None) -> None:
        """Create the HTTP client and the lock that serialises requests."""
        raise NotImplementedError

    def _pause(self) -> float:
        """Seconds still to wait after the previous request (`wait_time`)."""
        wait = self._settings.wait_seconds
        if not wait or self._last_finished is None:
            return 0.0
        return max(0.0, self._last_finished + wait - time.monotonic())

    def _next_delay(self, attempt: int, failed: Failed) -> float:
        """Seconds before retry `attempt + 1`; raises the failure when none is left."""
        if not self._retry.can_retry(attempt):
            raise failed.error
        delay = self._retry.delay(attempt, failed.retry_after)
        _log.info(
            "retrying in %.1f s (%d/%d): %s", delay, attempt + 1, self.max_retries, failed.error
        )
        return delay

    @property
    def wait_time(self) -> int:
        """Pause (ms) after the previous request finished."""
        return self._settings.wait_time

    @property
    def request_timeout(self) -> int:
        """Time (ms) allowed for one complete request."""
        return self._settings.request_timeout

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt."""
        return self._settings.max_retries

    @property
    def base_url(self) -> str:
        """The service root, e.g. `https://services.nvd.nist.gov/rest/json`."""
        return self._settings.base_url
