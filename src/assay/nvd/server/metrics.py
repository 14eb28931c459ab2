"""`GET /metrics`: the server and its store in Prometheus' text format.

    assay_http_requests_total{path,status}         requests answered
    assay_http_request_duration_seconds{path}      time to the answer's last byte
    assay_store_generation                         the store's data generation
    assay_store_rows{table}                        rows per table
    assay_sync_checkpoint_timestamp_seconds{kind}  how far the last sync of a kind got
    assay_sync_complete{kind}                      1 when that sync finished its listing,
                                                   0 while one is under way or was cut off

`kind` is one of the five operations (`assay.nvd.operations`: cves, cvehistory, cpes,
cpematch, source), whether the sync read its upstream by dates or by change cursor.

`path` is the API path as routed (without a trailing slash) or `other`, so the series
stay few whatever clients ask. With several worker processes (`assay serve` sets
PROMETHEUS_MULTIPROC_DIR), each counts into shared files and any of them answers for
all. The store's figures are read when scraped (rows at most every `ROWS_SECONDS`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import AssayError, StoreError
from assay.nvd.checkpoint import sync_status
from assay.nvd.operations import OPERATIONS
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import ServiceStore

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
METRICS_PATH = "/metrics"
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
KNOWN_PATH = re.compile(r"(?:/compat/nvd-api)?/rest/(?:json/[a-z]+/2\.0|public/[a-z/]+)")
FIXED_PATHS = frozenset({"/metrics", "/openapi.json", "/docs", "/healthz", "/readyz", "/"})
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ROWS_SECONDS = 30.0
MAX_CHILDREN = 1024  # labelled series remembered by `Metrics.observe`


def path_label(path: str) -> str:
    trimmed = path.rstrip("/") or "/"
    if trimmed in FIXED_PATHS or KNOWN_PATH.fullmatch(trimmed):
        return trimmed
    return "other"


class StoreCollector(Collector):
    """The store's figures, read at scrape time."""

    def __init__(self, store: ServiceStore) -> None:
        self.store = store
        self._rows: dict[str, int] = {}
        self._rows_read = 0.0

    def collect(self) -> Iterator[Metric]:
        generation = GaugeMetricFamily("assay_store_generation", "The store's data generation.")
        rows = GaugeMetricFamily("assay_store_rows", "Rows per table.", labels=["table"])
        since = GaugeMetricFamily(
            "assay_sync_checkpoint_timestamp_seconds",
            "How far the last sync of a kind got (upstream time).",
            labels=["kind"],
        )
        complete = GaugeMetricFamily(
            "assay_sync_complete",
            "1 when the last sync of a kind finished its listing, 0 when under way or cut off.",
            labels=["kind"],
        )
        up = GaugeMetricFamily("assay_store_up", "1 when the store answered this scrape.")
        try:
            generation.add_metric([], float(self.store.get_meta("generation") or 0))
            if time.monotonic() - self._rows_read > ROWS_SECONDS:
                self._rows = self.store.table_rows()
                self._rows_read = time.monotonic()
            for table, count in sorted(self._rows.items()):
                rows.add_metric([table], float(count))
            for operation in OPERATIONS.values():
                status = sync_status(self.store.get_meta, operation)
                if status is not None and status.since is not None:
                    since.add_metric([operation.metric_label], status.since.timestamp())
                    complete.add_metric([operation.metric_label], float(status.finished))
            up.add_metric([], 1.0)
        except AssayError:
            up.add_metric([], 0.0)
        yield from (generation, rows, since, complete, up)


class Metrics:
    """ASGI middleware: count and time every request; answer `GET /metrics`."""

    def __init__(self, app: ASGIApp, *, store: ServiceStore) -> None:
        self.app = app
        self.registry = CollectorRegistry()
        self.multiprocess = bool(os.environ.get(MULTIPROCESS_ENV))
        own = None if self.multiprocess else self.registry
        self.requests = Counter(
            "assay_http_requests",
            "Requests answered, by path and status.",
            ["path", "status"],
            registry=own,
        )
        self.latency = Histogram(
            "assay_http_request_duration_seconds",
            "Time to the answer's last byte, by path.",
            ["path"],
            buckets=BUCKETS,
            registry=own,
        )
        if self.multiprocess:
            from prometheus_client import multiprocess

            multiprocess.MultiProcessCollector(self.registry)  # type: ignore[no-untyped-call]
        self.registry.register(StoreCollector(store))
        self.store = store
        self._children: dict[tuple[str, int], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = self.label(scope)
        if path == METRICS_PATH and scope["method"] in ("GET", "HEAD"):
            status = 200
            try:  # (the store's collector reads the store: bounded like any request's read)
                body = await in_store_thread(self.store, generate_latest, self.registry)
            except StoreError:
                status, body = 503, b"# the store did not answer in time\n"
            headers = [(b"content-type", CONTENT_TYPE), (b"content-length", b"%d" % len(body))]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send(
                {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
            )
            return
        started = time.perf_counter()
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            self.observe(path, status, time.perf_counter() - started)

    @staticmethod
    def label(scope: Scope) -> str:
        """The `path` label of a request."""
        return path_label(scope["path"])

    def observe(self, path: str, status: int, seconds: float) -> None:
        """Count one answer of `status` to `path` (a `path_label`), `seconds` to its end."""
        children = self._children.get((path, status))
        if children is None:  # (label look-ups cost more than the counting itself)
            children = (self.requests.labels(path, str(status)), self.latency.labels(path))
            if len(self._children) < MAX_CHILDREN:
                self._children[(path, status)] = children
        children[0].inc()
        children[1].observe(seconds)
