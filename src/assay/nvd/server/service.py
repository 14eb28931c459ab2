"""The service around the NVD API: process bounds and the ASGI layers `assay serve`
puts in front of the API (see `wrap`).

Settings travel from `assay serve` to its worker processes (uvicorn starts each with
the app factory) as one environment variable holding JSON, `ASSAY_SERVICE`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

import orjson
from anyio.to_thread import current_default_thread_limiter
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.errors import InputError
from assay.nvd.server.access import KEY_MODES, ApiKeys
from assay.nvd.server.bounds import (
    DEFAULT_LARGE_ANSWERS,
    DEFAULT_SQLITE_CACHE_MIB,
    DEFAULT_THREADS,
    limit_sqlite_heap,
)
from assay.nvd.server.compression import Compression
from assay.nvd.server.httpcache import DEFAULT_CACHE_CONTROL, HttpCaching
from assay.nvd.server.metrics import Metrics
from assay.nvd.server.ratelimit import Limiter, RateLimit, counter_for, parse_policy
from assay.nvd.storage import Store, service_store

SERVICE_ENV = "ASSAY_SERVICE"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    threads: int = DEFAULT_THREADS  # worker threads per process (store operations at a time)
    sqlite_cache_mib: int = DEFAULT_SQLITE_CACHE_MIB  # SQLite page cache of the whole process
    cache_control: str = DEFAULT_CACHE_CONTROL  # on the API's answers, beside ETag
    compression: bool = True  # gzip or zstd when the client accepts it
    api_keys: str = "off"  # off, optional or required (`access.KEY_MODES`)
    rate_limit: str | None = None  # "nvd" or "N/S" (`ratelimit.parse_policy`)
    rate_limit_store: str | None = None  # redis://... ; else the count is in the store
    # Slow and hostile clients (`guarded.py`) and the connection cap.
    head_timeout: float = 10.0  # seconds for a request head to arrive whole
    send_timeout: float = 60.0  # seconds an answer may wait for the client to read
    idle_timeout: float = 5.0  # seconds a keep-alive connection may sit idle
    max_header_bytes: int = 64 * 1024  # the largest request head
    max_connections: int = 1000  # per worker process; 503 past it
    store_timeout: float = 5.0  # seconds to reach PostgreSQL before answering 503
    # Host names the server answers to (`web.hosts`); None: any (`assay serve` sets them).
    allowed_hosts: tuple[str, ...] | None = None
    large_answers: int = DEFAULT_LARGE_ANSWERS  # pages of >100 records in flight at a time
    # Uploads (`/api/scan`, `/scan`, `/verify`): their own threads and time budget.
    upload_threads: int = 2
    upload_timeout: float = 60.0
    snapshots: str | None = None  # a folder of published snapshots (`/api/snapshots`)

    def to_environment(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_environment(cls) -> ServiceSettings:
        text = os.environ.get(SERVICE_ENV)
        if not text:
            return cls()
        try:
            values: Any = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise InputError(SERVICE_ENV, f"expected a JSON object, found {text[:80]!r}") from error
        known = {field.name for field in fields(cls)}
        if not isinstance(values, dict) or not set(values) <= known:
            raise InputError(SERVICE_ENV, f"expected an object with keys among {sorted(known)}")
        if isinstance(values.get("allowed_hosts"), list):
            values["allowed_hosts"] = tuple(str(host) for host in values["allowed_hosts"])
        return cls(**values)


@dataclass(slots=True)
class ServiceLayers:
    """The service layers of one API app, as `service_middleware` made them: what a
    shortcut in front of them (`shortcut.py`) stands in for. Filled in when the app
    builds its middleware stack; `complete` is False when a layer is configured that
    no shortcut may step over (API keys, the rate limit: they decide per request)."""

    bounds: ProcessBounds | None = None
    metrics: Metrics | None = None
    caching: HttpCaching | None = None
    compression: Compression | None = None
    complete: bool = True
    caching_position: int = 0  # where `HttpCaching` is in the middleware list


def service_middleware(
    settings: ServiceSettings, store: Store, layers: ServiceLayers | None = None
) -> list[Middleware]:
    """The service's layers, outermost first, for the API app's middleware list (each
    noted in `layers` as it is made)."""
    layers = layers if layers is not None else ServiceLayers()
    shared = service_store(store)
    stack = [
        Middleware(_noted(layers, "bounds", ProcessBounds), settings=settings),
        Middleware(_noted(layers, "metrics", Metrics), store=shared),
    ]
    if settings.api_keys != "off":
        mode = settings.api_keys
        if mode not in KEY_MODES:
            raise InputError(
                "--api-keys", f"expected one of {', '.join(KEY_MODES)}, found {mode!r}"
            )
        layers.complete = False
        stack.append(Middleware(ApiKeys, store=shared, mode=mode))
    if settings.rate_limit is not None:
        policy = parse_policy(settings.rate_limit)
        counter = counter_for(settings.rate_limit_store, shared)
        layers.complete = False
        stack.append(Middleware(RateLimit, limiter=Limiter(counter, policy)))
    layers.caching_position = len(stack)
    stack.append(
        Middleware(
            _noted(layers, "caching", HttpCaching),
            store=store,
            cache_control=settings.cache_control,
        )
    )
    if settings.compression:
        stack.append(Middleware(_noted(layers, "compression", Compression)))
    return stack


def _noted(layers: ServiceLayers, name: str, kind: Callable[..., T]) -> Callable[..., T]:
    """`kind`'s constructor, that also notes the layer it makes as `layers.<name>`."""

    def make(app: ASGIApp, **options: Any) -> T:
        layer = kind(app, **options)
        setattr(layers, name, layer)
        return layer

    return make


class ProcessBounds:
    """Applies the process bounds: SQLite's heap limit once, the worker-thread bound in
    each event loop that serves (uvicorn runs one; tests may run several)."""

    def __init__(self, app: ASGIApp, *, settings: ServiceSettings) -> None:
        self.app = app
        self.settings = settings
        self._loop: asyncio.AbstractEventLoop | None = None
        limit_sqlite_heap(settings.sqlite_cache_mib)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.apply()
        await self.app(scope, receive, send)

    def apply(self) -> None:
        """Bound the worker threads of the running event loop (once per loop)."""
        loop = asyncio.get_running_loop()
        if loop is self._loop:  # (anyio keeps one default limiter per loop)
            return
        current_default_thread_limiter().total_tokens = self.settings.threads
        self._loop = loop
