"""`assay attest validate | migrate | schema` through `assay._cli.main`."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest

from assay._cli import main

from .samples import SLSA_ASSETS, provenance_v02, provenance_v1, vsa_v1

VALID = SLSA_ASSETS / "github-cli/sigstore-js-2.1.0_with_2_bundles.jsonl"
BROKEN = SLSA_ASSETS / "guac/oci-kubectl-linux-amd64-in-toto.json"


def write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(value))
    return path


def test_validate_valid_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attest", "validate", str(VALID)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("valid ")
    assert "line 2: sigstore-bundle, https://slsa.dev/provenance/v1" in out
    assert "signatures were not checked" in out


def test_validate_invalid_file_names_path_and_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attest", "validate", str(VALID), str(BROKEN)]) == 1
    out = capsys.readouterr().out
    assert f"invalid {BROKEN}" in out
    assert "error $.predicate.buildType: expected a non-empty string, found nothing" in out
    assert "[missing-field]" in out


def test_validate_unreadable_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert main(["attest", "validate", str(BROKEN), str(missing)]) == 2
    out = capsys.readouterr().out
    assert f"unreadable {missing}" in out
    assert "2 files: 0 valid, 1 invalid, 1 unreadable" in out


def test_validate_not_json_is_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "key.pem"
    path.write_text("-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n")
    assert main(["attest", "validate", "--json", str(path)]) == 2
    report = orjson.loads(capsys.readouterr().out)
    assert report["files"][0]["readable"] is False
    assert "expected JSON" in report["files"][0]["error"]


def test_validate_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attest", "validate", "--json", str(BROKEN)]) == 1
    report = orjson.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["signaturesChecked"] is False
    (document,) = report["files"][0]["documents"]
    assert document["predicateType"] == "https://slsa.dev/provenance/v0.2"
    assert {
        "path": "$.predicate.buildType",
        "code": "missing-field",
        "severity": "error",
        "message": "expected a non-empty string, found nothing",
    } in document["findings"]


def test_strict_turns_warnings_into_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = vsa_v1()
    del raw["predicate"]["timeVerified"]  # a warning: optional since VSA 1.1
    path = write(tmp_path, "vsa.json", raw)
    assert main(["attest", "validate", str(path)]) == 0
    assert "warning $.predicate.timeVerified" in capsys.readouterr().out
    assert main(["attest", "validate", "--strict", "--json", str(path)]) == 1
    report = orjson.loads(capsys.readouterr().out)
    assert report["strict"] is True
    assert report["files"][0]["documents"][0]["valid"] is False


def test_validate_dsse_envelope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = base64.b64encode(orjson.dumps(provenance_v1())).decode()
    envelope = {"payloadType": "application/vnd.in-toto+json", "payload": payload, "signatures": []}
    path = write(tmp_path, "a.intoto.json", envelope)
    assert main(["attest", "validate", "--json", str(path)]) == 0
    (document,) = orjson.loads(capsys.readouterr().out)["files"][0]["documents"]
    assert document["kind"] == "dsse"
    assert document["signaturesChecked"] is False


def test_messages_with_markup_characters_are_printed_verbatim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = provenance_v1()
    raw["predicate"]["runDetails"]["builder"]["id"] = "[bold]x[/bold]"
    path = write(tmp_path, "m.json", raw)
    assert main(["attest", "validate", str(path)]) == 0
    assert "found '[bold]x[/bold]'" in capsys.readouterr().out


def test_migrate_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "v02.json", provenance_v02())
    assert main(["attest", "migrate", str(path)]) == 0
    captured = capsys.readouterr()
    statement = orjson.loads(captured.out)
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    assert "not carried over: $.predicate.buildConfig" in captured.err
    assert "unsigned" in captured.err


def test_migrate_to_file_from_real_envelope(tmp_path: Path) -> None:
    source = (
        SLSA_ASSETS / "slsa-verifier/cli/gha_go/v1.8.0/binary-linux-amd64-push-v14.intoto.jsonl"
    )
    out = tmp_path / "v1.json"
    assert main(["attest", "migrate", str(source), "--out", str(out)]) == 0
    assert main(["attest", "validate", str(out)]) == 0
    statement = orjson.loads(out.read_bytes())
    assert statement["_type"] == "https://in-toto.io/Statement/v1"


def test_migrate_refuses_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "vsa.json", vsa_v1())
    with pytest.raises(SystemExit) as raised:
        main(["attest", "migrate", str(path)])
    assert raised.value.code == 2
    assert "$.predicateType: expected" in capsys.readouterr().err


def test_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attest", "schema", "vsa-v1"]) == 0
    schema = orjson.loads(capsys.readouterr().out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "verificationResult" in schema["required"]


def test_schema_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["attest", "schema", "nope"])
    assert raised.value.code == 2
    assert "expected one of statement-v1" in capsys.readouterr().err


def test_user_docs_list_every_code_and_schema() -> None:
    from assay.attestation.findings import CODES
    from assay.attestation.schema import SCHEMA_NAMES

    docs = (Path(__file__).parents[2] / "docs" / "attestations.md").read_text()
    assert [code for code in CODES if f"| `{code}` |" not in docs] == []
    assert [name for name in SCHEMA_NAMES if f"`{name}`" not in docs] == []
