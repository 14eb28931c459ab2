"""The composed application `assay serve` runs: pages for people, the NVD API for programs.

`create_web_app(store)` wraps `assay.nvd.server.app.create_app` (the API, with whatever
middleware it carries) and adds, in front of it: the pages, `/static`, `/healthz`,
`/readyz`, the `/verify` form, the `/scan` form and POST /api/scan when `assay.audit`
exists, the `X-Assay-Store: empty` header while the store holds nothing, and optionally
an access log.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.server.app import ServerSettings, create_app
from assay.nvd.server.service import ServiceSettings
from assay.nvd.server.shortcut import CveIdShortcut
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Store, open_store
from assay.web.accesslog import AccessLog, LogFormat
from assay.web.store_state import STORE_UNAVAILABLE, StateCache, generation_of, log_store_error
from assay.web.upload_pool import UploadPool

ACCESS_LOG_ENV = "ASSAY_ACCESS_LOG"  # "common" or "json"; unset: no access log
EMPTY_RECHECK_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class WebSettings:
    access_log: LogFormat | None = None
    nvd: ServerSettings = field(default_factory=ServerSettings)


class EmptyFlag:
    """Whether the store holds no records, re-read at most every couple of seconds, in a
    worker thread that no request waits for (a store that stops answering must not hold
    up the pages and answers that carry the flag)."""

    def __init__(self, state: StateCache) -> None:
        self.state = state
        self._value = False
        self._checked = -1e9
        self._lock = threading.Lock()
        self._task: asyncio.Future[None] | None = None

    def refresh(self) -> bool:
        try:
            self._value = self.state.read().empty
        except StoreError:
            self._value = False
        self._checked = time.monotonic()
        return self._value

    async def _refresh_in_thread(self) -> None:
        with contextlib.suppress(StoreError):
            await in_store_thread(self.state.store, self.refresh)

    def __call__(self) -> bool:
        if time.monotonic() - self._checked <= EMPTY_RECHECK_SECONDS:
            return self._value
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # (called outside a server: read it now)
            if self._lock.acquire(blocking=False):
                try:
                    self.refresh()
                finally:
                    self._lock.release()
            return self._value
        if self._task is None or self._task.done():
            self._checked = time.monotonic()  # (one refresh at a time)
            self._task = asyncio.ensure_future(self._refresh_in_thread())
        return self._value


class EmptyStoreHeader:
    """ASGI middleware: `X-Assay-Store: empty` on every answer while the store is empty."""

    def __init__(self, app: ASGIApp, flag: EmptyFlag) -> None:
        self.app = app
        self.flag = flag

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.flag():
            await self.app(scope, receive, send)
            return

        async def mark(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-assay-store", b"empty")]
            await send(message)

        await self.app(scope, receive, mark)


# The pages load nothing but their own stylesheet (and images): no script at all, no
# frames, forms posted only to this server, no Referer to the sites records link to.
# (`same-origin`, not `no-referrer`: with the latter a browser posts the forms with
# `Origin: null`, which the cross-site check must refuse.)
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
_PAGE_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]
_NOSNIFF = (b"x-content-type-options", b"nosniff")


class BrowserDefences:
    """ASGI middleware: `X-Content-Type-Options: nosniff` on every answer, and on HTML
    ones a strict Content-Security-Policy, `X-Frame-Options: DENY` and `Referrer-Policy`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def defend(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": defended(message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, defend)


def defended(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """An answer's headers with the browser defences `BrowserDefences` adds."""
    typed = html = False
    for name, value in headers:
        if name.lower() == b"content-type":
            typed = True
            html = html or value.startswith(b"text/html")
    if html or not typed:
        return [*headers, _NOSNIFF, *_PAGE_HEADERS]
    return [*headers, _NOSNIFF]


def _scan_routes(store: Store, uploads: UploadPool) -> list[BaseRoute]:
    """POST /api/scan, when the audit half is installed."""
    if not audit_available():
        return []
    from assay.web.scan_api import scan_routes

    return scan_routes(store, uploads)


def audit_available() -> bool:
    return importlib.util.find_spec("assay.audit") is not None


def create_web_app(
    store: Store, settings: WebSettings | None = None, service: ServiceSettings | None = None
) -> Starlette:
    from assay.web.pages import WebPages
    from assay.web.scan_page import ScanPages
    from assay.web.tools import ToolPages
    from assay.web.verify_page import VerifyPages

    settings = settings or WebSettings()
    service = service or ServiceSettings()
    api = create_app(store, settings.nvd, service)
    uploads = UploadPool(service.upload_threads, service.upload_timeout)
    state = StateCache(store)
    empty = EmptyFlag(state)
    pages = WebPages(store, state)
    tools = ToolPages(store)
    verify = VerifyPages(store, uploads)
    scan_enabled = audit_available()
    static = StaticFiles(packages=[("assay.web", "static")])

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        try:
            generation = await in_store_thread(store, generation_of, store)
        except StoreError as error:
            log_store_error(error)
            return JSONResponse(
                {"status": "unavailable", "reason": STORE_UNAVAILABLE}, status_code=503
            )
        return JSONResponse({"status": "ready", "generation": generation})

    routes: list[BaseRoute] = [
        Route("/", pages.home, methods=["GET", "HEAD"]),
        Route("/cve/{cve_id}", pages.cve, methods=["GET", "HEAD"]),
        Route("/cpe", pages.products, methods=["GET", "HEAD"]),
        Route("/cpe/{cpe_name:path}", pages.product, methods=["GET", "HEAD"]),
        Route("/criteria/{criteria_id}", pages.criteria, methods=["GET", "HEAD"]),
        Route("/docs", tools.docs, methods=["GET", "HEAD"]),
        Route("/docs/try", tools.try_it, methods=["GET"]),
        Route("/verify", verify.form, methods=["GET", "HEAD"]),
        Route("/verify", verify.submit, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET", "HEAD"]),
        Mount("/static", app=static, name="static"),
    ]
    if scan_enabled:
        scan = ScanPages(store, uploads)
        routes.append(Route("/scan", scan.form, methods=["GET", "HEAD"]))
        routes.append(Route("/scan", scan.submit, methods=["POST"]))
    routes.extend(_scan_routes(store, uploads))
    routes.append(Mount("/", app=api))
    middleware = [Middleware(BrowserDefences), Middleware(EmptyStoreHeader, flag=empty)]
    layers = api.state.shortcut_layers
    if layers is not None:
        # `?cveId=` look-ups answered before the pages' layers and routing, with their
        # headers (`assay.nvd.server.shortcut`); an empty store's answers go the full way.
        middleware.insert(
            0,
            Middleware(CveIdShortcut, store=store, layers=layers, outer=defended, skip=empty),
        )
    if service.api_keys == "required":
        # Pages, /api/scan and the osv.dev API follow the NVD API's rule (assay.web.page_keys).
        from assay.nvd.server.access import ApiKeys
        from assay.nvd.storage import service_store
        from assay.web.page_keys import PageKeys, login_endpoint, login_form

        shared = service_store(store)
        routes.insert(0, Route("/login", login_form, methods=["GET", "HEAD"]))
        routes.insert(
            1,
            Route(
                "/login",
                login_endpoint(ApiKeys(api, store=shared, mode="required")),
                methods=["POST"],
            ),
        )
        middleware.append(Middleware(PageKeys, store=shared))
    if service.allowed_hosts is not None:
        from assay.web.hosts import AllowedHosts

        middleware.insert(0, Middleware(AllowedHosts, hosts=service.allowed_hosts))
    if settings.access_log:
        middleware.insert(0, Middleware(AccessLog, log_format=settings.access_log))
    app = Starlette(routes=routes, middleware=middleware, lifespan=_inner_lifespan(api))
    app.state.store = store
    app.state.store_empty = empty
    app.state.scan_enabled = scan_enabled
    app.state.verify_enabled = True
    return app


def _inner_lifespan(api: Starlette) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """Run the API's own start-up (it warms the walk orders) inside the composed app's."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with api.router.lifespan_context(api):
            await run_in_threadpool(app.state.store_empty.refresh)
            yield

    return lifespan


def app_from_environment() -> Starlette:
    """Factory for `uvicorn --factory`: reads `ASSAY_STORE`, `ASSAY_READ_STORES` and
    `ASSAY_ACCESS_LOG`."""
    from assay.config import default_store_url, read_store_urls
    from assay.nvd.server.memory import prepare_serving_process

    prepare_serving_process()
    service = ServiceSettings.from_environment()
    store = open_store(
        default_store_url(), timeout=service.store_timeout, read_urls=read_store_urls()
    )
    log = os.environ.get(ACCESS_LOG_ENV)
    access: Any = log if log in ("common", "json") else None
    return create_web_app(
        store,
        WebSettings(access_log=access, nvd=ServerSettings.from_environment()),
        service,
    )
