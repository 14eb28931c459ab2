"""Real `assay serve` processes on loopback ports, for the service tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass(frozen=True)
class Served:
    base: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def workers(self) -> list[int]:
        """The serving processes: the workers when there are several, else the server."""
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                pid = int(stat.parent.name)
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if int(fields[1]) == self.process.pid and b"resource_tracker" not in cmdline:
                    children.append(pid)
        return children or [self.process.pid]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no VmRSS for {pid}")


def thread_count(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


@contextlib.contextmanager
def serving(
    store_url: str, *options: str, folder: Path, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """`assay serve --store store_url *options` on a free port, until the block ends."""
    port = free_port()
    log = folder / f"serve-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay", "serve", "--store", store_url, "--port", str(port),
             "--reserve-memory", "0", *options],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"assay serve exited {process.returncode}: {log.read_text()}")
            try:
                httpx.get(f"{base}/openapi.json", timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield Served(base, process, log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
