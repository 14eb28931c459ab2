"""Shared fixtures: store URLs for every backend, and stores loaded with the real sample."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

import assay._cli

if TYPE_CHECKING:
    from tests.replication import Cluster

    from assay.nvd.storage import Store

ASSETS = Path(__file__).parent / "assets"

# Timing belongs to the benchmarks: on a shared 2-core machine a property's examples may
# be slow for reasons outside the code, which must not fail the suite.
settings.register_profile("assay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("assay")
POSTGRES_URL = os.environ.get(
    "ASSAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def backends(*, replica: bool = False) -> list[str]:
    """Every backend assay has; PostgreSQL joins once its module exists. With `replica`,
    also "postgres-replica": a PostgreSQL store written on the primary and read through a
    hot standby (`open_reading`; for the store's read tests)."""
    names = ["sqlite"]
    if importlib.util.find_spec("assay.nvd.storage.postgres") is not None and not os.environ.get(
        "ASSAY_TEST_SKIP_POSTGRES"
    ):
        names.append("postgres")
        if replica:
            names.append("postgres-replica")
    return names


def make_store_url(backend: str, folder: Path) -> Iterator[str]:
    """A fresh store's URL (for "postgres-replica", its primary's: written there)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'store.db'}"
        return
    import psycopg

    schema = f"assay_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        separator = "&" if "?" in POSTGRES_URL else "?"
        yield f"{POSTGRES_URL}{separator}schema={schema}"
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=backends())
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store of each backend."""
    yield from make_store_url(request.param, tmp_path)


class LoadedStores:
    """Stores loaded once per session, name and backend (a "postgres-replica" reads the
    "postgres" one), removed when the session ends."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._urls: dict[tuple[str, str], str] = {}
        self._stack = contextlib.ExitStack()

    def url(self, backend: str, name: str, files: Callable[[], list[Path]]) -> str:
        from assay.nvd.ingest.importer import Importer
        from assay.nvd.storage import open_store

        backend = "postgres" if backend == "postgres-replica" else backend
        if (backend, name) not in self._urls:
            folder = self._factory.mktemp(f"{name}-{backend}")
            url = self._stack.enter_context(
                contextlib.contextmanager(make_store_url)(backend, folder)
            )
            store = open_store(url)
            report = Importer(store).import_files(files())
            store.close()
            assert report.ok, report.problems
            self._urls[backend, name] = url
        return self._urls[backend, name]

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="session")
def loaded_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoadedStores]:
    stores = LoadedStores(tmp_path_factory)
    yield stores
    stores.close()


def sample_files() -> list[Path]:
    from assay._cli.nvd import bundled_files

    return [
        *bundled_files(),
        *sorted((ASSETS / "nvd" / "cves").glob("*.json")),
        ASSETS / "nvd" / "sources-20.json.gz",
    ]


@pytest.fixture(scope="session", params=backends())
def sample_store_url(request: pytest.FixtureRequest, loaded_stores: LoadedStores) -> str:
    """A store of each backend loaded once with the bundled sample and the test assets."""
    return loaded_stores.url(request.param, "sample", sample_files)


@pytest.fixture(scope="session")
def standby() -> Iterator[Cluster]:
    """A hot standby of the test primary (`tests/replication.py`), for the session."""
    if "postgres" not in backends():
        pytest.skip("PostgreSQL is not tested here (ASSAY_TEST_SKIP_POSTGRES)")
    from tests.replication import ReplicationUnavailable, shared_standby

    with contextlib.ExitStack() as stack:
        try:
            cluster = stack.enter_context(shared_standby())
        except ReplicationUnavailable as error:
            pytest.skip(f"no streaming replication here: {error}")
        yield cluster


def open_reading(request: pytest.FixtureRequest, backend: str, url: str) -> Store:
    """The store at `url` opened for reading as `backend` says: "postgres-replica" reads
    through the session's hot standby (once it has replayed every write so far)."""
    from assay.nvd.storage import open_store

    if backend != "postgres-replica":
        return open_store(url)
    from tests.replication import wait_replayed

    cluster: Cluster = request.getfixturevalue("standby")
    wait_replayed(POSTGRES_URL, cluster.url())
    return open_store(url, read_urls=[cluster.same_store(url)])


@pytest.fixture
def asset() -> Callable[[str], Path]:
    """A file of tests/assets/verify (signing and verification vectors)."""

    def find(name: str) -> Path:
        path = ASSETS / "verify" / name
        assert path.exists(), path
        return path

    return find


@pytest.fixture
def cli() -> Callable[..., int]:
    """`assay._cli.main` returning the exit code, whether returned or raised."""

    def run(*argv: str) -> int:
        try:
            return assay._cli.main(list(argv))
        except SystemExit as exit_:
            return int(exit_.code or 0)

    return run
