"""Fixtures of the product, match-criteria and history tests: the real samples in a store.

`products_store_url` holds, for every backend: the bundled CVE sample, the 10,000 real
CPE products of `cpes-2023.json.gz`, the real match criteria of CVE-2022-32223 with that
CVE itself (converted from the 1.1 feed, `products/CVE-2022-32223.json`), and the real
change history of CVE-2019-1010218.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from starlette.testclient import TestClient
from tests.conftest import ASSETS, LoadedStores, backends, make_store_url

from assay.nvd.server.app import create_app
from assay.nvd.storage import open_store

if TYPE_CHECKING:
    from assay.nvd.storage.postgres import PostgresStore
    from assay.nvd.storage.sqlite import SqliteStore

NVD_ASSETS = ASSETS / "nvd"
CPES_FILE = NVD_ASSETS / "cpes-2023.json.gz"
CPEMATCH_FILE = NVD_ASSETS / "nvdgo-cpematch-CVE-2022-32223.json.gz"
HISTORY_FILE = NVD_ASSETS / "cvehistory-CVE-2019-1010218.json.gz"
CVE_32223_FILE = NVD_ASSETS / "products" / "CVE-2022-32223.json"
PRODUCT_FILES = (CPES_FILE, CPEMATCH_FILE, HISTORY_FILE, CVE_32223_FILE)


def response(path: Path) -> dict[str, Any]:
    """A whole NVD response file, parsed."""
    data = path.read_bytes()
    parsed: dict[str, Any] = orjson.loads(gzip.decompress(data) if path.suffix == ".gz" else data)
    return parsed


def bundled_cves() -> Path:
    from assay._cli.nvd import bundled_files

    (path,) = [p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"]
    return path


def product_files() -> list[Path]:
    return [bundled_cves(), *PRODUCT_FILES]


@pytest.fixture(scope="session", params=backends())
def products_store_url(request: pytest.FixtureRequest, loaded_stores: LoadedStores) -> str:
    return loaded_stores.url(request.param, "products", product_files)


@pytest.fixture(scope="session")
def products_client(products_store_url: str) -> Iterator[TestClient]:
    store = open_store(products_store_url)
    with TestClient(create_app(store)) as client:
        yield client
    store.close()


@pytest.fixture(scope="module")
def bundled_stores(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SqliteStore, PostgresStore]]:
    """The bundled data in a SQLite store and in a PostgreSQL one (PostgreSQL-only
    tests: needs the backend), for the module. (The PostgreSQL store is imported here:
    the module needs psycopg.)"""
    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.storage.postgres import PostgresStore
    from assay.nvd.storage.sqlite import SqliteStore

    folder = tmp_path_factory.mktemp("bundled")
    sqlite = open_store(f"sqlite:///{folder / 'store.db'}")
    assert isinstance(sqlite, SqliteStore)
    assert Importer(sqlite).import_files(list(bundled_files())).ok
    for url in make_store_url("postgres", folder):
        postgres = open_store(url)
        assert isinstance(postgres, PostgresStore)
        assert Importer(postgres).import_files(list(bundled_files())).ok
        yield sqlite, postgres
        postgres.close()
    sqlite.close()
