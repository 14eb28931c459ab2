"""The HTTP service: NVD API 2.0 paths, answered from a store.

Handlers stay thin: parse the query (pure), ask the store (in a worker thread),
render NVD's envelope. Every path is served with and without a trailing slash, for
GET, HEAD and OPTIONS, and again under `/compat/nvd-api/` with the fields NVD added
after 2023 left out (for clients such as nvd-api 0.9.1 that reject unknown fields).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from assay.errors import QueryError, StoreError
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.operations import OPERATIONS
from assay.nvd.server.bounds import LargeAnswers
from assay.nvd.server.listings import CVES as CVE_LISTING
from assay.nvd.server.listings import LISTINGS, Listing, Q
from assay.nvd.server.openapi import docs_page, openapi_document
from assay.nvd.server.osv_api import osv_routes
from assay.nvd.server.responses import (
    CORS_PREFLIGHT,
    GENERATION_HEADER,
    ChunkedJsonResponse,
    Envelope,
    nvd_error,
    read_with_generation,
    store_failure,
)
from assay.nvd.server.service import ServiceLayers, ServiceSettings, service_middleware
from assay.nvd.server.shortcut import CveIdShortcut
from assay.nvd.server.snapshots_api import snapshot_routes
from assay.nvd.server.statistics import PATH as STATISTICS_PATH
from assay.nvd.server.statistics import statistics_endpoint
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.server.walks import NOT_A_GENERATION, restart, walk_generation
from assay.nvd.storage import Page, Store

CVES = OPERATIONS["cves"]
API_PREFIX = "/rest/json"
LEGACY_PREFIX = "/compat/nvd-api/rest/json"
MAX_QUERY_BYTES = 16 * 1024
ENRICH_ENV = "ASSAY_ENRICH"


@dataclass(frozen=True, slots=True)
class ServerSettings:
    legacy_fields_only: bool = False  # serve every path as under /compat/nvd-api/
    enrich: bool = False  # CVE answers completed from CVE 5 records (server/enrich.py)

    @classmethod
    def from_environment(cls) -> ServerSettings:
        """What `assay serve` hands its worker processes (`--compat`, `--enrich`)."""
        return cls(
            legacy_fields_only=os.environ.get("ASSAY_LEGACY_FIELDS_ONLY") == "1",
            enrich=os.environ.get(ENRICH_ENV) == "1",
        )


class NvdApi:
    """The request handlers, bound to one store."""

    def __init__(
        self, store: Store, settings: ServerSettings, large: LargeAnswers | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.large = large or LargeAnswers()

    async def _slot(self, results_per_page: int) -> Callable[[], None] | None:
        """A `LargeAnswers` slot for a large page (None for a small one)."""
        if not self.large.is_large(results_per_page):
            return None
        return await self.large.acquire()

    def cves(self, *, legacy: bool) -> Callable[[Request], object]:
        """The handler of the CVE endpoint: a listing, completed from CVE 5 records when
        the server enriches."""
        return self.listing(CVE_LISTING, legacy=legacy, enrich=self.settings.enrich)

    def listing(
        self, endpoint: Listing[Q], *, legacy: bool, enrich: bool = False
    ) -> Callable[[Request], object]:
        """The handler of a listing endpoint."""
        inline = self.store.inline_reads

        async def handle(request: Request) -> Response:
            if request.method == "OPTIONS":
                return Response(b"", headers=CORS_PREFLIGHT)
            if len(request.scope.get("query_string", b"")) > MAX_QUERY_BYTES:
                return nvd_error(f"Query string is longer than {MAX_QUERY_BYTES} bytes")
            try:
                query = endpoint.parse(request.query_params.multi_items())
            except QueryError as error:
                return nvd_error(error.reason)
            wanted = walk_generation(request.headers)
            if wanted == NOT_A_GENERATION:
                return restart(wanted, -1)
            point = endpoint.point(query)
            release = None if point else await self._slot(_results_per_page(query))
            try:
                search = partial(endpoint.search, self.store)
                if inline and point:
                    # A look-up by id reads a few rows: on SQLite, cheaper than a thread hop.
                    generation, page = read_with_generation(self.store, search, query, wanted)
                else:
                    generation, page = await in_store_thread(
                        self.store, read_with_generation, self.store, search, query, wanted
                    )
                if wanted is not None and generation != wanted:
                    if release is not None:
                        release()
                    return restart(wanted, generation)
                if enrich:
                    page = await self._enriched(query, page)
                records = page.records
                if legacy or self.settings.legacy_fields_only:
                    records = [endpoint.legacy(record) for record in records]
                body = Envelope(
                    format_name=endpoint.format_name,
                    list_key=endpoint.list_key,
                    wrapper=endpoint.wrapper,
                    start_index=query.start_index,
                    total=page.total,
                    records=records,
                )
            except (StoreError, ValueError) as error:
                if release is not None:
                    release()
                return store_failure(error)
            except BaseException:
                if release is not None:
                    release()
                raise
            del page, records  # (the envelope lets each record go once it is sent)
            return ChunkedJsonResponse(
                body,
                head=request.method == "HEAD",
                headers={GENERATION_HEADER: str(generation)},
                release=release,
            )

        return handle

    async def _enriched(self, query: Any, page: Page) -> Page:
        """`page` completed from CVE 5 records (`query` is a `CveQuery`: only CVEs are)."""
        from assay.nvd.server.enrich import Enricher

        enriched: Page = await in_store_thread(self.store, Enricher(self.store).page, query, page)
        return enriched


def _listing(api: NvdApi, listing: Listing[Q], legacy: bool) -> Callable[[Request], object]:
    return api.listing(listing, legacy=legacy)


def _results_per_page(query: object) -> int:
    count = getattr(query, "results_per_page", 0)
    return count if isinstance(count, int) else 0


def api_routes(
    path: str, make: Callable[[bool], Callable[[Request], object]]
) -> Iterable[BaseRoute]:
    """A path with and without its trailing slash, plain and legacy-compatible."""
    for prefix, legacy in ((API_PREFIX, False), (LEGACY_PREFIX, True)):
        endpoint = make(legacy)
        for suffix in ("", "/"):
            yield Route(
                f"{prefix}{path}{suffix}",
                endpoint,
                methods=["GET", "HEAD", "OPTIONS"],
            )


def create_app(
    store: Store, settings: ServerSettings | None = None, service: ServiceSettings | None = None
) -> Starlette:
    settings = settings or ServerSettings()
    service = service or ServiceSettings()
    api = NvdApi(store, settings, LargeAnswers(service.large_answers))
    routes: list[BaseRoute] = [
        *api_routes(CVES.path, lambda legacy: api.cves(legacy=legacy)),
        *(
            route
            for listing in LISTINGS
            for route in api_routes(listing.path, partial(_listing, api, listing))
        ),
        Route(STATISTICS_PATH, statistics_endpoint(store), methods=["GET", "HEAD", "OPTIONS"]),
        *osv_routes(store),  # osv.dev's API v1
        *snapshot_routes(service.snapshots),  # assay serve --snapshots DIR
        Route(
            "/openapi.json",
            partial(_openapi, snapshots=service.snapshots is not None),
            methods=["GET", "HEAD"],
        ),
        Route("/docs", _docs, methods=["GET", "HEAD"]),
        # Relative redirects: the Host header (whatever a client or proxy sent) is not
        # trusted to build the location.
        Route("/openapi.json/", _relative_redirect("../openapi.json"), methods=["GET", "HEAD"]),
        Route("/docs/", _relative_redirect("../docs"), methods=["GET", "HEAD"]),
    ]
    layers = ServiceLayers()
    middleware: list[Middleware] = service_middleware(service, store, layers)
    # For a shortcut in front of an app this one is mounted in (`assay.web.app`).
    shortcut_layers: ServiceLayers | None = None
    if not (settings.legacy_fields_only or settings.enrich):
        # Single-CVE look-ups skip the layers, routing and (SQLite) the thread hop: in
        # front of every layer, or behind those that decide per request (keys, limits).
        position = layers.caching_position
        if layers.complete:
            position, shortcut_layers = 0, layers
        middleware.insert(
            position,
            Middleware(CveIdShortcut, store=store, layers=layers, outermost=layers.complete),
        )
    app = Starlette(routes=routes, middleware=middleware, lifespan=_warmed(store))
    app.middleware_stack = app.build_middleware_stack()  # (so `layers` are made now)
    app.state.store = store
    app.state.shortcut_layers = shortcut_layers
    return app


# The orders a mirror walks page by page (all CVEs, or all but the rejected ones): their
# id lists take 0.2-0.3 s to build for 340,000 CVEs, so each worker builds them before
# it takes requests rather than in the first request that asks.
WALK_ORDERS = ([("resultsPerPage", "0")], [("resultsPerPage", "0"), ("noRejected", "")])


def _warmed(store: Store) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for pairs in WALK_ORDERS:
            try:
                await run_in_threadpool(store.search_cves, parse_cve_query(pairs))
            except StoreError:
                break  # the first request will say what is wrong
        yield

    return lifespan


def check_store(store: Store) -> None:
    """Read what every worker reads first (the whole CVE order): a store damaged there
    is refused before serving starts, with a `StoreError` that says so."""
    store.search_cves(parse_cve_query(WALK_ORDERS[0]))


async def _openapi(request: Request, snapshots: bool = False) -> Response:
    return Response(openapi_document(snapshots), media_type="application/json")


async def _docs(request: Request) -> Response:
    return HTMLResponse(docs_page())


def _relative_redirect(location: str) -> Callable[[Request], Awaitable[Response]]:
    async def redirect(request: Request) -> Response:
        return Response(b"", status_code=307, headers={"location": location})

    return redirect
