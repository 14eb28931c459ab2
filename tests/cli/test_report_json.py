"""`--json` of `assay nvd import` and `assay keys generate`: the shapes docs/cli.md
describes, on stdout, with the exit codes the human output has."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay._cli.nvd import bundled_files

COUNT_KEYS = {"added", "updated", "unchanged"}


def test_import_json_shape_and_counts(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    sample = str(min(bundled_files(), key=lambda path: path.stat().st_size))
    assert cli("nvd", "import", "--json", "--store", store, sample) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"ok", "files", "failedFiles", "rejected", "records", "problems"}
    assert report["ok"] is True
    assert (report["files"], report["failedFiles"], report["rejected"]) == (1, 0, 0)
    assert report["problems"] == []
    assert report["records"], "the sample holds records"
    for counts in report["records"].values():
        assert set(counts) == COUNT_KEYS
    added = {kind: counts["added"] for kind, counts in report["records"].items()}
    assert all(n > 0 for n in added.values())
    # Again: the same records, now unchanged.
    assert cli("nvd", "import", "--json", "--store", store, sample) == 0
    again = json.loads(capsys.readouterr().out)
    assert {kind: c["unchanged"] for kind, c in again["records"].items()} == added


def test_import_json_lists_rejections_and_exits_1(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    good = min(bundled_files(), key=lambda path: path.stat().st_size)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert cli("nvd", "import", "--json", "--store", store, str(good), str(broken)) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert (report["files"], report["failedFiles"]) == (2, 1)
    assert any("broken.json" in problem for problem in report["problems"])


def test_keys_generate_json(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = tmp_path / "release"
    assert cli("keys", "generate", "--type", "ecdsa-p256", "--out", str(prefix), "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "type": "ecdsa-p256",
        "keyid": document["keyid"],
        "intotoKeyid": document["intotoKeyid"],
        "fingerprint": document["fingerprint"],
        "privateKey": f"{prefix}.key",
        "publicKey": f"{prefix}.pub",
        "encrypted": False,
    }
    from assay.keys import load_public_key

    public = load_public_key(Path(f"{prefix}.pub").read_bytes(), where="test")
    assert public.keyid == document["keyid"]


def test_keys_generate_into_a_missing_directory_is_a_clear_error(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = tmp_path / "absent" / "k"
    assert cli("keys", "generate", "--type", "ed25519", "--out", str(prefix)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"assay: error: {prefix}.key: cannot write:")
    assert "Traceback" not in err
