"""Exit codes are 0, 1 or 2 whatever a library does underneath."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_a_port_in_use_exits_2_without_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "assay", "serve", "--store", f"sqlite:///{tmp_path / 's.db'}",
             "--create", "--port", str(port), "--reserve-memory", "0"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "already in use" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["nvd", "import"], 2),  # nothing to import
        (["nvd", "import", "/nonexistent/file.json"], 2),
        (["nvd", "sync", "--upstream", "ftp://example"], 2),
        (["attest", "migrate", "/nonexistent.json"], 2),
        (["policies", "show", "nope"], 2),
        (["completion", "csh"], 2),
        (["no-such-command"], 2),
    ],
)
def test_unusable_input_exits_2(argv: list[str], code: int, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={"ASSAY_STORE": f"sqlite:///{tmp_path / 's.db'}", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()
