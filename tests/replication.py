"""Real PostgreSQL streaming replication for the tests: hot standbys of a primary.

The test primary (`ASSAY_TEST_POSTGRES_URL`, Debian's cluster at 127.0.0.1:5432) gets a
hot standby on a loopback port (`ASSAY_TEST_STANDBY_PORT`, default 5433): a fresh
directory filled by `pg_basebackup -R` (which writes `primary_conninfo` and
`standby.signal`), started with `pg_ctl` as the `postgres` user (PostgreSQL refuses to
run as root). A standby of this primary already running on that port is reused, and
left running; one started here is stopped and removed when its last user is done.

Replication connections must be allowed by the primary's pg_hba.conf; Debian's default
allows only ordinary ones. Running as root, the one line `REPLICATION_LINE` is added
(once) and the primary reloaded; otherwise the reason says exactly what to add.

`python -m tests.replication up|down` does the same for `.ci/run`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit, urlunsplit

import psycopg

PRIMARY_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
STANDBY_PORT = int(os.environ.get("ASSAY_TEST_STANDBY_PORT", "5433"))
REPLICATION_LINE = "host replication all 127.0.0.1/32 trust"
REPLICATION_COMMENT = (
    "# assay tests: streaming replication to a local hot standby (tests/replication.py)"
)
# What a hot standby must have at least as high as its primary (else it refuses to start).
AT_LEAST_PRIMARY = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)
STATE_DIR = Path(tempfile.gettempdir())


class ReplicationUnavailable(Exception):
    """Why a standby cannot be set up here (the tests that need one are skipped)."""


@dataclass(frozen=True)
class Cluster:
    """A PostgreSQL server on a loopback port, and the directory it runs from."""

    port: int
    directory: Path | None  # None: not ours to stop (found running)

    def url(self, database: str = "test") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def same_store(self, url: str) -> str:
        """`url` (a store on another server of this machine) on this server instead."""
        parts = urlsplit(url)
        return urlunsplit(
            parts._replace(netloc=f"{parts.username or 'postgres'}@127.0.0.1:{self.port}")
        )

    def stop(self, mode: str = "fast") -> None:
        assert self.directory is not None
        _as_postgres([_binary("pg_ctl"), "-D", str(self.directory), "-m", mode, "-w", "stop"])

    def start(self) -> None:
        assert self.directory is not None
        _as_postgres(
            [_binary("pg_ctl"), "-D", str(self.directory), "-l", str(self.directory / "log"),
             "-w", "-t", "60", "start"]
        )  # fmt: skip

    def remove(self) -> None:
        if self.directory is not None:
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop("immediate")
            shutil.rmtree(self.directory, ignore_errors=True)


# -- the primary's side ------------------------------------------------------------------


def replication_refusal(url: str) -> str | None:
    """Why `url`'s server refuses a replication connection from here, or None."""
    try:
        with psycopg.connect(url, replication="true", autocommit=True, connect_timeout=5) as conn:
            conn.execute("IDENTIFY_SYSTEM")
    except psycopg.Error as error:
        return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return None


def allow_replication(url: str = PRIMARY_URL) -> None:
    """Make sure the primary accepts replication connections from 127.0.0.1: as root, by
    adding `REPLICATION_LINE` to its pg_hba.conf (once) and reloading; otherwise
    `ReplicationUnavailable` says what to add."""
    refusal = replication_refusal(url)
    if refusal is None:
        return
    if "pg_hba.conf" not in refusal:
        raise ReplicationUnavailable(f"the primary at {url} refuses replication: {refusal}")
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute("SHOW hba_file").fetchone()
    hba = Path(str(row[0])) if row else None
    advice = (
        f"the primary refuses replication connections ({refusal}); add the line "
        f"'{REPLICATION_LINE}' to {hba or 'its pg_hba.conf'} and reload it "
        "(SELECT pg_reload_conf())"
    )
    if hba is None or os.geteuid() != 0 or not os.access(hba, os.W_OK):
        raise ReplicationUnavailable(advice)
    lines = hba.read_text().splitlines()
    if REPLICATION_LINE not in (line.strip() for line in lines):
        with hba.open("a") as out:
            out.write(f"{REPLICATION_COMMENT}\n{REPLICATION_LINE}\n")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("SELECT pg_reload_conf()")
    for _ in range(50):
        if replication_refusal(url) is None:
            return
        time.sleep(0.1)
    raise ReplicationUnavailable(advice)


def _primary_facts(url: str) -> tuple[int, str, dict[str, str]]:
    with psycopg.connect(url, autocommit=True) as connection:
        major = int(str(connection.execute("SHOW server_version_num").fetchone()[0])) // 10000  # type: ignore[index]
        system = str(
            connection.execute("SELECT system_identifier FROM pg_control_system()").fetchone()[0]
        )  # type: ignore[index]
        settings = {
            name: str(connection.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            for name in AT_LEAST_PRIMARY
        }
    return major, system, settings


# -- binaries, users ---------------------------------------------------------------------

_BINDIR: list[Path] = []


def _binary(name: str) -> str:
    """`name` from the primary's PostgreSQL version (Debian keeps pg_ctl off PATH)."""
    for folder in _BINDIR:
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    if found is None:
        raise ReplicationUnavailable(f"{name} is not installed (PostgreSQL's server binaries)")
    return found


def _use_version(major: int) -> None:
    folder = Path(f"/usr/lib/postgresql/{major}/bin")
    if folder.is_dir() and folder not in _BINDIR:
        _BINDIR.insert(0, folder)


def _as_postgres(command: list[str]) -> None:
    """Run a PostgreSQL server command as the `postgres` user when running as root."""
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            raise ReplicationUnavailable("running as root without runuser to become postgres")
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(
            done.returncode, command, done.stdout, f"{done.stdout}\n{done.stderr}"
        )


def _fresh_directory(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=STATE_DIR))
    folder.chmod(0o700)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    return folder


def _port_answers(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- a standby ---------------------------------------------------------------------------


def _standby_config(port: int, folder: Path, settings: dict[str, str]) -> str:
    lines = [
        f"port = {port}",
        "listen_addresses = '127.0.0.1'",
        f"unix_socket_directories = '{folder}'",
        "hot_standby = on",
        "shared_buffers = 32MB",
        "fsync = off",  # a throwaway copy: speed over durability
        "wal_receiver_status_interval = 1s",
        "hot_standby_feedback = on",
        "max_standby_streaming_delay = 5s",
        *(f"{name} = {value}" for name, value in settings.items()),
    ]
    return "\n".join(lines) + "\n"


HBA = "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n"


def start_standby(primary_url: str, port: int) -> Cluster:
    """A new hot standby of `primary_url` on `port` (its directory removed by `remove`)."""
    major, _, settings = _primary_facts(primary_url)
    _use_version(major)
    folder = _fresh_directory(f"assay-standby-{port}-")
    cluster = Cluster(port, folder)
    target = psycopg.conninfo.conninfo_to_dict(primary_url)
    try:
        _as_postgres(
            [_binary("pg_basebackup"), "-h", str(target.get("host", "127.0.0.1")),
             "-p", str(target.get("port", "5432")), "-U", str(target.get("user", "postgres")),
             "-D", str(folder), "-R", "-X", "stream", "-c", "fast", "--no-sync"]
        )  # fmt: skip
        for name, text in (
            ("postgresql.conf", _standby_config(port, folder, settings)),
            ("pg_hba.conf", HBA),
            ("pg_ident.conf", ""),
        ):
            path = folder / name
            path.write_text(text)
            if os.geteuid() == 0:
                shutil.chown(path, "postgres", "postgres")
        cluster.start()
    except BaseException:
        cluster.remove()
        raise
    return cluster


def standby_of(primary_url: str, port: int) -> bool:
    """Whether a hot standby of `primary_url`'s cluster answers on `port`."""
    if not _port_answers(port):
        return False
    _, system, _ = _primary_facts(primary_url)
    try:
        with psycopg.connect(Cluster(port, None).url("postgres"), connect_timeout=5) as connection:
            row = connection.execute(
                "SELECT pg_is_in_recovery(), system_identifier FROM pg_control_system()"
            ).fetchone()
    except psycopg.Error:
        return False
    return row is not None and bool(row[0]) and str(row[1]) == system


def wait_replayed(primary_url: str, standby_url: str, timeout: float = 60.0) -> None:
    """Wait until the standby has replayed everything the primary has written so far."""
    with psycopg.connect(primary_url, autocommit=True) as primary:
        lsn = str(primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0])  # type: ignore[index]
    deadline = time.monotonic() + timeout
    with psycopg.connect(standby_url, autocommit=True) as standby:
        while True:
            row = standby.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)
            ).fetchone()
            if row is not None and row[0]:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the standby did not replay up to {lsn} in {timeout:g} s")
            time.sleep(0.02)


# -- shared use: one standby per port for every test process of the machine -------------


def _lock(path: Path, mode: int, *, blocking: bool = True) -> IO[str]:
    handle = path.open("a+")
    fcntl.flock(handle, mode | (0 if blocking else fcntl.LOCK_NB))
    return handle


@contextlib.contextmanager
def shared_standby(primary_url: str = PRIMARY_URL, port: int = STANDBY_PORT) -> Iterator[Cluster]:
    """A hot standby of the primary for the block: the one on `port` if it is running
    (left running), else one started here and, once no other test process of this machine
    uses it any more, stopped and removed. Raises `ReplicationUnavailable` with the reason
    when replication cannot be set up."""
    allow_replication(primary_url)
    setup = _lock(STATE_DIR / f"assay-standby-{port}.lock", fcntl.LOCK_EX)
    try:
        if standby_of(primary_url, port):
            cluster = Cluster(port, None)
        elif _port_answers(port):
            raise ReplicationUnavailable(f"port {port} is taken by something else than a standby "
                                         f"of {primary_url}: set ASSAY_TEST_STANDBY_PORT")  # fmt: skip
        else:
            try:
                cluster = start_standby(primary_url, port)
            except subprocess.CalledProcessError as error:
                raise ReplicationUnavailable(
                    f"starting a standby failed: {' '.join(error.cmd)}: {error.stderr.strip()[-500:]}"
                ) from None
        users = _lock(STATE_DIR / f"assay-standby-{port}.users", fcntl.LOCK_SH)
    finally:
        setup.close()
    try:
        yield cluster
    finally:
        users.close()
        if cluster.directory is not None:
            # Stopped once no other process holds it (they hold the users lock shared).
            with (
                _lock(STATE_DIR / f"assay-standby-{port}.lock", fcntl.LOCK_EX),
                _lock(STATE_DIR / f"assay-standby-{port}.users", fcntl.LOCK_EX),
            ):
                cluster.remove()


@contextlib.contextmanager
def throwaway_primary(shared_buffers: str = "32MB") -> Iterator[Cluster]:
    """A new, empty PostgreSQL cluster of its own (`initdb`) on a free port, for tests
    that stop the primary or need a setting of their own: never the shared one."""
    with psycopg.connect(PRIMARY_URL, autocommit=True) as connection:
        major = int(str(connection.execute("SHOW server_version_num").fetchone()[0])) // 10000  # type: ignore[index]
    _use_version(major)
    folder = _fresh_directory("assay-primary-")
    port = free_port()
    cluster = Cluster(port, folder)
    try:
        try:
            _as_postgres(
                [_binary("initdb"), "-D", str(folder), "-U", "postgres", "-A", "trust",
                 "--no-sync", "-E", "UTF8", "--locale", "C"]
            )  # fmt: skip
        except subprocess.CalledProcessError as error:
            raise ReplicationUnavailable(f"initdb failed: {error.stderr.strip()[-500:]}") from None
        with (folder / "postgresql.conf").open("a") as out:
            out.write(
                f"port = {port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{folder}'\nfsync = off\nshared_buffers = {shared_buffers}\n"
                "wal_level = replica\nmax_wal_senders = 5\n"
            )
        cluster.start()
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as connection:
            connection.execute("CREATE DATABASE test")
        yield cluster
    finally:
        cluster.remove()


# -- `.ci/run` ---------------------------------------------------------------------------

CI_STATE = STATE_DIR / "assay-ci-standby"


def main(argv: list[str]) -> int:
    """`up`: a standby for the suite on STANDBY_PORT (left running; its directory written
    to CI_STATE when started here); `down`: stop the one `up` started."""
    if argv == ["up"]:
        try:
            allow_replication(PRIMARY_URL)
            if standby_of(PRIMARY_URL, STANDBY_PORT):
                print(f"replication: a standby already answers on port {STANDBY_PORT}")
                return 0
            cluster = start_standby(PRIMARY_URL, STANDBY_PORT)
        except (ReplicationUnavailable, subprocess.CalledProcessError) as error:
            print(f"replication: no standby, the replica tests will be skipped: {error}")
            return 0
        CI_STATE.write_text(str(cluster.directory))
        print(f"replication: hot standby of {PRIMARY_URL} on port {STANDBY_PORT}")
        return 0
    if argv == ["down"]:
        if CI_STATE.exists():
            Cluster(STANDBY_PORT, Path(CI_STATE.read_text().strip())).remove()
            CI_STATE.unlink()
        return 0
    print("usage: python -m tests.replication up|down", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
