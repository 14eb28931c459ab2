"""A shortcut for the commonest request, one CVE by id: `GET /rest/json/cves/2.0?cveId=...`.

Mirrors, scanners and caches ask for single records far more often than for anything
else, and for them the layers in front of the handler (routing, request objects, each
middleware wrapping `send` in its own closure, the worker-thread hop) cost more than
the look-up itself. This ASGI middleware goes in front of the service layers (and, in
`assay serve`'s composed app, in front of the pages' layers and routing too) and
answers exactly that request shape (GET, the CVE path, a single `cveId` parameter
holding a well-formed id) with the same status, headers and bytes as the full path:
it does what each layer it steps over would do to this answer (`ServiceLayers`: the
thread bound, the metrics, the validators, compression; `outer`: the composed app's
own headers).

Anything else goes on unchanged: other parameters, HEAD, the legacy paths, a
conditional request (`HttpCaching` answers those), a request with `If-Match` (a walk's
generation: the handler answers 412 when the store has moved on, `walks.py`), an app with a layer that decides
per request (API keys, the rate limit), validators the store could not give, and
whatever `skip` says (the composed app's empty-store flag).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.cve_query import CveQuery
from assay.nvd.server.compression import compressing_send
from assay.nvd.server.responses import (
    COMMON_HEADERS,
    GENERATION_HEADER,
    read_with_generation,
    single_cve_body,
    store_failure,
)
from assay.nvd.server.service import ServiceLayers
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Store

PATHS = frozenset({"/rest/json/cves/2.0", "/rest/json/cves/2.0/"})
CVE_ID_QUERY = re.compile(rb"cveId=(CVE-\d{4}-\d{4,19})")
# Request headers whose answer may not be the plain 200: `HttpCaching` decides the first
# two (304), the handler `If-Match` (412 when the generation it names is not the store's).
CONDITIONAL = frozenset({b"if-none-match", b"if-modified-since", b"if-match"})
# The headers `ChunkedJsonResponse` sends, in its order (content-length goes in between).
HEAD_HEADERS = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in COMMON_HEADERS.items()]
CONTENT_TYPE = (b"content-type", b"application/json")
_GENERATION = GENERATION_HEADER.encode("latin-1")

Headers = list[tuple[bytes, bytes]]


def accept_encoding(headers: Headers) -> bytes | None:
    """The request's first `Accept-Encoding` (as `Compression` reads it; empty without
    one), or None for a conditional request."""
    accept: bytes | None = None
    for name, value in headers:
        if name in CONDITIONAL:
            return None
        if name == b"accept-encoding" and accept is None:
            accept = value
    return accept or b""


class CveIdShortcut:
    """ASGI middleware: answer `?cveId=` look-ups directly from the store.

    `layers` are the service layers it stands in for: with `outermost`, all of them;
    otherwise it is behind the thread bound, the metrics and the layers that decide per
    request, and stands in for the validators and compression only. `outer` adds the
    headers of the other layers it steps over (the composed app's); `skip`, when it
    says so, sends the request the full way. On a store with `inline_reads` (SQLite) the
    look-up runs on the event loop; otherwise in the worker-thread pool like any query.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        store: Store,
        layers: ServiceLayers,
        outermost: bool = True,
        outer: Callable[[Headers], Headers] | None = None,
        skip: Callable[[], bool] | None = None,
    ) -> None:
        self.app = app
        self.outermost = outermost
        self.store = store
        self.layers = layers
        self.outer = outer
        self.skip = skip
        self.inline = bool(store.inline_reads)
        self._labels: dict[str, str] = {}  # (the metrics label of each of `PATHS`)
        # One statement for the record and its generation, where the store has it.
        self._read_one: Callable[[str], tuple[int, bytes | None]] | None = getattr(
            store, "cve_with_generation", None
        )
        # A network store's answer from memory, where it can vouch for it: no thread hop.
        self._kept_one: Callable[[str], tuple[int, bytes | None] | None] | None = getattr(
            store, "kept_cve", None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cve_id = self._cve_id(scope)
        accept = None if cve_id is None else accept_encoding(scope["headers"])
        if cve_id is None or accept is None or (self.skip is not None and self.skip()):
            await self.app(scope, receive, send)
            return
        await self._answer(scope, receive, send, cve_id, accept)

    def _cve_id(self, scope: Scope) -> str | None:
        """The id a request of the shortcut's shape asks for; None for any other."""
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in PATHS:
            return None
        match = CVE_ID_QUERY.fullmatch(scope["query_string"])
        if match is None or self.layers.caching is None:
            return None
        return match.group(1).decode("ascii")

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, cve_id: str, accept: bytes
    ) -> None:
        layers = self.layers
        assert layers.caching is not None
        started = time.perf_counter()
        bounds, metrics = (layers.bounds, layers.metrics) if self.outermost else (None, None)
        if bounds is not None:
            bounds.apply()
        current = await layers.caching.current()
        if current is None:  # (the full path answers as the store allows)
            await self.app(scope, receive, send)
            return
        validators = layers.caching.headers(current)
        status = 500  # (as `Metrics` counts an answer that fails before it starts)
        try:
            try:
                generation, record = await self._read(cve_id)
            except (StoreError, ValueError) as error:
                # Answered here: the full handler would wait for the store a second time.
                status = 503
                await store_failure(error)(scope, receive, self._layered(send, validators, accept))
                return
            status = 200
            await self._send_record(send, generation, record, validators, accept)
        finally:
            if metrics is not None:
                label = self._labels.get(scope["path"])
                if label is None:
                    label = self._labels[scope["path"]] = metrics.label(scope)
                metrics.observe(label, status, time.perf_counter() - started)

    async def _send_record(
        self, send: Send, generation: int, record: bytes | None, validators: Headers, accept: bytes
    ) -> None:
        """The 200 with `record`'s one-record page, through the layers' work on it."""
        body = single_cve_body(record)
        headers = [
            *HEAD_HEADERS,
            (_GENERATION, b"%d" % generation),
            (b"content-length", b"%d" % len(body)),
            CONTENT_TYPE,
        ]
        if self.layers.compression is not None and accept:
            target = self._layered(send, validators, accept)
            await target({"type": "http.response.start", "status": 200, "headers": headers})
            await target({"type": "http.response.body", "body": body})
            return
        # The common case, made directly: the layers only add their headers.
        headers += validators
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": headers if self.outer is None else self.outer(headers),
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _layered(self, send: Send, validators: Headers, accept: bytes) -> Send:
        """`send` behind what the layers do to an answer, innermost first: compression,
        the validators (on a 200), the outer headers."""
        outer = self.outer

        async def deliver(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message["headers"])
                if message["status"] == 200:
                    headers += validators
                message = {**message, "headers": headers if outer is None else outer(headers)}
            await send(message)

        compression = self.layers.compression
        if compression is None or not accept:
            return deliver
        return compressing_send(deliver, accept, compression.minimum_bytes)

    async def _read(self, cve_id: str) -> tuple[int, bytes | None]:
        kept = None if self._kept_one is None else self._kept_one(cve_id)
        if kept is not None:
            return kept
        if self._read_one is not None:
            if self.inline:
                return self._read_one(cve_id)
            return await in_store_thread(self.store, self._read_one, cve_id)
        query = CveQuery(cve_id=cve_id)  # what `parse_cve_query` makes of this query string
        if self.inline:
            generation, page = read_with_generation(self.store, self.store.search_cves, query)
        else:
            generation, page = await in_store_thread(
                self.store, read_with_generation, self.store, self.store.search_cves, query
            )
        return generation, (page.records[0] if page.records else None)
