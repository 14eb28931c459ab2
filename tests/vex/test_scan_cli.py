"""`assay scan --vex`: statements on findings, exit codes held to the library's verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.audit.conftest import cyclonedx, real_records

from assay.audit import StoreSource, read_input, scan
from assay.audit.rules import evaluate, parse_fail_on
from assay.audit.vex import UNSIGNED_NOTE, apply_vex
from assay.keys import PrivateKey
from assay.nvd.storage import open_store
from assay.vex import read_vex

from .samples import openvex, sign, statement_of

pytest_plugins = ["tests.audit.conftest"]


def _names(count: int) -> list[str]:
    names = []
    for record in real_records():
        for configuration in record.get("configurations", []):
            for node in configuration["nodes"]:
                for match in node["cpeMatch"]:
                    version = match["criteria"].split(":")[5]
                    if match["vulnerable"] and version not in ("*", "-"):
                        names.append(match["criteria"])
    return sorted(set(names))[:count]


@pytest.fixture(scope="module")
def bom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    components = [
        {
            "type": "library",
            "bom-ref": f"ref-{i}",
            "name": n.split(":")[4],
            "version": n.split(":")[5],
            "cpe": n,
            "purl": f"pkg:generic/{n.split(':')[3]}/{n.split(':')[4]}@{n.split(':')[5]}",
        }
        for i, n in enumerate(_names(12))
    ]
    path = tmp_path_factory.mktemp("vex-scan") / "bom.json"
    path.write_bytes(cyclonedx(components))
    return path


def _scan(
    cli: Callable[..., int], store: str, bom: Path, out: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    code = cli(
        "scan", str(bom), "--store", store, "--format", "json", "--out", str(out),
        "--fail-on", "severity>=LOW", *extra,
    )  # fmt: skip
    return code, orjson.loads(out.read_bytes()) if out.exists() else {}


def _findings(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(c, v) for c in document["components"] for v in c["vulnerabilities"]]


def _not_affected(findings: list[tuple[dict[str, Any], dict[str, Any]]]) -> bytes:
    statements = [
        {
            "vulnerability": {"name": v["id"]},
            # the purl without its version: every version of the product
            "products": [{"@id": c["purl"].split("@")[0]}],
            "status": "not_affected",
            "justification": "vulnerable_code_not_in_execute_path",
            "impact_statement": "not called",
        }
        for c, v in findings
    ]
    return openvex(*statements)


def test_not_affected_findings_stay_and_fail_nothing(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    code, before = _scan(cli, audit_sqlite_url, bom, tmp_path / "before.json")
    findings = [(c, v) for c, v in _findings(before) if not v["conditional"]]
    assert code == 1
    assert findings
    vex = tmp_path / "vendor.openvex.json"
    vex.write_bytes(_not_affected(findings))
    code, after = _scan(cli, audit_sqlite_url, bom, tmp_path / "after.json", "--vex", str(vex))
    assert code == 0
    assert len(_findings(after)) == len(_findings(before))  # they stay in the output
    marked = [v for _, v in _findings(after) if "vex" in v]
    assert len(marked) >= len(findings)
    assert marked[0]["vex"] == {
        "status": "not_affected",
        "justification": "vulnerable_code_not_in_execute_path",
        "impact": "not called",
        "actionStatement": None,
        "document": "https://example.com/vex/1",
        "author": "Example Vendor",
        "timestamp": "2024-01-01T00:00:00Z",
    }
    assert after["verdict"]["passed"] is True
    assert len(after["verdict"]["vexSuppressed"]) == len(marked)
    (listed,) = [i for i in after["inputs"] if i["file"] == str(vex)]
    assert listed["format"] == "openvex"
    assert listed["signatureVerified"] is False
    assert UNSIGNED_NOTE in listed["notes"]

    # the exit code is the library's verdict over the same inputs
    store = open_store(audit_sqlite_url)
    try:
        result = scan([read_input(bom.read_bytes(), str(bom))], StoreSource(store))
    finally:
        store.close()
    applied = apply_vex(result, [read_vex(vex.read_bytes(), str(vex))])
    verdict = evaluate(
        applied.result, [parse_fail_on("severity>=LOW")], [], today=datetime.now(UTC).date()
    )
    assert verdict.passed is (code == 0)
    assert len(verdict.suppressed) == len(after["verdict"]["vexSuppressed"])


def test_affected_statement_still_fails_and_newest_wins(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    _, before = _scan(cli, audit_sqlite_url, bom, tmp_path / "before.json")
    component, finding = next((c, v) for c, v in _findings(before) if not v["conditional"])
    base = {"vulnerability": finding["id"], "products": [component["purl"]]}
    older = tmp_path / "older.json"
    older.write_bytes(
        openvex({**base, "status": "not_affected", "justification": "component_not_present"})
    )
    newer = tmp_path / "newer.json"
    newer.write_bytes(
        openvex(
            {**base, "status": "affected", "action_statement": "upgrade"},
            timestamp="2024-06-01T00:00:00Z",
        )
    )
    for order in ((older, newer), (newer, older)):
        code, after = _scan(
            cli, audit_sqlite_url, bom, tmp_path / "after.json",
            "--vex", str(order[0]), str(order[1]),
        )  # fmt: skip
        assert code == 1
        (marked,) = [
            v
            for c, v in _findings(after)
            if c["ref"] == component["ref"] and v["id"] == finding["id"]
        ]
        assert marked["vex"]["status"] == "affected"
        assert marked["vex"]["actionStatement"] == "upgrade"


def test_signed_vex_verifies_with_vex_key(  # noqa: PLR0917 - pytest fixtures
    cli: Callable[..., int],
    audit_sqlite_url: str,
    bom: Path,
    tmp_path: Path,
    vendor_key: PrivateKey,
    other_key: PrivateKey,
) -> None:
    _, before = _scan(cli, audit_sqlite_url, bom, tmp_path / "before.json")
    findings = [(c, v) for c, v in _findings(before) if not v["conditional"]]
    signed = tmp_path / "vex.dsse.json"
    signed.write_bytes(sign(statement_of(_not_affected(findings)), vendor_key))
    key = tmp_path / "vendor.pub"
    key.write_bytes(vendor_key.public_key().to_pem())
    code, after = _scan(
        cli, audit_sqlite_url, bom, tmp_path / "after.json", "--vex", str(signed),
        "--vex-key", str(key),
    )  # fmt: skip
    assert code == 0
    (listed,) = [i for i in after["inputs"] if i["file"] == str(signed)]
    assert listed["signatureVerified"] is True
    assert listed["notes"][0].startswith(f"signed by {key} (key: ")

    wrong = tmp_path / "other.pub"
    wrong.write_bytes(other_key.public_key().to_pem())
    code, _ = _scan(
        cli, audit_sqlite_url, bom, tmp_path / "refused.json", "--vex", str(signed),
        "--vex-key", str(wrong),
    )  # fmt: skip
    assert code == 2


def test_not_affected_without_justification_exits_2_naming_document_and_statement(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    bom: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    vex = tmp_path / "bad.json"
    vex.write_bytes(
        openvex(
            {"vulnerability": "CVE-2020-0001", "products": ["pkg:x/y"], "status": "not_affected"}
        )
    )
    code, _ = _scan(cli, audit_sqlite_url, bom, tmp_path / "out.json", "--vex", str(vex))
    assert code == 2
    error = capsys.readouterr().err
    assert f"{vex}: $.statements[0]" in error
    assert "without a justification or an impact_statement" in error
    assert "Traceback" not in error
    assert json.loads(vex.read_bytes())  # the file itself is untouched


def test_a_statement_about_the_product_speaks_of_its_components(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    # CISA's use case 1: "product ABC is not affected by CVE-X", ABC the SBOM's subject
    _, before = _scan(cli, audit_sqlite_url, bom, tmp_path / "before.json")
    component, finding = next((c, v) for c, v in _findings(before) if not v["conditional"])
    vex = tmp_path / "abc.vex.json"
    vex.write_text(
        json.dumps(
            {
                "bomFormat": "CycloneDX",
                "specVersion": "1.4",
                "version": 1,
                "metadata": {
                    "component": {"name": "ABC", "type": "application", "bom-ref": "product-ABC"}
                },
                "vulnerabilities": [
                    {
                        "id": finding["id"],
                        "analysis": {"state": "not_affected", "justification": "code_not_present"},
                        "affects": [{"ref": "product-ABC"}],
                    }
                ],
            }
        )
    )
    document = json.loads(bom.read_bytes())
    document["metadata"] = {
        "component": {"name": "ABC", "type": "application", "bom-ref": "product-ABC"}
    }
    abc = tmp_path / "abc.cdx.json"
    abc.write_text(json.dumps(document))
    _, after = _scan(cli, audit_sqlite_url, abc, tmp_path / "after.json", "--vex", str(vex))
    marked = {c["ref"]: v["vex"]["status"] for c, v in _findings(after) if "vex" in v}
    assert marked[component["ref"]] == "not_affected"
    assert all(v["id"] == finding["id"] for c, v in _findings(after) if "vex" in v)
    # another product's SBOM: the statement is not about it
    _, other = _scan(cli, audit_sqlite_url, bom, tmp_path / "other.json", "--vex", str(vex))
    assert not [v for _, v in _findings(other) if "vex" in v]
