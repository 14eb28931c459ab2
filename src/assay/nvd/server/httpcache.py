"""HTTP validators from the data generation: `ETag`, `Last-Modified`, 304s, Cache-Control.

Every write that changes the store moves its data generation, so an answer given at
generation g is still right while the generation is g: the API's answers carry the weak
`ETag: W/"g<g>"`, a `Last-Modified` of when that generation was first served, and the
configured `Cache-Control`. A request whose `If-None-Match` names the current ETag (or,
without one, whose `If-Modified-Since` is not before `Last-Modified`) gets a 304 without
the store being searched. A CDN or reverse proxy in front of several servers on one
store therefore revalidates cheaply, and every server gives the same validators.

The generation is read at most once a second per process (`REFRESH_SECONDS`): an answer
may carry the previous generation's validators for up to that long after a write. When
a process first sees a generation, it records the time in the store (meta
`generation_since`), so that every server on the store gives the same `Last-Modified`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.server.responses import COMMON_HEADERS, nvd_error
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Store

REFRESH_SECONDS = 1.0
SINCE_KEY = "generation_since"
DEFAULT_CACHE_CONTROL = "public, no-cache"
API_PREFIXES = ("/rest/", "/compat/nvd-api/rest/")
STORE_UNAVAILABLE = "The store is unavailable"
_COMMON = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in COMMON_HEADERS.items()]


@dataclass(frozen=True, slots=True)
class Validators:
    generation: int
    etag: bytes
    since: float  # seconds since the epoch, whole seconds

    @property
    def last_modified(self) -> bytes:
        return formatdate(self.since, usegmt=True).encode("ascii")


def validators(generation: int, since: float) -> Validators:
    return Validators(generation, b'W/"g%d"' % generation, float(int(since)))


def read_validators(store: Store, now: float) -> Validators:
    """The store's generation and when it was first served (recorded now if unknown)."""
    generation = int(store.get_meta("generation") or 0)
    recorded = store.get_meta(SINCE_KEY)
    if recorded is not None:
        seen, _, since = recorded.partition(" ")
        if seen == str(generation) and since.isdigit():
            return validators(generation, float(since))
    with contextlib.suppress(StoreError):  # a read-only replica: this process's sight stands
        store.set_meta(SINCE_KEY, f"{generation} {int(now)}")
    return validators(generation, now)


def not_modified(validators: Validators, headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether the request's conditional headers name this state (RFC 9110 13.2.2)."""
    conditions = {
        name: value for name, value in headers if name in (b"if-none-match", b"if-modified-since")
    }
    if_none_match = conditions.get(b"if-none-match")
    if if_none_match is not None:  # (it overrides If-Modified-Since)
        return _names_etag(if_none_match, validators.etag)
    if_modified_since = conditions.get(b"if-modified-since")
    return if_modified_since is not None and _not_since(if_modified_since, validators.since)


def _names_etag(if_none_match: bytes, etag: bytes) -> bool:
    """Whether an If-None-Match list names `etag` (weakly compared) or is `*`."""
    wanted = etag.removeprefix(b"W/")
    tags = (listed.strip() for listed in if_none_match.split(b","))
    return any(tag == b"*" or tag.removeprefix(b"W/") == wanted for tag in tags)


def _not_since(if_modified_since: bytes, since: float) -> bool:
    """Whether the state has not changed after an If-Modified-Since date (an unreadable
    date: it may have)."""
    try:
        asked = parsedate_to_datetime(if_modified_since.decode("latin-1")).timestamp()
    except (ValueError, TypeError, IndexError):
        return False
    return since <= asked


class HttpCaching:
    """ASGI middleware: validators on the API's 200s, 304 for a current conditional GET."""

    def __init__(
        self, app: ASGIApp, *, store: Store, cache_control: str = DEFAULT_CACHE_CONTROL
    ) -> None:
        self.app = app
        self.store = store
        self.cache_control = cache_control.encode("latin-1")
        self._current: Validators | None = None
        self._checked = 0.0
        self._refreshing: asyncio.Task[None] | None = None
        self._failed_first = False
        self._headers: tuple[Validators, list[tuple[bytes, bytes]]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or not scope["path"].startswith(API_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        current = await self.current()
        if current is None:
            if self._failed_first:
                self._failed_first = False
                await nvd_error(STORE_UNAVAILABLE, status=503)(scope, receive, send)
                return
            await self.app(scope, receive, send)  # (answers 503 itself if the store is down)
            return
        extra = self.headers(current)
        if not_modified(current, scope["headers"]):
            await send({"type": "http.response.start", "status": 304, "headers": _COMMON + extra})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_validators(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                message = {**message, "headers": [*message["headers"], *extra]}
            await send(message)

        await self.app(scope, receive, send_with_validators)

    def headers(self, current: Validators) -> list[tuple[bytes, bytes]]:
        """The headers a 200 (or a 304) gets at `current` (made once per generation)."""
        made = self._headers
        if made is None or made[0] is not current:
            made = (
                current,
                [
                    (b"etag", current.etag),
                    (b"last-modified", current.last_modified),
                    (b"cache-control", self.cache_control),
                ],
            )
            self._headers = made
        return made[1]

    async def current(self) -> Validators | None:
        """The current validators; None while the store cannot be read. Only the first
        request waits for them: later, one request a second starts a refresh that the
        others do not wait for."""
        if not self._checked:
            await self._refresh()
            self._failed_first = self._current is None
        elif time.monotonic() - self._checked > REFRESH_SECONDS and (
            self._refreshing is None or self._refreshing.done()
        ):
            self._refreshing = asyncio.ensure_future(self._refresh())
        return self._current

    async def _refresh(self) -> None:
        self._checked = time.monotonic()
        try:
            self._current = await in_store_thread(
                self.store, read_validators, self.store, time.time()
            )
        except StoreError:
            self._current = None
