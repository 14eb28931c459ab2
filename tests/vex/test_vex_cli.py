"""`assay vex create | merge | filter`, as vexctl's commands behave."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.vex import VexStatus, read_vex

from .samples import REAL, openvex

GIT = "pkg:apk/wolfi/git@2.38.1-r0?arch=x86_64"


def test_create_writes_one_statement(cli: Callable[..., int], tmp_path: Path) -> None:
    out = tmp_path / "git.vex.json"
    code = cli(
        "vex", "create", "--product", GIT, "--vuln", "CVE-2014-123456",
        "--status", "not_affected", "--justification", "inline_mitigations_already_exist",
        "--author", "Wolfi", "--file", str(out),
    )  # fmt: skip
    assert code == 0
    document = json.loads(out.read_bytes())
    assert document["@context"] == "https://openvex.dev/ns/v0.2.0"
    assert document["@id"].startswith("urn:assay:vex:")
    assert document["author"] == "Wolfi"
    (statement,) = document["statements"]
    assert statement["vulnerability"] == {"name": "CVE-2014-123456"}
    assert statement["products"] == [{"@id": GIT, "identifiers": {"purl": GIT}}]
    assert statement["justification"] == "inline_mitigations_already_exist"
    (read,) = read_vex(out.read_bytes(), str(out)).statements
    assert read.status is VexStatus.NOT_AFFECTED


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (("--status", "not_affected"), "--justification"),
        (("--status", "affected"), "--action-statement"),
    ],
)
def test_create_refuses_what_openvex_forbids(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], flag: str
) -> None:
    assert cli("vex", "create", "--product", GIT, "--vuln", "CVE-1", *extra) == 2
    assert flag in capsys.readouterr().err


def test_merge_keeps_every_statement_oldest_first(cli: Callable[..., int], tmp_path: Path) -> None:
    csaf = (
        REAL / "vex/csaf/oasis-tcs-csaf/csaf_2.0/examples/csaf/csaf_vex/2022-evd-uc-01-f-001.json"
    )
    cdx = REAL / "vex/cyclonedx/CycloneDX-bom-examples/VEX/CISA-Use-Cases/Case-1/vex-affected.json"
    newer = tmp_path / "newer.json"
    newer.write_bytes(
        openvex(
            {"vulnerability": "CVE-2021-44228", "products": [GIT], "status": "fixed"},
            timestamp="2030-01-01T00:00:00Z",
        )
    )
    out = tmp_path / "merged.json"
    assert cli("vex", "merge", str(newer), str(csaf), str(cdx), "--out", str(out)) == 0
    merged = read_vex(out.read_bytes(), str(out))
    assert [str(s.status) for s in merged.statements] == ["affected", "fixed", "fixed"]
    assert merged.statements[-1].products[0].value == GIT
    only = tmp_path / "only.json"
    assert cli("vex", "merge", str(newer), str(csaf), "--product", GIT, "--out", str(only)) == 0
    assert len(json.loads(only.read_bytes())["statements"]) == 1


def test_filter_removes_vexed_results(cli: Callable[..., int], tmp_path: Path) -> None:
    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "scanner"}},
                "results": [
                    {"ruleId": "CVE-2023-1", "message": {"text": "a"}},
                    {"ruleId": "CVE-2023-2", "message": {"text": "b"}},
                    {"ruleId": "CVE-2023-3", "message": {"text": "c"}},
                ],
            }
        ],
    }
    report = tmp_path / "scan.sarif.json"
    report.write_text(json.dumps(sarif))
    vex = tmp_path / "vex.json"
    vex.write_bytes(
        openvex(
            {
                "vulnerability": "CVE-2023-1",
                "products": [GIT],
                "status": "not_affected",
                "justification": "component_not_present",
            },
            {
                "vulnerability": "CVE-2023-2",
                "products": [GIT],
                "status": "affected",
                "action_statement": "upgrade",
            },
        )
    )
    out = tmp_path / "filtered.json"
    assert cli("vex", "filter", str(report), str(vex), "--product", GIT, "--out", str(out)) == 0
    kept = [r["ruleId"] for r in json.loads(out.read_bytes())["runs"][0]["results"]]
    assert kept == ["CVE-2023-2", "CVE-2023-3"]
    # another product: nothing applies
    assert (
        cli(
            "vex",
            "filter",
            str(report),
            str(vex),
            "--product",
            "pkg:apk/wolfi/curl",
            "--out",
            str(out),
        )
        == 0
    )
    assert len(json.loads(out.read_bytes())["runs"][0]["results"]) == 3


def test_filter_refuses_what_is_not_sarif(cli: Callable[..., int], tmp_path: Path) -> None:
    report = tmp_path / "x.json"
    report.write_text('{"runs": 1}')
    vex = tmp_path / "vex.json"
    vex.write_bytes(openvex())
    assert cli("vex", "filter", str(report), str(vex)) == 2
