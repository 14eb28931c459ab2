"""`assay scan --format openvex|cyclonedx|cosign-vuln` and `--attest`: VEX and signed
scan results out, read back by assay's own readers."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.audit.conftest import cyclonedx

import assay._cli
from assay import dsse
from assay.audit import vulns
from assay.audit.rules import evaluate, parse_fail_on
from assay.keys import PrivateKey
from assay.vex import VexStatus, read_vex

from .samples import openvex
from .test_scan_cli import _findings, _names, _not_affected, _scan

pytest_plugins = ["tests.audit.conftest"]


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
    path = tmp_path_factory.mktemp("vex-out") / "bom.json"
    path.write_bytes(cyclonedx(components))
    return path


@pytest.fixture(scope="module")
def baseline(
    audit_sqlite_url: str, bom: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    def cli(*argv: str) -> int:
        return assay._cli.main(list(argv))

    _, document = _scan(cli, audit_sqlite_url, bom, tmp_path_factory.mktemp("b") / "scan.json")
    found = [(c, v) for c, v in _findings(document) if not v["conditional"]]
    assert len(found) >= 3
    return found


def test_openvex_has_a_statement_for_every_finding(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    bom: Path,
    tmp_path: Path,
    baseline: list[tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    vex = tmp_path / "in.json"
    vex.write_bytes(_not_affected(baseline[:1]))
    ignore = tmp_path / "ignore.yaml"
    second = baseline[1]
    ignore.write_text(
        f"ignore:\n  - id: {second[1]['id']}\n    component: {second[0]['ref']}\n"
        "    reason: not reachable here\n    expires: 2999-01-01\n"
    )
    out = tmp_path / "out.openvex.json"
    code = cli(
        "scan", str(bom), "--store", audit_sqlite_url, "--format", "openvex", "--out", str(out),
        "--vex", str(vex), "--ignore", str(ignore),
    )  # fmt: skip
    assert code == 0
    document = read_vex(out.read_bytes(), str(out))  # what assay writes, assay reads
    assert document.format == "openvex"
    assert document.spec_version == "0.2.0"
    said: dict[tuple[str, str], Any] = {}
    for statement in document.statements:
        for product in statement.products:
            said[(statement.vulnerability, product.value)] = statement
    _, everything = _scan(cli, audit_sqlite_url, bom, tmp_path / "all.json")
    for component, finding in _findings(everything):
        assert (finding["id"], component["purl"]) in said  # every finding has a statement
    first, second_statement = (
        said[(baseline[0][1]["id"], baseline[0][0]["purl"])],
        said[(second[1]["id"], second[0]["purl"])],
    )
    assert first.status is VexStatus.NOT_AFFECTED
    assert first.justification == "vulnerable_code_not_in_execute_path"
    assert second_statement.status is VexStatus.NOT_AFFECTED
    assert second_statement.impact == "ignored: not reachable here (until 2999-01-01)"
    rest = [s for key, s in said.items() if key[0] not in (baseline[0][1]["id"], second[1]["id"])]
    assert rest
    assert all(s.status is VexStatus.UNDER_INVESTIGATION for s in rest)


def test_cyclonedx_carries_the_analysis(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    bom: Path,
    tmp_path: Path,
    baseline: list[tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    vex = tmp_path / "in.json"
    vex.write_bytes(_not_affected(baseline[:1]))
    out = tmp_path / "vdr.json"
    cli(
        "scan", str(bom), "--store", audit_sqlite_url, "--format", "cyclonedx", "--out", str(out),
        "--vex", str(vex),
    )  # fmt: skip
    bom_out = orjson.loads(out.read_bytes())
    component, finding = baseline[0]
    (entry,) = [
        v
        for v in bom_out["vulnerabilities"]
        if v["id"] == finding["id"]
        and {"ref": component["ref"]} in [{"ref": a["ref"]} for a in v["affects"]]
    ]
    assert entry["analysis"]["state"] == "not_affected"
    assert entry["analysis"]["justification"] == "code_not_reachable"
    assert entry["analysis"]["detail"] == "not called"
    # and the VDR reads back as CycloneDX VEX with the same status
    again = read_vex(out.read_bytes(), str(out))
    assert any(
        s.vulnerability == finding["id"] and s.status is VexStatus.NOT_AFFECTED
        for s in again.statements
    )


def _payload(envelope: dict[str, Any]) -> dict[str, Any]:
    return json.loads(base64.b64decode(envelope["payload"]))


def test_attest_writes_a_signed_vulns_statement(  # noqa: PLR0917 - pytest fixtures
    cli: Callable[..., int],
    audit_sqlite_url: str,
    bom: Path,
    tmp_path: Path,
    vendor_key: PrivateKey,
    baseline: list[tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    key = tmp_path / "scanner.key"
    key.write_bytes(vendor_key.to_pem())
    out = tmp_path / "scan.intoto.json"
    digest = "ab" * 32
    before = datetime.now(UTC).replace(microsecond=0)
    code = cli(
        "scan", str(bom), "--store", audit_sqlite_url, "--attest", "--key", str(key),
        "--subject", f"sha256:{digest}", "--out", str(out), "--fail-on", "severity>=LOW",
    )  # fmt: skip
    assert code == 1  # the exit code is still the verdict's
    envelope = dsse.Envelope.from_json(out.read_bytes())
    dsse.verify(envelope, [vendor_key.public_key()], payload_type=dsse.INTOTO_PAYLOAD_TYPE)
    statement = _payload(json.loads(out.read_bytes()))
    assert statement["predicateType"] == "https://in-toto.io/attestation/vulns/v0.2"
    assert statement["subject"] == [{"name": f"sha256:{digest}", "digest": {"sha256": digest}}]
    predicate = statement["predicate"]
    scanner = predicate["scanner"]
    assert scanner["uri"].startswith("pkg:pypi/assay@")
    assert scanner["db"]["uri"] == vulns.DB_URI
    assert scanner["db"]["version"].startswith("generation-")
    assert scanner["db"]["lastUpdate"].endswith("Z")  # the store's last import
    started = datetime.fromisoformat(predicate["metadata"]["scanStartedOn"])
    finished = datetime.fromisoformat(predicate["metadata"]["scanFinishedOn"])
    assert before <= started <= finished
    ids = {r["id"] for r in scanner["result"]}
    assert {v["id"] for _, v in baseline} <= ids
    assert all({"method", "score"} == set(s) for r in scanner["result"] for s in r["severity"])
    # read back, the same findings fail the same rule
    result, _, _ = vulns.read_vulns_predicate(predicate, str(out))
    verdict = evaluate(result, [parse_fail_on("severity>=LOW")], [], today=date.today())
    assert not verdict.passed
    assert len(result.findings) == len(scanner["result"])


def test_attest_subject_defaults(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    out = tmp_path / "plain.json"
    assert cli("scan", str(bom), "--store", audit_sqlite_url, "--attest", "--out", str(out)) == 0
    statement = json.loads(out.read_bytes())  # without --key: the bare statement
    assert statement["subject"] == [
        {"name": str(bom), "digest": {"sha256": hashlib.sha256(bom.read_bytes()).hexdigest()}}
    ]
    with_component = json.loads(bom.read_bytes())
    with_component["metadata"] = {
        "component": {
            "type": "application",
            "name": "app",
            "purl": "pkg:generic/app@1.0",
            "hashes": [{"alg": "SHA-256", "content": "cd" * 32}],
        }
    }
    sbom = tmp_path / "app.cdx.json"
    sbom.write_text(json.dumps(with_component))
    assert cli("scan", str(sbom), "--store", audit_sqlite_url, "--attest", "--out", str(out)) == 0
    assert json.loads(out.read_bytes())["subject"] == [
        {"name": "pkg:generic/app@1.0", "digest": {"sha256": "cd" * 32}}
    ]


def test_cosign_vuln_predicate(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    out = tmp_path / "vuln.json"
    cli("scan", str(bom), "--store", audit_sqlite_url, "--format", "cosign-vuln", "--out", str(out))
    predicate = json.loads(out.read_bytes())
    assert set(predicate) == {"invocation", "scanner", "metadata"}
    assert set(predicate["invocation"]) == {"parameters", "uri", "event_id", "builder.id"}
    assert predicate["scanner"]["result"]


def test_attest_needs_out_and_key_needs_attest(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    assert cli("scan", str(bom), "--store", audit_sqlite_url, "--attest") == 2
    assert (
        cli(
            "scan",
            str(bom),
            "--store",
            audit_sqlite_url,
            "--key",
            "k",
            "--out",
            str(tmp_path / "x"),
        )
        == 2
    )
    assert json.loads(openvex())  # a document with no statement is still a document


def test_attest_subject_of_a_provenance_is_its_artifact(
    cli: Callable[..., int], audit_sqlite_url: str, build: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "scan.intoto.json"
    code = cli(
        "scan", str(build["provenance"]), "--store", audit_sqlite_url, "--attest",
        "--key", str(build["key"]), "--out", str(out),
    )  # fmt: skip
    assert code == 0
    statement = json.loads(base64.b64decode(json.loads(out.read_bytes())["payload"]))
    artifact = build["artifact"]
    assert [s["digest"]["sha256"] for s in statement["subject"]] == [
        hashlib.sha256(artifact.read_bytes()).hexdigest()
    ]
    big = tmp_path / "app.bin"
    big.write_bytes(b"x" * (3 << 20))
    code = cli(
        "scan", str(build["provenance"]), "--store", audit_sqlite_url, "--attest",
        "--subject", str(big), "--out", str(out),
    )  # fmt: skip
    assert json.loads(out.read_bytes())["subject"] == [
        {"name": "app.bin", "digest": {"sha256": hashlib.sha256(big.read_bytes()).hexdigest()}}
    ]
