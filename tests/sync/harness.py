"""The mirror tests' harness: a fault-injecting proxy, test options, store comparison.

The upstream is the assay app (`tests.live.serving`) holding the real sample data. In
front of it, `FaultProxy` (a raw asyncio HTTP/1.1 proxy, one request per connection)
forwards each request, unless a rule tells it to answer with an error status, hang,
cut the body short, reset the connection, or corrupt a record.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from assay.nvd.cpe_query import parse_cpe_query
from assay.nvd.cpematch_query import parse_cpematch_query
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.history_query import parse_history_query
from assay.nvd.source_query import parse_source_query
from assay.nvd.storage import Page, Store, open_store
from assay.nvd.sync import KINDS, Kind, SyncOptions

# -- the proxy ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """A request the proxy received: its number (from 1), target and arrival time."""

    number: int
    target: str
    arrived: float = field(default_factory=time.monotonic)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.target).query, keep_blank_values=True))


@dataclass(frozen=True)
class Fault:
    """What to do with one request.

    kind: pass (forward), status (answer `status` with an empty body), hang (answer
    nothing), reset (RST before answering), truncate (forward the head and half the
    body, then close), reset_mid (half the body, then RST), corrupt (forward, with
    `corrupt` applied to the body).
    """

    kind: str
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    corrupt: Callable[[bytes], bytes] | None = None


PASS = Fault("pass")
HANG = Fault("hang")
RESET = Fault("reset")
TRUNCATE = Fault("truncate")
RESET_MID = Fault("reset_mid")


def status(code: int, **headers: str) -> Fault:
    return Fault("status", code, {k.replace("_", "-"): v for k, v in headers.items()})


Rule = Callable[[Seen], Fault | None]

_REASONS = {403: "Forbidden", 404: "Not Found", 429: "Too Many Requests", 503: "Unavailable"}


class FaultProxy:
    """A loopback HTTP proxy to `target` (`http://127.0.0.1:PORT`) that injects faults."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.seen: list[Seen] = []
        self.faults: list[tuple[Seen, Fault]] = []
        self.rules: list[Rule] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rest/json"

    @property
    def count(self) -> int:
        return len(self.seen)

    def api_requests(self) -> list[Seen]:
        """Requests for an API listing (all of them, in order)."""
        return [seen for seen in self.seen if "/2.0" in seen.path]

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(5)

    def stop(self) -> None:
        async def shutdown() -> None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

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

    def _decide(self, target: str) -> tuple[Seen, Fault]:
        with self._lock:
            seen = Seen(len(self.seen) + 1, target)
            self.seen.append(seen)
            for rule in self.rules:
                fault = rule(seen)
                if fault is not None:
                    self.faults.append((seen, fault))
                    return seen, fault
        return seen, PASS

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
            _seen, fault = self._decide(target)
            if fault.kind == "hang":
                await asyncio.wait_for(reader.read(1), 30)  # until the client gives up
                return
            if fault.kind == "reset":
                _reset(writer)
                return
            if fault.kind == "status":
                extra = "".join(f"{k}: {v}\r\n" for k, v in fault.headers.items())
                reason = _REASONS.get(fault.status, "Error")
                writer.write(
                    f"HTTP/1.1 {fault.status} {reason}\r\nContent-Length: 0\r\n"
                    f"Connection: close\r\n{extra}\r\n".encode("latin-1")
                )
                await writer.drain()
                return
            answer = await self._forward(head)
            response_head, _, body = answer.partition(b"\r\n\r\n")
            if fault.kind == "corrupt":
                assert fault.corrupt is not None
                body = fault.corrupt(body)
                lines = [
                    line
                    for line in response_head.split(b"\r\n")
                    if not line.lower().startswith(b"content-length:")
                ]
                lines.append(b"content-length: %d" % len(body))
                response_head = b"\r\n".join(lines)
            if fault.kind in ("truncate", "reset_mid"):
                writer.write(response_head + b"\r\n\r\n" + body[: len(body) // 2])
                await writer.drain()
                if fault.kind == "reset_mid":
                    _reset(writer)
                return
            writer.write(response_head + b"\r\n\r\n" + body)
            await writer.drain()
        except (asyncio.CancelledError, TimeoutError, ConnectionError):
            pass
        finally:
            writer.transport.abort()
            self._tasks.discard(task)

    async def _forward(self, head: bytes) -> bytes:
        """Send the request upstream with `Connection: close` and read the whole answer
        (uncompressed, so that faults can work on the bytes of the records)."""
        lines = [
            line
            for line in head.rstrip(b"\r\n").split(b"\r\n")
            if not line.lower().startswith((b"connection:", b"accept-encoding:"))
        ]
        request = (
            b"\r\n".join([*lines, b"Connection: close", b"Accept-Encoding: identity"]) + b"\r\n\r\n"
        )
        reader, writer = await asyncio.open_connection(*self._target)
        try:
            writer.write(request)
            await writer.drain()
            return await reader.read()
        finally:
            writer.close()


def _reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def quick_options(upstream: str, **changes: Any) -> SyncOptions:
    """Options for tests: small pages, short time-outs, near-instant back-off, no pacing."""
    values: dict[str, Any] = {
        "upstream": upstream,
        "rate": None,
        "page_size": 40,
        "timeout": 1.0,
        "max_retries": 4,
        "backoff": 0.01,
        "max_backoff": 0.05,
        "kinds": ("cves", "cvehistory", "cpematch"),
        # The upstream is an assay: by default these tests read it as they would NVD, by
        # date windows; the change-cursor tests turn this on.
        "change_cursor": False,
    }
    values.update(changes)
    return SyncOptions(**values)


# -- comparing stores ----------------------------------------------------------------------

_ID_KEYS: dict[Kind, str] = {
    "cves": "id",
    "cvehistory": "cveChangeId",
    "cpes": "cpeNameId",
    "cpematch": "matchCriteriaId",
    "source": "sourceIdentifiers",
}


def _search(store: Store, kind: Kind, start: int, size: int) -> Page:
    pairs = [("resultsPerPage", str(size)), ("startIndex", str(start))]
    if kind == "cves":
        return store.search_cves(parse_cve_query(pairs))
    if kind == "cvehistory":
        return store.search_changes(parse_history_query(pairs))
    if kind == "cpes":
        return store.search_cpes(parse_cpe_query(pairs))
    if kind == "source":
        return store.search_sources(parse_source_query(pairs))
    return store.search_match_strings(parse_cpematch_query(pairs))


def stored_records(store: Store, kind: Kind) -> dict[str, bytes]:
    """Every record of `kind` in the store, by id, as the search API returns it."""
    size = {"cves": 2000, "cvehistory": 5000, "cpes": 10000, "cpematch": 500, "source": 1000}[kind]
    records: list[bytes] = []
    total = None
    while total is None or len(records) < total:
        page = _search(store, kind, len(records), size)
        total = page.total
        if not page.records:
            break
        records.extend(page.records)
    by_id = {str(orjson.loads(record)[_ID_KEYS[kind]]): record for record in records}
    assert len(by_id) == len(records) == total, f"{store.url}: {kind} ids are not unique"
    return by_id


def assert_mirrored(upstream_url: str, mirror_url: str, kinds: tuple[Kind, ...] = KINDS) -> None:
    """The mirror holds exactly the upstream's records of `kinds`, byte for byte."""
    upstream, mirror = open_store(upstream_url), open_store(mirror_url)
    try:
        for kind in kinds:
            expected = stored_records(upstream, kind)
            found = stored_records(mirror, kind)
            missing = sorted(set(expected) - set(found))
            extra = sorted(set(found) - set(expected))
            different = sorted(k for k in set(expected) & set(found) if expected[k] != found[k])
            problems = (len(missing), len(extra), len(different))
            assert problems == (0, 0, 0), (
                f"{kind}: {len(missing)} missing {missing[:3]}, {len(extra)} extra "
                f"{extra[:3]}, {len(different)} different {different[:3]}"
            )
            assert expected, f"{kind}: the upstream holds no records; the test proves nothing"
    finally:
        upstream.close()
        mirror.close()
