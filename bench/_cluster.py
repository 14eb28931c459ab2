"""A private PostgreSQL cluster for a benchmark: the machine's PostgreSQL binaries,
`initdb` into a fresh directory, started on a free loopback port with the settings a
deployment would give it (docs/scale.md: `shared_buffers` that hold the tables and
indexes the queries read), stopped and removed when the benchmark is done.

The machine's own server keeps its settings: other users (the tests) share it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.bench_nvd import _free_port


@contextlib.contextmanager
def private_cluster(settings: dict[str, str]) -> Iterator[str]:
    """A server with `settings` (`-c name=value`); yields its URL (database `test`)."""
    binaries = _binaries()
    folder = Path(tempfile.mkdtemp(prefix="assay-bench-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    port = _free_port()
    options = [
        f"-p {port}",
        "-c listen_addresses=127.0.0.1",
        f"-c unix_socket_directories={folder}",
    ]
    options += [f"-c {name}={value}" for name, value in settings.items()]
    try:
        _as_postgres([str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"])
        _as_postgres(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                " ".join(options),
                "-l",
                str(folder / "log"),
                "-w",
                "start",
            ]
        )
        url = f"postgresql://postgres@127.0.0.1:{port}"
        _as_postgres(
            [
                str(binaries / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "test",
            ]
        )
        print(f"private PostgreSQL cluster at {url} ({options})", flush=True)
        yield f"{url}/test"
    finally:
        if (data / "postmaster.pid").exists():
            _as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
        shutil.rmtree(folder, ignore_errors=True)


def _binaries() -> Path:
    """The newest installed PostgreSQL's server binaries (Debian keeps them off PATH)."""
    found = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin/initdb") if p.parts[-3].isdigit()),
        key=lambda p: int(p.parts[-3]),
    )
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise SystemExit("--shared-buffers: no initdb here (PostgreSQL's server binaries)")
    return Path(initdb).parent


def _as_postgres(command: list[str]) -> None:
    """Run a server command as the `postgres` user when running as root (PostgreSQL
    refuses to run as root)."""
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: {done.stdout}{done.stderr}")
