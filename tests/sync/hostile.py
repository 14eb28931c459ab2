"""A hostile NVD upstream on loopback: a small HTTP server whose answers a test scripts.

`Upstream(answer)` serves `http://127.0.0.1:PORT/rest/json`; every request is kept
(`requests`, with its headers) and answered by `answer(request)`: an `Answer` with a
status, headers and a body given as bytes or as an iterator of chunks (sent without a
length, the connection closed at the end, so a body may be larger than memory).
`listing()` answers the CVE listing from a list of records as NVD pages it; `page()`
builds one page; `gzip_bomb()` builds a valid gzip stream of zeros.
"""

from __future__ import annotations

import gzip
import struct
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

ASSETS = Path(__file__).parents[1] / "assets"


@dataclass(frozen=True)
class Request:
    """What the upstream received: path, query and headers (lower-case names)."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""


Script = Callable[[Request], Answer]


class Upstream:
    """A threaded HTTP/1.1 server on 127.0.0.1 answering as `script` says."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Request] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                request = Request(
                    parts.path,
                    dict(parse_qsl(parts.query, keep_blank_values=True)),
                    {name.lower(): value for name, value in self.headers.items()},
                )
                upstream.requests.append(request)
                answer = upstream.script(request)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                try:
                    if isinstance(answer.body, bytes):
                        self.send_header("Content-Length", str(len(answer.body)))
                        self.end_headers()
                        self.wfile.write(answer.body)
                        return
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    for chunk in answer.body:
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def log_message(self, *_: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, *_: Any) -> None:
                pass  # a client that hangs up on a hostile answer is the point

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/rest/json"

    def api_requests(self) -> list[Request]:
        return [request for request in self.requests if request.path.endswith("/2.0")]

    def __enter__(self) -> Upstream:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


# -- pages -----------------------------------------------------------------------------------


@cache
def _real_cves() -> bytes:
    with gzip.open(ASSETS / "nvd" / "cves-1999.json.gz") as feed:
        return feed.read()


def real_cves() -> list[dict[str, Any]]:
    """The 200 real CVE records of `tests/assets/nvd/cves-1999.json.gz` (fresh copies)."""
    items: list[dict[str, Any]] = orjson.loads(_real_cves())["vulnerabilities"]
    return [item["cve"] for item in items]


def nvd_time(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    )


def page(
    records: list[dict[str, Any]], *, start: int, total: int, timestamp: str | None = None
) -> bytes:
    """One `/cves/2.0` page holding `records`."""
    return orjson.dumps(
        {
            "resultsPerPage": len(records),
            "startIndex": start,
            "totalResults": total,
            "format": "NVD_CVE",
            "version": "2.0",
            "timestamp": timestamp or nvd_time(datetime.now(UTC)),
            "vulnerabilities": [{"cve": record} for record in records],
        }
    )


def _in_window(record: dict[str, Any], query: dict[str, str]) -> bool:
    start, end = query.get("lastModStartDate"), query.get("lastModEndDate")
    if start is None or end is None:
        return True
    modified = datetime.fromisoformat(record["lastModified"]).replace(tzinfo=UTC)
    return datetime.fromisoformat(start) <= modified <= datetime.fromisoformat(end)


def listing(records: Callable[[], list[dict[str, Any]]], *, timestamp: Callable[[], str]) -> Script:
    """The CVE listing of `records()` as NVD serves it (paging, `lastMod*` windows);
    every other path answers an empty listing."""

    def answer(request: Request) -> Answer:
        query = request.query
        start = int(query.get("startIndex", "0"))
        size = int(query.get("resultsPerPage", "2000"))
        chosen = [r for r in records() if _in_window(r, query)] if "cves" in request.path else []
        body = page(
            chosen[start : start + size], start=start, total=len(chosen), timestamp=timestamp()
        )
        return Answer(headers={"Content-Type": "application/json"}, body=body)

    return answer


def gzip_bomb(decoded_mib: int) -> bytes:
    """A valid gzip stream (with its CRC) that expands to `decoded_mib` MiB of zeros:
    one compressed MiB repeated, each ending on a full flush (no back-reference crosses
    it), about 1 KiB per MiB."""
    zeros = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(decoded_mib):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", crc, (decoded_mib << 20) & 0xFFFFFFFF)
    return header + block * decoded_mib + deflate.flush() + trailer


def endless(chunk: bytes, total: int) -> Iterator[bytes]:
    """`total` bytes of `chunk` repeated, made as they are sent."""
    sent = 0
    while sent < total:
        yield chunk
        sent += len(chunk)
