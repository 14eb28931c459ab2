"""Answers compressed as the client's `Accept-Encoding` asks: zstd, else gzip, else as is.

An answer is compressed piece by piece as the application sends it (the NVD handlers
send large pages in ~1 MiB pieces), so a 60 MB page never exists compressed in one
block: each piece goes out as soon as it is compressed, with chunked transfer-encoding.
Pieces of 128 KiB and more are compressed in a worker thread (zlib and zstd release the
GIL), so other requests go on meanwhile. An answer sent in one piece gets its
compressed length in `content-length`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import zstandard
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

GZIP_LEVEL = 1  # as nginx: a 5.8 MB page in ~37 ms at 1/4.5 the size (level 4: ~87 ms, 1/5.1)
ZSTD_LEVEL = 3
MINIMUM_BYTES = 512  # smaller answers (errors, 304s) go as they are
THREAD_MINIMUM = 128 * 1024
ENCODINGS = ("zstd", "gzip")  # in the order of preference


def negotiate(accept_encoding: str) -> str | None:
    """The encoding to answer with: the first of `ENCODINGS` the header accepts with a
    non-zero quality (`*` accepts any), else None (identity)."""
    accepted: dict[str, float] = {}
    for item in accept_encoding.split(","):
        name, _, params = item.strip().partition(";")
        if name:
            accepted[name.strip().lower()] = _quality(params)
    for encoding in ENCODINGS:
        quality = accepted.get(encoding, accepted.get("*", 0.0))
        if quality > 0:
            return encoding
    return None


def _quality(params: str) -> float:
    """The `q` of an Accept-Encoding item's parameters (the last one given; 1 when none,
    0 when unreadable)."""
    quality = 1.0
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
    return quality


class _Compressor:
    """One answer's compressor: `piece` for each piece, `end` for the last."""

    def __init__(self, encoding: str) -> None:
        self._gzip: Any = None
        self._zstd: Any = None
        if encoding == "gzip":
            self._gzip = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        else:
            self._zstd = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compressobj()

    def piece(self, data: bytes) -> bytes:
        engine = self._gzip or self._zstd
        return bytes(engine.compress(data))

    def end(self, data: bytes) -> bytes:
        if self._gzip is not None:
            return bytes(self._gzip.compress(data) + self._gzip.flush())
        return bytes(self._zstd.compress(data) + self._zstd.flush())


class Compression:
    """ASGI middleware: compress answers the client accepts compressed."""

    def __init__(self, app: ASGIApp, *, minimum_bytes: int = MINIMUM_BYTES) -> None:
        self.app = app
        self.minimum_bytes = minimum_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accept = b""
        for name, value in scope["headers"]:
            if name == b"accept-encoding":
                accept = value
                break
        if not accept:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, compressing_send(send, accept, self.minimum_bytes))


def compressing_send(send: Send, accept_encoding: bytes, minimum_bytes: int) -> Send:
    """`send`, compressing what goes through it as `accept_encoding` asks (or as is)."""
    encoding = negotiate(accept_encoding.decode("latin-1"))
    if encoding is None:
        return send
    return _CompressingSend(send, encoding, minimum_bytes).send


class _CompressingSend:
    def __init__(self, send: Send, encoding: str, minimum_bytes: int) -> None:
        self._send = send
        self._encoding = encoding
        self._minimum = minimum_bytes
        self._start: Message | None = None
        self._compressor: _Compressor | None = None
        self._passing = False

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self._start = message
            return
        if kind != "http.response.body" or self._passing:
            await self._send(message)
            return
        body: bytes = message.get("body", b"")
        more = bool(message.get("more_body", False))
        if self._compressor is None:
            await self._first_piece(message, body, more)
            return
        await self._piece(self._compressor, body, more)

    async def _first_piece(self, message: Message, body: bytes, more: bool) -> None:
        """Send the response's start, with the encoding's headers when the answer is worth
        compressing (else it and every piece pass as they are), then the first piece."""
        start = self._start
        assert start is not None
        headers = [(k.lower(), v) for k, v in start["headers"]]
        if not self._worth_it(start["status"], headers, body, more):
            self._passing = True
            await self._send(start)
            await self._send(message)
            return
        compressor = self._compressor = _Compressor(self._encoding)
        kept = _compressed_headers(headers, self._encoding)
        if more:
            await self._send({**start, "headers": kept})
            await self._piece(compressor, body, more)
            return
        compressed = await _run(compressor.end, body)
        kept.append((b"content-length", b"%d" % len(compressed)))
        await self._send({**start, "headers": kept})
        await self._send({"type": "http.response.body", "body": compressed})

    async def _piece(self, compressor: _Compressor, body: bytes, more: bool) -> None:
        compress = compressor.piece if more else compressor.end
        await self._send(
            {"type": "http.response.body", "body": await _run(compress, body), "more_body": more}
        )

    def _worth_it(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes, more: bool
    ) -> bool:
        if status < 200 or status in (204, 206, 304):
            return False
        if any(name == b"content-encoding" for name, _ in headers):
            return False
        if more:
            return True
        return len(body) >= self._minimum


async def _run(compress: Callable[[bytes], bytes], data: bytes) -> bytes:
    if len(data) >= THREAD_MINIMUM:
        return await run_in_threadpool(compress, data)
    return compress(data)


def _compressed_headers(
    headers: list[tuple[bytes, bytes]], encoding: str
) -> list[tuple[bytes, bytes]]:
    """A compressed answer's headers (but its Content-Length, known once compressed)."""
    kept = [(k, v) for k, v in headers if k not in (b"content-length", b"etag")]
    kept += [(b"content-encoding", encoding.encode()), (b"vary", b"Accept-Encoding")]
    # A strong validator names one representation: the compressed one is another.
    kept += [(b"etag", _weak(v)) for k, v in headers if k == b"etag"]
    return kept


def _weak(etag: bytes) -> bytes:
    return etag if etag.startswith(b"W/") else b"W/" + etag
