"""The access log: one line per request, in Common Log Format or as JSON.

ASGI middleware around the whole composed app; it records what was sent (status, body
bytes) and how long the answer took, and never the request's headers (API keys travel
there).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Literal

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.urls import redact_target

LogFormat = Literal["common", "json"]
LOGGER_NAME = "assay.access"


def access_logger() -> logging.Logger:
    """The logger the lines go to: stderr, bare lines, set up once per process."""
    logger = logging.getLogger(LOGGER_NAME)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


def format_line(
    log_format: LogFormat,
    *,
    client: str,
    method: str,
    target: str,
    http_version: str,
    status: int,
    size: int,
    seconds: float,
    when: float,
) -> str:
    """One access-log line (pure)."""
    if log_format == "json":
        return orjson.dumps(
            {
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)),
                "client": client,
                "method": method,
                "target": target,
                "status": status,
                "bytes": size,
                "ms": round(seconds * 1000, 2),
            }
        ).decode()
    stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(when))
    size_text = str(size) if size else "-"
    return f'{client} - - [{stamp}] "{method} {target} HTTP/{http_version}" {status} {size_text}'


class AccessLog:
    def __init__(self, app: ASGIApp, log_format: LogFormat = "common") -> None:
        self.app = app
        self.log_format: LogFormat = log_format
        self.logger = access_logger()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, when = time.perf_counter(), time.time()
        status, size = 500, 0

        async def record(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            query = scope.get("query_string", b"")
            target = scope.get("raw_path") or scope["path"].encode()
            if query:
                target = target + b"?" + query
            client = scope.get("client")
            self.logger.info(
                format_line(
                    self.log_format,
                    client=client[0] if client else "-",
                    method=scope["method"],
                    target=redact_target(target.decode("latin-1")),
                    http_version=scope.get("http_version", "1.1"),
                    status=status,
                    size=size,
                    seconds=time.perf_counter() - started,
                    when=when,
                )
            )
