"""Pacing: at most N requests in any rolling window of T seconds, counted on every attempt.

NVD allows 5 requests in a rolling 30-second window without an API key and 50 with one;
it answers 403 beyond that. `SlidingWindowLimiter` enforces such a limit on request
*starts* (retries included, because the limiter sits in the HTTP transport, below the
client's retry loop). An upstream on a loopback address (`localhost`, `127.0.0.0/8`,
`::1`) is not paced: it is another `assay serve` on the same machine.
"""

from __future__ import annotations

import ipaddress
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import httpx

from assay.errors import InputError

__all__ = [
    "NVD_RATE_WITHOUT_KEY",
    "NVD_RATE_WITH_KEY",
    "CountingTransport",
    "Rate",
    "SlidingWindowLimiter",
    "default_rate",
    "is_loopback",
    "parse_rate",
]


@dataclass(frozen=True, slots=True)
class Rate:
    """At most `requests` request starts in any `seconds`-long window."""

    requests: int
    seconds: float

    def __post_init__(self) -> None:
        if self.requests < 1 or self.seconds <= 0:
            raise ValueError(f"a rate needs requests >= 1 and seconds > 0, got {self}")

    def __str__(self) -> str:
        return f"{self.requests} requests / {self.seconds:g} s"


NVD_RATE_WITHOUT_KEY: Final = Rate(5, 30.0)
NVD_RATE_WITH_KEY: Final = Rate(50, 30.0)
SAFETY: Final = 0.5
"""Seconds added to the window: NVD counts arrivals, we count departures."""


def parse_rate(text: str) -> Rate:
    """`5/30` → 5 requests per 30 s."""
    requests, slash, seconds = text.partition("/")
    try:
        if not slash:
            raise ValueError(text)
        return Rate(int(requests), float(seconds))
    except ValueError:
        raise InputError(
            "--rate", f"expected REQUESTS/SECONDS with REQUESTS >= 1 (e.g. 5/30), got {text!r}"
        ) from None


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine (`localhost`, `127.x.y.z`, `::1`)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_rate(upstream: str, api_key: str | None) -> Rate | None:
    """NVD's published limit for `upstream` (`None`: no pacing, for loopback hosts)."""
    if is_loopback(upstream):
        return None
    return NVD_RATE_WITH_KEY if api_key else NVD_RATE_WITHOUT_KEY


class SlidingWindowLimiter:
    """Blocks `acquire()` until one more request fits in the rolling window. Thread-safe.

    `clock` and `sleep` are injectable so the policy can be tested without waiting.
    """

    def __init__(
        self,
        rate: Rate,
        *,
        safety: float = SAFETY,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate
        self._span = rate.seconds + safety
        self._starts: deque[float] = deque()
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self.waited = 0.0
        """Total seconds spent waiting for the window."""

    def wait_needed(self, now: float) -> float:
        """Seconds until one more request may start at `now` (0 if it may start now)."""
        while self._starts and self._starts[0] <= now - self._span:
            self._starts.popleft()
        if len(self._starts) < self.rate.requests:
            return 0.0
        return self._starts[0] + self._span - now

    def acquire(self) -> None:
        """Wait for a slot, then record a request starting now."""
        with self._lock:
            while True:
                now = self._clock()
                delay = self.wait_needed(now)
                if delay <= 0:
                    self._starts.append(now)
                    return
                self.waited += delay
                self._sleep(delay)


GENERATION_HEADER = "x-assay-generation"


class CountingTransport(httpx.BaseTransport):
    """Counts every HTTP request sent (retries included) and paces them when asked.

    Wraps `inner` (by default an `httpx.HTTPTransport` that honours the `*_PROXY`
    environment variables, as httpx does when no transport is given).
    """

    def __init__(
        self,
        url: str,
        *,
        limiter: SlidingWindowLimiter | None = None,
        inner: httpx.BaseTransport | None = None,
    ) -> None:
        self._inner = inner if inner is not None else httpx.HTTPTransport(proxy=_env_proxy(url))
        self._limiter = limiter
        self._lock = threading.Lock()
        self.sent = 0
        self.generation: int | None = None
        """The last `x-assay-generation` an answer carried (another assay's change
        cursor); None while no answer had one (NVD's never do)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._limiter is not None:
            self._limiter.acquire()
        with self._lock:
            self.sent += 1
        response = self._inner.handle_request(request)
        text = response.headers.get(GENERATION_HEADER, "")
        if text.isascii() and text.isdigit() and len(text) < 20:
            self.generation = int(text)
        return response

    def close(self) -> None:
        self._inner.close()


def _env_proxy(url: str) -> str | None:
    """The proxy `urllib` would use for `url` (`HTTPS_PROXY`, `NO_PROXY`, ...)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(parts.scheme)
