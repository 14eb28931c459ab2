"""Fixtures for the client tests: real NVD bodies and a scriptable loopback HTTP server."""

from __future__ import annotations

import asyncio
import gzip
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import pytest

ASSETS = Path(__file__).parent.parent / "assets" / "nvd"


def asset_bytes(name: str) -> bytes:
    """A response body from tests/assets/nvd (gunzipped when the file is .gz)."""
    data = (ASSETS / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


def asset_json(name: str) -> dict[str, Any]:
    value = orjson.loads(asset_bytes(name))
    assert isinstance(value, dict)
    return value


@dataclass
class Request:
    """What the loopback server saw: request target, parsed query, headers, arrival time."""

    method: str
    target: str
    headers: dict[str, str]
    arrived: float

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def raw_query(self) -> str:
        return urlsplit(self.target).query

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(self.raw_query, keep_blank_values=True))


@dataclass
class Reply:
    """A scripted answer. kind: respond, hang, reset, truncate (cut body, close), trickle."""

    kind: str = "respond"
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_length: int | None = None


def respond(status: int = 200, body: bytes = b"", **headers: str) -> Reply:
    return Reply("respond", status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def trickle(body: bytes, pieces: int, pause: float) -> Reply:
    """The whole body, in `pieces` parts with `pause` seconds between them."""
    return Reply("trickle", 200, body, {"x-pause": str(pause), "x-pieces": str(pieces)})


HANG = Reply("hang")
RESET = Reply("reset")


def truncated(body: bytes) -> Reply:
    """Announce the full length, send half, then close."""
    return Reply("truncate", 200, body[: len(body) // 2], content_length=len(body))


_REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 429: "Too Many Requests"}


class LoopbackServer:
    """A raw asyncio HTTP/1.1 server on 127.0.0.1 (ephemeral port) in its own thread.

    Answers come from `script` (first in, first out), then from `fallback(request)`.
    """

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.fallback: Callable[[Request], Reply] = lambda _request: respond(500)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rest/json"

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(5)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return

        async def shutdown() -> None:
            self._server.close()
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def serve() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self._loop.run_until_complete(serve())
        self._loop.run_forever()
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                request = Request(method, target, headers, time.monotonic())
                self.requests.append(request)
                reply = self.script.popleft() if self.script else self.fallback(request)
                if reply.kind == "hang":
                    await asyncio.sleep(3600)
                    return
                if reply.kind == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                length = (
                    reply.content_length if reply.content_length is not None else len(reply.body)
                )
                extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
                reason = _REASONS.get(reply.status, "Status")
                head = (
                    f"HTTP/1.1 {reply.status} {reason}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
                    f"{extra}\r\n"
                ).encode("latin-1")
                if reply.kind == "trickle":
                    writer.write(head)
                    pieces = int(reply.headers["x-pieces"])
                    step = -(-len(reply.body) // pieces)
                    for offset in range(0, len(reply.body), step):
                        await writer.drain()
                        await asyncio.sleep(float(reply.headers["x-pause"]))
                        writer.write(reply.body[offset : offset + step])
                else:
                    writer.write(head + reply.body)
                await writer.drain()
                if reply.kind == "truncate":
                    return
        except asyncio.CancelledError:
            pass
        finally:
            writer.transport.abort()  # also closes the socket; a no-op if already closed
            self._tasks.discard(task)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer()
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def page_server(
    doc: dict[str, Any], list_key: str, *, cap: int | None = None
) -> Callable[[Request], Reply]:
    """A fallback that serves `doc`'s records by startIndex/resultsPerPage (at most `cap`)."""
    records = doc[list_key]

    def serve(request: Request) -> Reply:
        query = request.query
        start = int(query.get("startIndex", 0))
        size = int(query.get("resultsPerPage", len(records)))
        if cap is not None:
            size = min(size, cap)
        chunk = records[start : start + size]
        page = {
            **doc,
            "resultsPerPage": len(chunk),
            "startIndex": start,
            "totalResults": len(records),
            list_key: chunk,
        }
        return respond(200, orjson.dumps(page))

    return serve
