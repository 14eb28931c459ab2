"""`assay verify` with VEX, `--vulns-out` and scan attestations, and the VSA that names
them: exit codes held to the library's verdict (`Verifier` + `VulnerabilityCheck`)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.audit.test_check import _kev_name
from tests.audit.test_verify_cli import RESOURCE, VERIFIER_ID, _write_policy

from assay.attestation import validate
from assay.audit import StoreSource, VulnerabilityCheck, vulns
from assay.audit.model import (
    Component,
    ComponentResult,
    Identification,
    ScanResult,
    SourceStatus,
    Vulnerability,
)
from assay.nvd.storage import open_store
from assay.policy import load_policy
from assay.verify import Artifact, Verifier, read_attestations
from assay.vex import read_vex

from .samples import openvex, sign

pytest_plugins = ["tests.audit.conftest"]


def _not_affected(cve: str) -> bytes:
    return openvex(
        {
            "vulnerability": {"name": cve},
            "products": [{"@id": "kev-component"}],
            "status": "not_affected",
            "justification": "vulnerable_code_not_in_execute_path",
        }
    )


def _payload(path: Path) -> dict[str, Any]:
    return json.loads(base64.b64decode(json.loads(path.read_bytes())["payload"]))


def _verify(cli: Callable[..., int], build: dict[str, Path], policy: Path, *extra: str) -> int:
    folder = policy.parent
    return cli(
        "verify", str(build["artifact"]),
        "--attestation", str(build["provenance"]), str(build["sbom"]),
        "--policy", str(policy), "--vsa-out", str(folder / "vsa.json"),
        "--vsa-key", str(build["key"]), "--verifier-id", VERIFIER_ID,
        "--resource-uri", RESOURCE, "--json", *extra,
    )  # fmt: skip


def _library(
    policy: Path, build: dict[str, Path], store_url: str | None, vex: list[Path], extra: list[Path]
) -> Any:
    store = open_store(store_url) if store_url else None
    try:
        documents = [read_vex(p.read_bytes(), str(p)) for p in vex]
        check = VulnerabilityCheck(StoreSource(store) if store else None, vex=documents)
        attestations = [
            found
            for path in (build["provenance"], build["sbom"], *extra)
            for found in read_attestations(path.read_bytes(), str(path))
        ]
        artifact = build["artifact"]
        digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
        return Verifier(policy=load_policy(policy), dependency_checks=[check]).verify(
            [Artifact(artifact.name, {"sha256": digest})], attestations
        )
    finally:
        if store is not None:
            store.close()


def test_vex_passes_the_rule_and_the_vsa_names_vex_scan_and_policy(
    cli: Callable[..., int], audit_sqlite_url: str, build: dict[str, Path], tmp_path: Path
) -> None:
    _, cve = _kev_name()
    policy = _write_policy(tmp_path, build["public"], {"failOn": ["kev"]})
    assert _verify(cli, build, policy, "--store", audit_sqlite_url) == 1
    vex = tmp_path / "vendor.openvex.json"
    vex.write_bytes(_not_affected(cve))
    scan = tmp_path / "scan.intoto.json"
    code = _verify(
        cli, build, policy, "--store", audit_sqlite_url, "--vex", str(vex), "--vulns-out", str(scan)
    )
    report = _library(policy, build, audit_sqlite_url, [vex], [])
    assert report.passed
    assert code == 0
    predicate = _payload(tmp_path / "vsa.json")["predicate"]
    assert predicate["verifiedLevels"][1:] == [
        "ASSAY_VULNERABILITIES_CLEAN",
        "ASSAY_VULN_SCANNED_1D",
    ]
    assert predicate["policy"]["digest"] == {
        "sha256": hashlib.sha256(policy.read_bytes()).hexdigest()
    }
    inputs = {i["uri"]: i["digest"]["sha256"] for i in predicate["inputAttestations"]}
    assert inputs[str(vex)] == hashlib.sha256(vex.read_bytes()).hexdigest()
    assert inputs[str(scan)] == hashlib.sha256(scan.read_bytes()).hexdigest()
    # the scan is a vulns attestation about the artifact, signed with the VSA key
    (attestation,) = read_attestations(scan.read_bytes(), str(scan))
    from assay import dsse
    from assay.keys import load_public_key

    dsse.verify(attestation.envelope, [load_public_key(build["public"].read_bytes())])
    statement = _payload(scan)
    assert statement["predicateType"] == vulns.VULNS_V02
    assert statement["subject"][0]["digest"]["sha256"] == (
        hashlib.sha256(build["artifact"].read_bytes()).hexdigest()
    )
    assert validate(statement) == []
    (kev,) = [r for r in statement["predicate"]["scanner"]["result"] if r["id"] == cve]
    assert kev["annotations"][0]["vex"]["status"] == "not_affected"
    # and verify-vsa accepts the time-bounded level while the VSA is fresh
    assert (
        cli(
            "verify-vsa",
            str(tmp_path / "vsa.json"),
            "--subject-digest",
            f"sha256:{statement['subject'][0]['digest']['sha256']}",
            "--verifier-id",
            VERIFIER_ID,
            "--key",
            str(build["public"]),
            "--resource-uri",
            RESOURCE,
            "--level",
            "ASSAY_VULN_SCANNED_1D",
            "--level",
            "ASSAY_VULNERABILITIES_CLEAN",
        )
        == 0
    )


def test_policy_vex_signers_refuse_unsigned_vex(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    build: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, cve = _kev_name()
    rule = {"failOn": ["kev"], "vex": {"signers": ["release-key"]}}
    policy = _write_policy(tmp_path, build["public"], rule)
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_bytes(_not_affected(cve))
    code = _verify(cli, build, policy, "--store", audit_sqlite_url, "--vex", str(unsigned))
    assert code == 1
    assert not _library(policy, build, audit_sqlite_url, [unsigned], []).passed
    report = json.loads(capsys.readouterr().out)
    (check,) = [
        c
        for result in report["dependencyChecks"]
        for c in result["checks"]
        if c["check"] == "vulnerabilities.vex"
    ]
    assert "unsigned; the policy requires VEX signed by release-key" in check["detail"]

    from assay.keys import load_private_key

    signed = tmp_path / "signed.dsse.json"
    signed.write_bytes(sign(_not_affected(cve), load_private_key(build["key"].read_bytes())))
    assert _verify(cli, build, policy, "--store", audit_sqlite_url, "--vex", str(signed)) == 0


def _scan_attestation(
    folder: Path, build: dict[str, Path], cve: str, finished: datetime, name: str
) -> Path:
    finding = Vulnerability(cve, "CRITICAL", None, True, (), None, None, False)
    component = ComponentResult(
        Component("kev-component", "x"),
        Identification((), "cpe", 1.0, "given"),
        (finding,),
        "sbom",
    )
    result = ScanResult((component,), (), SourceStatus(1, "2026-01-01T00:00:00Z"))
    predicate = vulns.vulns_predicate(
        vulns.ScannedAt(result, finished - timedelta(minutes=1), finished), version="1"
    )
    digest = hashlib.sha256(build["artifact"].read_bytes()).hexdigest()
    statement = vulns.vulns_statement([("app.tar.gz", {"sha256": digest})], predicate)
    from assay.keys import load_private_key

    path = folder / name
    path.write_bytes(
        sign(json.dumps(statement).encode(), load_private_key(build["key"].read_bytes()))
    )
    return path


def test_a_trusted_fresh_scan_attestation_stands_for_the_scan(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    build: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, cve = _kev_name()
    rule = {"failOn": ["kev"], "attestations": {"signers": ["release-key"], "maxAge": "1d"}}
    policy = _write_policy(tmp_path, build["public"], rule)
    fresh = _scan_attestation(tmp_path, build, cve, datetime.now(UTC), "fresh.json")
    empty_store = f"sqlite:///{tmp_path / 'empty.db'}"  # no store is consulted
    code = _verify(cli, build, policy, "--store", empty_store, "--attestation", str(fresh))
    assert code == 1  # the attested KEV finding meets failOn
    assert not _library(policy, build, None, [], [fresh]).passed
    report = json.loads(capsys.readouterr().out)
    names = [c["check"] for r in report["dependencyChecks"] for c in r["checks"]]
    assert names == ["vulnerabilities.attestation", "vulnerabilities.findings"]

    vex = tmp_path / "vex.json"
    vex.write_bytes(_not_affected(cve))
    code = _verify(
        cli, build, policy, "--store", empty_store, "--attestation", str(fresh), "--vex", str(vex)
    )
    assert code == 0
    assert _library(policy, build, None, [vex], [fresh]).passed
    predicate = _payload(tmp_path / "vsa.json")["predicate"]
    inputs = [i["uri"] for i in predicate["inputAttestations"]]
    assert str(fresh) in inputs
    assert str(vex) in inputs
    assert "ASSAY_VULN_SCANNED_1D" in predicate["verifiedLevels"]


def test_a_stale_scan_attestation_is_not_taken(
    build: dict[str, Path], tmp_path: Path, audit_sqlite_url: str
) -> None:
    _, cve = _kev_name()
    rule = {"failOn": ["kev"], "attestations": {"signers": ["release-key"], "maxAge": "12h"}}
    policy = _write_policy(tmp_path, build["public"], rule)
    stale = _scan_attestation(
        tmp_path, build, cve, datetime.now(UTC) - timedelta(days=2), "stale.json"
    )
    without_store = _library(policy, build, None, [], [stale])
    (result,) = without_store.dependency_checks
    assert not result.passed
    assert "older than maxAge 12:00:00" in result.checks[0].detail
    with_store = _library(policy, build, audit_sqlite_url, [], [stale])
    (scanned,) = with_store.dependency_checks
    assert scanned.checks[0].name == "vulnerabilities.store"  # it scanned instead
    assert "older than maxAge" in scanned.details["attestation"]


@pytest.mark.parametrize(
    ("section", "where"),
    [
        ("vulnerabilities: {vex: {signers: [nobody]}}", "$.vulnerabilities.vex.signers[0]"),
        ("vulnerabilities: {vex: {signers: []}}", "$.vulnerabilities.vex.signers"),
        ("vulnerabilities: {vex: {keys: []}}", "$.vulnerabilities.vex.keys"),
        (
            "vulnerabilities: {attestations: {signers: [release-key], maxAge: soon}}",
            "$.vulnerabilities.attestations.maxAge",
        ),
        (
            "vulnerabilities: {attestations: {signers: [release-key], maxAge: 0d}}",
            "$.vulnerabilities.attestations.maxAge",
        ),
    ],
)
def test_policy_errors_name_the_path(section: str, where: str) -> None:
    from tests.audit.test_check import policy

    from assay.errors import InputError

    with pytest.raises(InputError) as error:
        policy(section)
    assert error.value.where == f"policy.yaml: {where}"


def test_scanned_levels_need_a_fresh_vsa() -> None:
    from assay.policy.vulnerabilities import parse_duration, parse_scanned_level, scanned_level
    from assay.verify.vsa import _scanned_check

    assert scanned_level(parse_duration("1d", "x")) == "ASSAY_VULN_SCANNED_1D"
    assert scanned_level(parse_duration("36h", "x")) == "ASSAY_VULN_SCANNED_36H"
    assert parse_scanned_level("ASSAY_VULN_SCANNED_2W") == timedelta(weeks=2)
    now = datetime(2026, 5, 10, tzinfo=UTC)
    day = timedelta(days=1)
    verified = ["SLSA_BUILD_LEVEL_2", "ASSAY_VULN_SCANNED_1D"]
    assert _scanned_check(
        "ASSAY_VULN_SCANNED_1D", day, verified, "2026-05-09T12:00:00Z", now
    ).passed
    assert not _scanned_check(
        "ASSAY_VULN_SCANNED_1D", day, verified, "2026-05-08T00:00:00Z", now
    ).passed
    assert _scanned_check(
        "ASSAY_VULN_SCANNED_3D", 3 * day, verified, "2026-05-08T00:00:00Z", now
    ).passed
    longer = ["ASSAY_VULN_SCANNED_7D"]
    assert not _scanned_check(
        "ASSAY_VULN_SCANNED_1D", day, longer, "2026-05-10T00:00:00Z", now
    ).passed


def test_a_vex_signer_needs_no_builder(
    cli: Callable[..., int], audit_sqlite_url: str, build: dict[str, Path], tmp_path: Path
) -> None:
    import yaml

    from assay.keys import load_private_key

    _, cve = _kev_name()
    assert cli("keys", "generate", "--type", "ecdsa-p256", "--out", str(tmp_path / "vendor")) == 0
    policy = _write_policy(
        tmp_path, build["public"], {"failOn": ["kev"], "vex": {"signers": ["vendor"]}}
    )
    document = yaml.safe_load(policy.read_text())
    document["signers"].append({"name": "vendor", "publicKeys": [str(tmp_path / "vendor.pub")]})
    policy.write_text(yaml.safe_dump(document))
    signed = tmp_path / "vendor.vex.dsse.json"
    vendor = load_private_key((tmp_path / "vendor.key").read_bytes())
    signed.write_bytes(sign(_not_affected(cve), vendor))
    assert _verify(cli, build, policy, "--store", audit_sqlite_url, "--vex", str(signed)) == 0
    # the vendor's key vouches for no build: provenance it signed would not verify
    assert [s.builders for s in load_policy(policy).signers if s.name == "vendor"] == [()]
    # a signer the rule does not name still needs builders
    del document["vulnerabilities"]["vex"]
    policy.write_text(yaml.safe_dump(document))
    from assay.policy import PolicyError

    with pytest.raises(PolicyError, match="expected at least one builder"):
        load_policy(policy)
