"""Fixtures of the scan tests: a store of every backend with real NVD data.

`audit_store_url` holds the bundled real CVE sample, the test assets' real CVE pages and
the 10,000 real CPE dictionary products of `cpes-2023.json.gz` (whose reference links
identify components by their source repository).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import ASSETS, backends, make_store_url

NVD_ASSETS = ASSETS / "nvd"
CPES_FILE = NVD_ASSETS / "cpes-2023.json.gz"


def bundled_cves() -> Path:
    from assay._cli.nvd import bundled_files

    (path,) = [p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"]
    return path


def real_records() -> list[dict[str, Any]]:
    """Every real CVE record the store holds (bundled sample and test assets)."""
    with gzip.open(bundled_cves()) as lines:
        records = [orjson.loads(line) for line in lines]
    records = [r.get("cve", r) for r in records]
    for path in sorted((NVD_ASSETS / "cves").glob("*.json")):
        page = orjson.loads(path.read_bytes())
        records.extend(item["cve"] for item in page["vulnerabilities"])
    by_id = {r["id"]: r for r in records}
    return list(by_id.values())


@pytest.fixture(scope="session", params=backends())
def audit_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.storage import open_store

    folder = tmp_path_factory.mktemp(f"audit-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        report = Importer(store).import_files(
            [bundled_cves(), *sorted((NVD_ASSETS / "cves").glob("*.json")), CPES_FILE]
        )
        store.close()
        assert report.ok, report.problems
        yield url


@pytest.fixture(scope="session")
def audit_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same data in SQLite only (CLI and HTTP tests)."""
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.storage import open_store

    folder = tmp_path_factory.mktemp("audit-cli")
    url = f"sqlite:///{folder / 'store.db'}"
    store = open_store(url)
    report = Importer(store).import_files(
        [bundled_cves(), *sorted((NVD_ASSETS / "cves").glob("*.json")), CPES_FILE]
    )
    store.close()
    assert report.ok, report.problems
    return url


def cyclonedx(components: list[dict[str, Any]], spec: str = "1.5") -> bytes:
    return orjson.dumps(
        {"bomFormat": "CycloneDX", "specVersion": spec, "version": 1, "components": components}
    )
