"""Shared fixtures: store URLs for every backend, and stores loaded with the real sample."""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import assay._cli

ASSETS = Path(__file__).parent / "assets"

# Timing belongs to the benchmarks: on a shared 2-core machine a property's examples may
# be slow for reasons outside the code, which must not fail the suite.
settings.register_profile("assay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("assay")
POSTGRES_URL = os.environ.get(
    "ASSAY_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def backends() -> list[str]:
    """Every backend assay has; PostgreSQL joins once its module exists."""
    names = ["sqlite"]
    if importlib.util.find_spec("assay.nvd.storage.postgres") is not None and not os.environ.get(
        "ASSAY_TEST_SKIP_POSTGRES"
    ):
        names.append("postgres")
    return names


def make_store_url(backend: str, folder: Path) -> Iterator[str]:
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


@pytest.fixture(scope="session", params=backends())
def sample_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A store of each backend loaded once with the bundled sample and the test assets."""
    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.storage import open_store

    folder = tmp_path_factory.mktemp(f"sample-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = Importer(store).import_files(
            [
                *bundled_files(),
                *sorted((ASSETS / "nvd" / "cves").glob("*.json")),
                ASSETS / "nvd" / "sources-20.json.gz",
            ]
        )
        store.close()
        assert report.ok, report.problems
        yield url


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
