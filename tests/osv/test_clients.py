"""Real OSV clients against `assay serve`: pip-audit (`-s osv --osv-url`)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.osv.conftest import osv_sample_paths

from assay._cli import main

PIP_AUDIT = shutil.which("pip-audit") or str(Path(sys.executable).with_name("pip-audit"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
@pytest.mark.skipif(not Path(PIP_AUDIT).exists(), reason="pip-audit is not installed")
def test_pip_audit_reads_the_served_osv_api(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert main(["osv", "import", "--store", store, "--json", *map(str, osv_sample_paths())]) == 0
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--store", store, "--port", str(port),
         "--reserve-memory", "0"],
        stderr=subprocess.DEVNULL, env={**os.environ, "ASSAY_RESERVE_MIB": "0"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        requirements = tmp_path / "requirements.txt"
        requirements.write_text("urllib3==1.26.5\nrequests==2.19.0\nflask==3.0.0\n")
        run = subprocess.run(
            [PIP_AUDIT, "-r", str(requirements), "--no-deps", "--disable-pip", "-s", "osv",
             "--osv-url", f"http://127.0.0.1:{port}/v1/query", "-f", "json",
             "--cache-dir", str(tmp_path / "cache"), "--progress-spinner", "off"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert run.returncode == 1, run.stderr  # vulnerabilities found
        report = json.loads(run.stdout)
        found = {d["name"]: {v["id"] for v in d["vulns"]} for d in report["dependencies"]}
        # (pip-audit reports one of the records that alias each other)
        assert {"PYSEC-2023-192", "PYSEC-2023-212"} <= found["urllib3"]
        assert found["requests"] == {"PYSEC-2018-28", "PYSEC-2023-74"}
        assert found["flask"] == set()
        fixes = {v["id"]: v["fix_versions"] for d in report["dependencies"] for v in d["vulns"]}
        assert "1.26.17" in fixes["PYSEC-2023-192"]
    finally:
        server.terminate()
        server.wait(timeout=30)
