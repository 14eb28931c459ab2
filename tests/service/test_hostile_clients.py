"""Slow and hostile clients against a real `assay serve`: idle and slowloris connections
are closed, huge heads refused, unread large answers dropped with their memory, the
connection count capped; a PostgreSQL outage is a prompt 503."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.pool import ThreadPool
from pathlib import Path

import httpx
import pytest
from tests.conftest import POSTGRES_URL, backends, make_store_url
from tests.service.servers import Served, rss_mib, serving

from assay.nvd.storage import open_store

CVE = "/rest/json/cves/2.0?cveId=CVE-2024-23113"
GUARDS = ("--head-timeout", "2", "--send-timeout", "3", "--idle-timeout", "2",
          "--max-header-size", "8192", "--max-connections", "40")  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server over a store of the sample's records, each also under eight more ids
    with a longer description (so that a 2000-record page is larger than the kernel's
    socket buffers can hold)."""
    import gzip

    import orjson

    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer

    folder = tmp_path_factory.mktemp("hostile")
    (sample,) = [p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"]
    records = [orjson.loads(line) for line in gzip.decompress(sample.read_bytes()).splitlines()]
    copies = folder / "copies.jsonl.gz"
    lines = []
    for copy in range(8):
        for number, record in enumerate(records):
            # A longer description than most (4 kB more), so the page is ~12 MB.
            text = record["descriptions"][0]["value"] + " (copy)" * 600
            descriptions = [{"lang": "en", "value": text}]
            cve_id = f"CVE-2099-{copy * 10000 + number:05d}"
            lines.append(orjson.dumps({**record, "id": cve_id, "descriptions": descriptions}))
    copies.write_bytes(gzip.compress(b"\n".join(lines)))
    for url in make_store_url("sqlite", folder):
        store = open_store(url)
        assert Importer(store).import_files([sample, copies]).ok
        store.close()
        with serving(url, *GUARDS, folder=folder) as server:
            yield server


def _address(served: Served) -> tuple[str, int]:
    return "127.0.0.1", served.port


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (whatever it says first)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if sock.recv(65536) == b"":
                return True
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return False


def test_idle_and_slowloris_connections_are_closed(served: Served) -> None:
    with (
        socket.create_connection(_address(served)) as idle,
        socket.create_connection(_address(served)) as slow,
    ):
        started = time.monotonic()
        slow.sendall(b"GET /rest/json/cves/2.0 HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(3):
            with contextlib.suppress(OSError):
                slow.sendall(b"X-a: b\r\n")
            time.sleep(0.5)
        assert _closed_within(slow, 4)
        assert _closed_within(idle, 4)
        assert time.monotonic() - started < 6
    # A connection kept alive after an answer is closed once idle.
    with socket.create_connection(_address(served)) as kept:
        kept.sendall(f"GET {CVE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        kept.settimeout(5)
        assert kept.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_within(kept, 5)


def test_a_huge_head_is_refused_with_431(served: Served) -> None:
    with socket.create_connection(_address(served)) as sock:
        sock.sendall(b"GET /rest/json/cves/2.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-big: ")
        answer = b""
        with contextlib.suppress(OSError):
            for _ in range(64):
                sock.sendall(b"a" * 4096)
        sock.settimeout(5)
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 431")
    # An ordinary request still works.
    assert httpx.get(served.base + CVE).status_code == 200


def test_a_whole_huge_head_in_one_write_is_refused_too(served: Served) -> None:
    head = (
        b"GET /rest/json/cves/2.0 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-big: "
        + b"a" * 200_000
        + b"\r\n\r\n"
    )
    with socket.create_connection(_address(served)) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(head)
        sock.settimeout(5)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 431")


def test_a_head_and_a_large_body_in_one_write_are_served(served: Served) -> None:
    """A browser posting a form sends the head and the start of the body at once: the
    body does not count towards the head's limit."""
    body = b"x" * 300_000
    request = (
        b"POST /api/scan?filename=requirements.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    ) + body
    with socket.create_connection(_address(served)) as sock:
        sock.sendall(request)
        sock.settimeout(10)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    # An answer from the application (the body is no requirements file), not a 431.
    assert answer.startswith(b"HTTP/1.1 4"), answer[:80]
    assert not answer.startswith(b"HTTP/1.1 431"), answer[:80]


def test_unread_large_answers_are_dropped_and_their_memory_reused(served: Served) -> None:
    page = "/rest/json/cves/2.0?resultsPerPage=2000"
    size = len(httpx.get(served.base + page, headers={"accept-encoding": "identity"}).content)
    assert size > 6_000_000
    pid = served.process.pid
    after = []
    for _ in range(2):
        sockets = []
        try:
            for _ in range(12):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connecting)
                sock.connect(_address(served))
                sock.sendall(f"GET {page} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                sockets.append(sock)
            time.sleep(4)  # past the send timeout (3 s), nothing read
            # The answers in flight (`--large-answers`, 4) were dropped: what arrives is
            # what was buffered, then the end. (Those waiting their turn are sent whole
            # once read.)
            dropped = 0
            for sock in sockets:
                received = 0
                sock.settimeout(2)
                with contextlib.suppress(OSError):
                    while chunk := sock.recv(1 << 20):
                        received += len(chunk)
                dropped += received < size
            assert dropped >= 4
        finally:
            for sock in sockets:
                sock.close()
        assert httpx.get(served.base + CVE).status_code == 200
        after.append(rss_mib(pid))
    # The second wave reuses the first wave's memory: nothing was left holding it.
    assert after[1] < after[0] + 2 * size / 2**20


class PeakRss:
    """The largest resident size of `pid` while the block runs (sampled every 20 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            with contextlib.suppress(OSError, AssertionError):
                self.peak = max(self.peak, rss_mib(self.pid))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _stalled_reader(served: Served, page: str) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connecting)
    sock.connect(_address(served))
    sock.sendall(f"GET {page} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return sock


@pytest.mark.slow
def test_stalled_readers_and_concurrent_large_pages_keep_memory_bounded(served: Served) -> None:
    """30 readers that never read and 16 that read at once hold a few pages between
    them, not one (or two) each: large answers are streamed piece by piece, as the socket
    takes them, and only a few are in flight at a time."""
    page = "/rest/json/cves/2.0?resultsPerPage=2000"
    whole = httpx.get(served.base + page, headers={"accept-encoding": "identity"})
    size_mib = len(whole.content) / 2**20
    assert size_mib > 6
    pid = served.process.pid
    before = rss_mib(pid)
    with PeakRss(pid) as stalled:
        sockets = [_stalled_reader(served, page) for _ in range(30)]
        try:
            time.sleep(2.5)  # (the send timeout, 3 s, has not dropped them yet)
        finally:
            for sock in sockets:
                sock.close()
    with PeakRss(pid) as concurrent, ThreadPool(16) as pool:
        answers = pool.map(
            lambda _: httpx.get(served.base + page, headers={"accept-encoding": "identity"}),
            range(16),
        )
    for answer in answers:
        assert answer.status_code == 200
        body = answer.content
        # The same bytes as one reader alone got (but the envelope's timestamp).
        assert len(body) == len(whole.content)
        assert (
            body[body.index(b'"vulnerabilities"') :]
            == whole.content[whole.content.index(b'"vulnerabilities"') :]
        )
    # Old: each of the 30 held its page twice (records and joined pieces), ~740 MiB more.
    assert stalled.peak - before < 8 * size_mib + 64, (before, stalled.peak, size_mib)
    assert concurrent.peak - before < 8 * size_mib + 64, (before, concurrent.peak, size_mib)


def test_connections_past_the_cap_get_503(served: Served) -> None:
    base = served.base
    holders = [socket.create_connection(_address(served)) for _ in range(45)]
    try:
        time.sleep(0.3)
        answer = httpx.get(base + CVE)
        assert answer.status_code == 503
    finally:
        for sock in holders:
            sock.close()
    time.sleep(0.3)
    assert httpx.get(base + CVE).status_code == 200


class CuttableProxy:
    """A TCP relay to PostgreSQL that can be cut: every connection reset, new ones refused."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = threading.Event()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.cut.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut.is_set():
                client.close()
                return
            upstream = socket.create_connection(self.target)
            self.pairs.append((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)

    def cut_off(self) -> None:
        self.cut.set()
        self.listener.close()
        for pair in self.pairs:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


@pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")
def test_a_postgresql_outage_is_a_503_within_the_timeout(tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(POSTGRES_URL)
    proxy = CuttableProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    through = POSTGRES_URL.replace(parts.netloc, f"{parts.username}@127.0.0.1:{proxy.port}")
    for url in make_store_url("postgres", tmp_path):
        proxied = url.replace(POSTGRES_URL, through)
        with serving(proxied, "--create", "--store-timeout", "2", folder=tmp_path) as server:
            assert httpx.get(server.base + CVE).status_code == 200
            proxy.cut_off()
            for path in (CVE, "/rest/json/cves/2.0?resultsPerPage=1"):
                started = time.monotonic()
                answer = httpx.get(server.base + path, timeout=30)
                elapsed = time.monotonic() - started
                assert answer.status_code == 503, path
                assert answer.headers["message"] == "The store is unavailable"
                assert elapsed < 4.5, (path, elapsed)  # one wait of ~2 s, not two


class BlackholeProxy:
    """A TCP relay to PostgreSQL that can stop forwarding without closing anything (a
    server that stops answering rather than refusing), and resume."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.closed = threading.Event()
        self.sockets: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        self._start(self._accept)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(client)
            self._start(self._relay, client)

    def _relay(self, client: socket.socket) -> None:
        self.flowing.wait()  # (a connection made while cut waits, unanswered)
        if self.closed.is_set():
            return
        try:
            upstream = socket.create_connection(self.target)
        except OSError:
            return
        self.sockets.append(upstream)
        for a, b in ((client, upstream), (upstream, client)):
            self._start(self._pump, a, b)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                self.flowing.wait()  # held, not lost, while cut
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)

    def blackhole(self) -> None:
        self.flowing.clear()

    def resume(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.closed.set()
        self.flowing.set()
        self.listener.close()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self.threads:
            thread.join(timeout=5)
        for sock in self.sockets:
            sock.close()


@pytest.mark.slow
@pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL only")
def test_a_postgresql_that_stops_answering_is_a_503_within_the_timeout(tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(POSTGRES_URL)
    proxy = BlackholeProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    through = POSTGRES_URL.replace(parts.netloc, f"{parts.username}@127.0.0.1:{proxy.port}")
    page = "/rest/json/cves/2.0?resultsPerPage=1"
    try:
        for url in make_store_url("postgres", tmp_path):
            proxied = url.replace(POSTGRES_URL, through)
            with serving(proxied, "--create", "--store-timeout", "2", folder=tmp_path) as server:
                assert httpx.get(server.base + page).status_code == 200
                proxy.blackhole()
                for path in (CVE, page, "/rest/json/cpes/2.0?resultsPerPage=1", "/readyz", "/"):
                    started = time.monotonic()
                    answer = httpx.get(server.base + path, timeout=60)
                    elapsed = time.monotonic() - started
                    assert answer.status_code == 503, (path, answer.status_code)
                    assert elapsed < 4.5, (path, elapsed)
                    assert "127.0.0.1" not in answer.text
                started = time.monotonic()
                assert httpx.get(server.base + "/healthz", timeout=60).status_code == 200
                assert time.monotonic() - started < 1
                started = time.monotonic()
                assert httpx.get(server.base + "/metrics", timeout=60).status_code in (200, 503)
                assert time.monotonic() - started < 4.5
                proxy.resume()
                deadline = time.monotonic() + 20
                while httpx.get(server.base + page, timeout=60).status_code != 200:
                    assert time.monotonic() < deadline, "no recovery after the store came back"
                    time.sleep(0.5)
                assert httpx.get(server.base + "/readyz", timeout=60).status_code == 200
                assert httpx.get(server.base + CVE, timeout=60).status_code == 200
    finally:
        proxy.close()
