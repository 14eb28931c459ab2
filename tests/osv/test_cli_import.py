"""`assay osv import`: files, folders and archives of real records, with its exit codes."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.osv.conftest import OSV_ASSETS

from assay.nvd.storage import open_store


def _summary(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    out = capsys.readouterr().out
    document: dict[str, object] = json.loads(out)
    return document


def test_a_folder_imports_every_record_and_skips_other_files(
    cli: Callable[..., int], store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = OSV_ASSETS / "pypa"
    records = len(list(folder.rglob("*.yaml")))
    code = cli("osv", "import", "--store", store_url, "--json", str(folder))
    summary = _summary(capsys)
    assert code == 0
    assert summary["records"] == {"added": records, "updated": 0, "unchanged": 0}
    assert summary["skipped"] == 1  # pypa/LICENSE
    assert summary["rejected"] == 0
    store = open_store(store_url)
    try:
        assert store.count_osv() == records
    finally:
        store.close()
    # Again: nothing changes.
    assert cli("osv", "import", "--store", store_url, "--json", str(folder)) == 0
    assert _summary(capsys)["records"] == {"added": 0, "updated": 0, "unchanged": records}


def test_an_archive_as_osv_dev_publishes_it(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "all.zip"
    go = sorted((OSV_ASSETS / "go").glob("*.json"))
    with zipfile.ZipFile(archive, "w") as out:
        for path in go:
            out.write(path, path.name)
        out.writestr("README", "not a record")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("osv", "import", "--store", store, "--json", str(archive)) == 0
    summary = _summary(capsys)
    assert summary["records"] == {"added": len(go), "updated": 0, "unchanged": 0}
    assert summary["skipped"] == 1


def test_a_rejected_record_is_named_and_the_others_are_stored(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = OSV_ASSETS / "misc" / "osv-linter"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("osv", "import", "--store", store, "--json", str(folder)) == 1
    summary = _summary(capsys)
    problems = summary["problems"]
    assert isinstance(problems, list)
    assert any(
        "nointroduced-CVE-2023-41045.json at $.affected[0].ranges[0].events: expected an "
        "introduced event" in problem
        for problem in problems
    ), problems
    assert summary["records"]["added"] > 0  # type: ignore[index]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "nothing to import"),
        (("missing-folder",), "no such file or folder: missing-folder"),
    ],
)
def test_unusable_input_exits_2(
    cli: Callable[..., int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    message: str,
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("osv", "import", "--store", store, *argv) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_a_broken_archive_exits_2(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "all.zip"
    archive.write_bytes(b"PK\x03\x04 not really")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("osv", "import", "--store", store, str(archive)) == 2
    err = " ".join(capsys.readouterr().err.split())  # (rich wraps long lines)
    assert "all.zip: cannot read it: File is not a zip file" in err


def test_an_archive_member_past_the_record_limit_is_refused_unread(
    cli: Callable[..., int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assay.osv import importer, record

    limit = 64 * 1024  # (the limit made small: the test stays fast)
    monkeypatch.setattr(record, "MAX_RECORD_BYTES", limit)
    monkeypatch.setattr(importer, "MAX_RECORD_BYTES", limit)
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as out:
        out.writestr("BOMB-1.json", b" " * (1024 * limit))  # 64 MiB, ~64 KiB compressed
        path = OSV_ASSETS / "go" / "GO-2022-0375.json"
        out.write(path, path.name)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert cli("osv", "import", "--store", store, "--json", str(archive)) == 1
    summary = _summary(capsys)
    assert summary["records"] == {"added": 1, "updated": 0, "unchanged": 0}
    (problem,) = summary["problems"]  # type: ignore[misc]
    assert problem.startswith(f"{archive}:BOMB-1.json: expected a record of at most")
