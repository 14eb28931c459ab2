"""Fixtures of the CVE 5, KEV and EPSS tests: the real records of tests/assets/cve5."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cve5.record import CveRecord, read_record

ASSETS = Path(__file__).parent.parent / "assets" / "cve5"
KEV_FILE = ASSETS / "kev" / "known_exploited_vulnerabilities.json"
EPSS_FILE = ASSETS / "epss" / "epss_scores-sample.csv"


def record_paths() -> list[Path]:
    return sorted(p for p in ASSETS.rglob("*.json") if not {"kev", "nvd"} & set(p.parts))


@pytest.fixture(scope="session")
def records() -> list[CveRecord]:
    return [read_record(path.read_bytes(), str(path)) for path in record_paths()]
