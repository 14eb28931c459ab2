"""`assay serve`'s manners: a real server process on loopback, and the CLI's refusals."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from assay._cli import main
from assay.urls import redact_url
from assay.web.accesslog import format_line
from assay.web.serving import port_problem, startup_line
from assay.web.store_state import StoreState


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_missing_store_is_refused_unless_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'typo.db'}"
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--store", store, "--port", str(free_port())])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--create" in err
    assert "typo.db" in err
    assert "Traceback" not in err
    assert not (tmp_path / "typo.db").exists()


def test_passwords_are_masked() -> None:
    assert (
        redact_url("postgresql://u:s3cret@db:5433/x?schema=a")
        == "postgresql://u:***@db:5433/x?schema=a"
    )
    assert redact_url("sqlite:///tmp/a.db") == "sqlite:///tmp/a.db"
    line = startup_line(
        "127.0.0.1",
        8000,
        2,
        StoreState("postgresql://u:pw@h/d", 7, 340000, 5, 6, "PostgreSQL schema 3", ()),
    )
    assert "pw" not in line
    assert "340,000 CVEs" in line
    assert "generation 7" in line
    assert "http://127.0.0.1:8000/" in line
    assert "2 workers" in line


def test_access_log_lines() -> None:
    common = format_line(
        "common", client="127.0.0.1", method="GET", target="/cve/CVE-2024-1?x=1",
        http_version="1.1", status=200, size=512, seconds=0.004, when=0,
    )  # fmt: skip
    assert (
        common
        == '127.0.0.1 - - [01/Jan/1970:00:00:00 +0000] "GET /cve/CVE-2024-1?x=1 HTTP/1.1" 200 512'
    )
    line = json.loads(
        format_line(
            "json",
            client="::1",
            method="HEAD",
            target="/",
            http_version="2",
            status=404,
            size=0,
            seconds=0.5,
            when=0,
        )
    )
    assert line == {
        "time": "1970-01-01T00:00:00Z", "client": "::1", "method": "HEAD", "target": "/",
        "status": 404, "bytes": 0, "ms": 500.0,
    }  # fmt: skip


@pytest.mark.slow
def test_serve_starts_says_so_warns_on_empty_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    store = f"sqlite:///{tmp_path / 'new.db'}"
    env = {**os.environ, "ASSAY_RESERVE_MIB": "0"}
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--store", store, "--create", "--port", str(port),
         "--access-log", "--log-format", "json", "--reserve-memory", "0"],
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
        assert first.startswith(f"assay serving http://127.0.0.1:{port}/ (1 worker) from {store}")
        assert "0 CVEs" in first
        assert "generation 0" in first
        assert "store is empty" in server.stderr.readline()
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        assert answer.headers["x-assay-store"] == "empty"
        assert "This store is empty" in answer.text
        api = httpx.get(f"http://127.0.0.1:{port}/rest/json/cves/2.0?resultsPerPage=1")
        assert api.headers["x-assay-store"] == "empty"
        assert httpx.get(f"http://127.0.0.1:{port}/readyz").json() == {
            "status": "ready",
            "generation": 0,
        }
        log = json.loads(server.stderr.readline())
        assert log["target"] == "/"
        assert log["status"] == 200

        # A second server on the same port: one line, exit 2.
        taken = subprocess.run(
            [sys.executable, "-m", "assay", "serve", "--store", store, "--port", str(port)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert taken.returncode == 2
        assert taken.stderr.strip().splitlines() == [
            f"assay: error: port {port} on 127.0.0.1 is already in use: stop what listens there or give --port"
        ]
        assert port_problem("127.0.0.1", port) is not None
    finally:
        server.send_signal(signal.SIGINT)
        _, rest = server.communicate(timeout=30)
    assert server.returncode == 0
    assert "Traceback" not in rest
    assert rest.strip().endswith("assay stopped")
