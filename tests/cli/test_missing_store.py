"""A mistyped --store is refused, naming it, by every command that only reads a store or
adds keys to it; only the commands that fill a store (import, sync) or say --create make one.
Before, `assay scan` and `assay api-keys` silently created an empty store at the typo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import StoreError
from assay.nvd.storage import open_store, store_exists


def _assay(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env={**os.environ, "ASSAY_STORE": ""},
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--purl", "pkg:pypi/django@4.2.0"],
        ["api-keys", "create", "ci"],
        ["api-keys", "list"],
    ],
)
def test_a_missing_store_is_refused_and_not_created(argv: list[str], tmp_path: Path) -> None:
    typo = tmp_path / "stroe.db"
    done = _assay(*argv, "--store", f"sqlite:///{typo}", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert str(typo) in done.stderr
    assert "no store there" in done.stderr
    assert "Traceback" not in done.stderr
    assert not typo.exists()


def test_api_keys_create_makes_the_store_with_create(tmp_path: Path) -> None:
    store = tmp_path / "new.db"
    done = _assay(
        "api-keys",
        "create",
        "ci",
        "--json",
        "--store",
        f"sqlite:///{store}",
        "--create",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "ci"
    assert store.exists()


def test_open_store_without_create_names_the_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'absent.db'}"
    with pytest.raises(StoreError, match=r"absent\.db: no store there"):
        open_store(url, create=False)
    assert not store_exists(url)
    open_store(url).close()  # the default still creates, as importers need
    assert store_exists(url)
    open_store(url, create=False).close()
