"""The composed application `assay serve` runs: pages for people, the NVD API for programs.

`create_web_app(store)` wraps `assay.nvd.server.app.create_app` (the API, with whatever
middleware it carries) and adds, in front of it: the pages, `/static`, `/healthz`,
`/readyz`, the `/verify` form, the `/scan` form and POST /api/scan when `assay.audit`
exists, the `X-Assay-Store: empty` header while the store holds nothing, and optionally
an access log.
"""

from __future__ import annotations

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
from assay.nvd.storage import Store, open_store
from assay.web.accesslog import AccessLog, LogFormat
from assay.web.store_state import StateCache, generation_of

ACCESS_LOG_ENV = "ASSAY_ACCESS_LOG"  # "common" or "json"; unset: no access log
EMPTY_RECHECK_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class WebSettings:
    access_log: LogFormat | None = None
    nvd: ServerSettings = field(default_factory=ServerSettings)


class EmptyFlag:
    """Whether the store holds no records, re-read at most every couple of seconds."""

    def __init__(self, state: StateCache) -> None:
        self.state = state
        self._value = False
        self._checked = -1e9
        self._lock = threading.Lock()

    def refresh(self) -> bool:
        try:
            self._value = self.state.read().empty
        except StoreError:
            self._value = False
        self._checked = time.monotonic()
        return self._value

    def __call__(self) -> bool:
        if time.monotonic() - self._checked > EMPTY_RECHECK_SECONDS and self._lock.acquire(
            blocking=False
        ):
            try:
                self.refresh()
            finally:
                self._lock.release()
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


def _scan_routes(store: Store) -> list[BaseRoute]:
    """POST /api/scan, when the audit half is installed."""
    if importlib.util.find_spec("assay.audit") is None:
        return []
    if importlib.util.find_spec("assay.audit.http") is None:
        return []
    http = importlib.import_module("assay.audit.http")  # optional: typed by its own module
    routes: list[BaseRoute] = list(http.scan_routes(store))
    return routes


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
    api = create_app(store, settings.nvd, service)
    state = StateCache(store)
    empty = EmptyFlag(state)
    pages = WebPages(store, state)
    tools = ToolPages(store)
    verify = VerifyPages(store)
    scan_enabled = audit_available()
    static = StaticFiles(packages=[("assay.web", "static")])

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        try:
            generation = await run_in_threadpool(generation_of, store)
        except StoreError as error:
            return JSONResponse({"status": "unavailable", "reason": str(error)}, status_code=503)
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
        scan = ScanPages(store)
        routes.append(Route("/scan", scan.form, methods=["GET", "HEAD"]))
        routes.append(Route("/scan", scan.submit, methods=["POST"]))
    routes.extend(_scan_routes(store))
    routes.append(Mount("/", app=api))
    middleware = [Middleware(EmptyStoreHeader, flag=empty)]
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
    """Factory for `uvicorn --factory`: reads `ASSAY_STORE` and `ASSAY_ACCESS_LOG`."""
    from assay.config import default_store_url
    from assay.nvd.server._memory import prepare_serving_process

    prepare_serving_process()
    service = ServiceSettings.from_environment()
    store = open_store(default_store_url(), timeout=service.store_timeout)
    log = os.environ.get(ACCESS_LOG_ENV)
    access: Any = log if log in ("common", "json") else None
    return create_web_app(
        store,
        WebSettings(access_log=access, nvd=ServerSettings.from_environment()),
        service,
    )
