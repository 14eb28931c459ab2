"""API keys on the API's paths, as NVD checks them.

`off` ignores the `apiKey` header. `optional` accepts requests without one and answers
a request with an unknown key as NVD does: 404 with `message: Invalid apiKey.`.
`required` also refuses requests without a key (404, `message` says a key is needed).
Every answer says whether a valid key was used: `apikey: Yes` or `apikey: No`.

Keys are checked against the store (by digest, compared in constant time) and the
verdict kept in the process for `VERDICT_SECONDS`, so a revoked key is refused within
that time and a flood of requests with one key does not become a flood of look-ups.
A key's last-use time is written at most once a minute per process.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.apikeys import key_name
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.server.responses import nvd_error
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import ServiceStore

KeyMode = Literal["off", "optional", "required"]
KEY_MODES: tuple[KeyMode, ...] = ("off", "optional", "required")
# The API's own paths. NVD serves /rest/public/dashboard/statistics from its website,
# without keys or limits: a key there is ignored, as cve-bin-tool sends whatever it has.
API_PREFIXES = ("/rest/json/", "/compat/nvd-api/rest/json/")
INVALID_KEY = "Invalid apiKey."
KEY_NEEDED = "This server needs an apiKey header with a valid key."
STORE_UNAVAILABLE = "The store is unavailable"
VERDICT_SECONDS = 10.0
USE_NOTE_SECONDS = 60.0
MAX_VERDICTS = 10_000
SCOPE_KEY = "assay.api_key"  # the scope entry naming the valid key a request used


class ApiKeys:
    """ASGI middleware: check the `apiKey` header, mark the answer `apikey: Yes|No`."""

    def __init__(self, app: ASGIApp, *, store: ServiceStore, mode: KeyMode) -> None:
        self.app = app
        self.store = store
        self.mode = mode
        self._verdicts: OrderedDict[str, tuple[str | None, float]] = OrderedDict()
        self._noted: dict[str, float] = {}
        self._pending: asyncio.Future[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIXES):
            await self.app(scope, receive, send)
            return
        presented = None
        for name, value in scope["headers"]:
            if name == b"apikey":
                presented = value.decode("latin-1")
                break
        if presented is None:
            if self.mode == "required":
                await nvd_error(KEY_NEEDED)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        try:
            name = await self.name_of(presented)
        except StoreError:
            await nvd_error(STORE_UNAVAILABLE, status=503)(scope, receive, send)
            return
        if name is None:
            await nvd_error(INVALID_KEY)(scope, receive, send)
            return
        scope[SCOPE_KEY] = name
        self._note_use(name)

        async def send_marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"apikey"]
                message = {**message, "headers": [*headers, (b"apikey", b"Yes")]}
            await send(message)

        await self.app(scope, receive, send_marked)

    async def name_of(self, presented: str) -> str | None:
        """The name of the valid key `presented`, or None (verdicts kept a while)."""
        now = time.monotonic()
        known = self._verdicts.get(presented)
        if known is not None and now - known[1] < VERDICT_SECONDS:
            return known[0]
        name = await in_store_thread(self.store, key_name, self.store, presented)
        self._verdicts[presented] = (name, now)
        self._verdicts.move_to_end(presented)
        while len(self._verdicts) > MAX_VERDICTS:
            self._verdicts.popitem(last=False)
        return name

    def _note_use(self, name: str) -> None:
        now = time.monotonic()
        if now - self._noted.get(name, -USE_NOTE_SECONDS) < USE_NOTE_SECONDS:
            return
        self._noted[name] = now
        stamp = format_nvd_timestamp(datetime.now(UTC))
        # Not awaited: the request does not wait for this write.
        self._pending = asyncio.ensure_future(_note(self.store, name, stamp))


async def _note(store: ServiceStore, name: str, stamp: str) -> None:
    # A read-only replica, or a store briefly away: a later use notes it.
    with contextlib.suppress(StoreError):
        await in_store_thread(store, store.note_api_key_use, name, stamp)
