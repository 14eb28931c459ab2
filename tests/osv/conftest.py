"""The real OSV records of tests/assets/osv (SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ASSETS

OSV_ASSETS = ASSETS / "osv"
BROKEN = ("nointroduced-", "nopackage-", "nondistinct-")


def record_files() -> list[Path]:
    """Every record file of the sample (the osv-linter's broken ones and the
    dependency-track fixtures without `modified` included)."""
    return sorted(
        path
        for path in OSV_ASSETS.rglob("*")
        if path.suffix in (".json", ".yaml", ".yml") and path.parent.name != "recorded"
    )  # (recorded/*.yaml are osv.dev's recorded exchanges, not records)


def valid_record_files() -> list[Path]:
    return [
        path
        for path in record_files()
        if not path.name.startswith(BROKEN) and "dependency-track" not in path.parts
    ]


def osv_sample_paths() -> list[Path]:
    """The sample's folders of valid records (the broken linter records left out)."""
    return [OSV_ASSETS / name for name in ("pypa", "go", "rustsec", "ghsa")]
