"""`--json` of `assay attest migrate` and `assay attest schema --list`: the shapes
docs/cli.md describes, and human output that keeps losses and notes apart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from tests.attestation.samples import SLSA_ASSETS, provenance_v01, provenance_v02

REAL_JSONL = (
    SLSA_ASSETS / "slsa-verifier/cli/gha_go/v1.8.0/binary-linux-amd64-push-v14.intoto.jsonl"
)


def _write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(value))
    return path


def test_migrate_reports_losses_and_notes_apart(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "v02.json", provenance_v02())
    assert cli("attest", "migrate", str(path)) == 0
    err = capsys.readouterr().err.splitlines()
    assert "not carried over: $.predicate.buildConfig: removed in v1" in "\n".join(err)
    assert not any(line.startswith("not carried over: $.predicate.buildType") for line in err)
    assert any(line.startswith("note: $.predicate.buildType: carried unchanged") for line in err)


def test_migrate_json_shape(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "v01.json", provenance_v01())
    assert cli("attest", "migrate", "--json", str(path)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    report = orjson.loads(captured.out)
    assert set(report) == {"file", "out", "signed", "documents"}
    assert report["file"] == str(path)
    assert report["out"] is None
    assert report["signed"] is False
    [document] = report["documents"]
    assert set(document) == {"location", "sourcePredicateType", "losses", "notes", "statement"}
    assert document["sourcePredicateType"] == "https://slsa.dev/provenance/v0.1"
    assert document["statement"]["predicateType"] == "https://slsa.dev/provenance/v1"
    assert all(set(loss) == {"path", "reason"} for loss in document["losses"])
    assert all(set(note) == {"path", "message"} for note in document["notes"])
    notes = {note["path"] for note in document["notes"]}
    assert "$.predicate.recipe.definedInMaterial" in notes
    assert not notes & {loss["path"] for loss in document["losses"]}


def test_migrate_json_with_out_writes_the_statements_too(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "v1.jsonl"
    assert cli("attest", "migrate", "--json", "--out", str(out), str(REAL_JSONL)) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["out"] == str(out)
    [document] = report["documents"]  # one statement: written pretty-printed
    assert orjson.loads(out.read_bytes()) == document["statement"]
    assert cli("attest", "validate", str(out)) == 0


def test_schema_list_json_shape(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("attest", "schema", "--list", "--json") == 0
    listing = orjson.loads(capsys.readouterr().out)
    assert set(listing) == {"schemas"}
    names = [entry["name"] for entry in listing["schemas"]]
    assert "provenance-v1" in names
    assert "vsa-v1-statement" in names
    for entry in listing["schemas"]:
        assert set(entry) == {"name", "id", "title"}
        assert cli("attest", "schema", entry["name"]) == 0
        assert orjson.loads(capsys.readouterr().out)["$id"] == entry["id"]


def test_schema_list_human(cli: Callable[..., int], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("attest", "schema", "--list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith("provenance-v1 ") and "https://slsa.dev/provenance/v1" in line
        for line in lines
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("attest", "schema"),
        ("attest", "schema", "vsa-v1", "--list"),
        ("attest", "schema", "vsa-v1", "--json"),
        ("attest", "schema", "bogus"),
    ],
)
def test_schema_usage_errors_exit_2(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    assert cli(*argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("assay: error: ")
    assert "Traceback" not in err
