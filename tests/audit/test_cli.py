"""`assay scan` end to end: exit codes held to the library's verdict, every output format."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from tests.audit.conftest import cyclonedx, real_records

from assay.audit import ApiSource, StoreSource, read_input, scan
from assay.audit.formats import to_vdr
from assay.audit.rules import evaluate, parse_fail_on
from assay.nvd.storage import open_store
from assay.web.scan_api import MAX_BODY_BYTES, scan_routes


def _literal_names(records: list[dict[str, Any]], *, kev: bool) -> list[str]:
    names = []
    for record in records:
        if bool(record.get("cisaExploitAdd")) != kev:
            continue
        for configuration in record.get("configurations", []):
            for node in configuration["nodes"]:
                for match in node["cpeMatch"]:
                    version = match["criteria"].split(":")[5]
                    if match["vulnerable"] and version not in ("*", "-"):
                        names.append(match["criteria"])
    return sorted(set(names))


@pytest.fixture(scope="module")
def bom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = real_records()
    names = _literal_names(records, kev=True)[:5] + _literal_names(records, kev=False)[:40]
    components = [
        {
            "type": "library",
            "bom-ref": f"ref-{i}",
            "name": n.split(":")[4],
            "version": n.split(":")[5],
            "cpe": n,
        }
        for i, n in enumerate(names)
    ]
    components.append(
        {
            "type": "library",
            "bom-ref": "nothing",
            "name": "no-such-thing-anywhere",
            "version": "1.0",
        }
    )
    path = tmp_path_factory.mktemp("scan") / "bom.json"
    path.write_bytes(cyclonedx(components))
    return path


def test_json_output_and_exit_codes_follow_the_verdict(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    out = tmp_path / "scan.json"
    assert (
        cli("scan", str(bom), "--store", audit_sqlite_url, "--format", "json", "--out", str(out))
        == 0
    )
    document = orjson.loads(out.read_bytes())
    assert document["verdict"]["passed"] is True
    assert document["store"]["generation"] >= 1
    assert [u["ref"] for u in document["unidentified"]] == ["nothing"]
    assert "no CPE dictionary product or CVE criteria" in document["unidentified"][0]["reason"]
    found = [v for c in document["components"] for v in c["vulnerabilities"]]
    assert any(v["kev"] for v in found)
    assert set(found[0]) == {
        "id",
        "severity",
        "cvss",
        "kev",
        "cwes",
        "matchCriteriaId",
        "fixedIn",
        "conditional",
        "kevDetail",
        "epss",
        "aliases",
        "sources",
    }
    assert found[0]["sources"] == [
        {"source": "nvd", "id": found[0]["id"], "rule": found[0]["matchCriteriaId"]}
    ]

    # The library's verdict decides the exit code.
    store = open_store(audit_sqlite_url)
    try:
        result = scan([read_input(bom.read_bytes(), str(bom))], StoreSource(store))
    finally:
        store.close()
    for rule in ("kev", "cvss>=9.0", "severity>=LOW", "severity>=CRITICAL,kev"):
        verdict = evaluate(
            result, [parse_fail_on(rule)], [], today=__import__("datetime").date.today()
        )
        code = cli(
            "scan", str(bom), "--store", audit_sqlite_url, "--fail-on", rule, "--out", str(out)
        )
        assert code == (0 if verdict.passed else 1), rule
        assert orjson.loads(out.read_bytes())["verdict"]["passed"] is verdict.passed
    assert (
        cli("scan", str(bom), "--store", audit_sqlite_url, "--fail-on", "kev", "--out", str(out))
        == 1
    )


def test_an_ignore_file_excuses_kev_findings(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    out = tmp_path / "scan.json"
    assert (
        cli("scan", str(bom), "--store", audit_sqlite_url, "--fail-on", "kev", "--out", str(out))
        == 1
    )
    failing = orjson.loads(out.read_bytes())["verdict"]["failing"]
    ignore = tmp_path / "ignore.yaml"
    ignore.write_text(
        "ignore:\n"
        + "".join(
            f"  - id: {f['id']}\n    component: {f['ref']}\n    reason: mitigated\n    expires: 2999-01-01\n"
            for f in failing
        )
    )
    assert (
        cli(
            "scan",
            str(bom),
            "--store",
            audit_sqlite_url,
            "--fail-on",
            "kev",
            "--ignore",
            str(ignore),
            "--out",
            str(out),
        )
        == 0
    )
    assert len(orjson.loads(out.read_bytes())["verdict"]["ignored"]) == len(failing)


def test_sarif_and_cyclonedx_outputs(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, tmp_path: Path
) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    sarif_path, vdr_path, json_path = (
        tmp_path / "s.sarif",
        tmp_path / "vdr.json",
        tmp_path / "s.json",
    )
    assert (
        cli(
            "scan",
            str(bom),
            "--store",
            audit_sqlite_url,
            "--format",
            "json",
            "--out",
            str(json_path),
        )
        == 0
    )
    assert (
        cli(
            "scan",
            str(bom),
            "--store",
            audit_sqlite_url,
            "--format",
            "sarif",
            "--out",
            str(sarif_path),
        )
        == 0
    )
    assert (
        cli(
            "scan",
            str(bom),
            "--store",
            audit_sqlite_url,
            "--format",
            "cyclonedx",
            "--out",
            str(vdr_path),
        )
        == 0
    )
    findings = {
        (c["ref"], v["id"])
        for c in orjson.loads(json_path.read_bytes())["components"]
        for v in c["vulnerabilities"]
    }
    sarif = orjson.loads(sarif_path.read_bytes())
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    assert {
        (r["locations"][0]["logicalLocations"][0]["name"], r["ruleId"]) for r in run["results"]
    } == findings
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {cve for _, cve in findings}
    vdr = vdr_path.read_text()
    assert JsonStrictValidator(SchemaVersion.V1_5).validate_str(vdr) is None
    document = orjson.loads(vdr)
    assert {
        (a["ref"], v["id"]) for v in document["vulnerabilities"] for a in v["affects"]
    } == findings
    assert [c["bom-ref"] for c in document["components"]][-1] == "nothing"


def test_a_vdr_of_purls_is_a_valid_new_bom(audit_sqlite_url: str) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    from assay.audit.inputs.purls import purl_inventory

    inventories = [
        purl_inventory(["pkg:github/zmanda/amanda@3.3.0", "pkg:pypi/unknown-package@1.0"])
    ]
    store = open_store(audit_sqlite_url)
    try:
        result = scan(inventories, StoreSource(store))
    finally:
        store.close()
    assert [c.identification.identified_by for c in result.components] == ["repository"]
    assert result.components[0].identification.cpes == (
        "cpe:2.3:a:amanda:amanda:3.3.0:*:*:*:*:*:*:*",
    )
    vdr = orjson.dumps(to_vdr(result, inventories)).decode()
    assert JsonStrictValidator(SchemaVersion.V1_5).validate_str(vdr) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["scan"], "nothing to scan"),
        (["scan", "/no/such/file.json"], "/no/such/file.json: cannot read"),
        (["scan", "--purl", "pkg:pypi/x@1", "--fail-on", "severity>=SEVERE"], "--fail-on"),
        (["scan", "--purl", "pkg:pypi/x@1", "--min-confidence", "2"], "--min-confidence"),
        (["scan", "--purl", "pkg:pypi/x@1", "--api-key", "k"], "--api-key"),
    ],
)
def test_unusable_input_exits_2(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli(*argv, "--store", audit_sqlite_url) == 2
    assert message in capsys.readouterr().err


def test_an_empty_store_is_unusable(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.nvd.storage import open_store

    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(empty).close()  # created, never filled (a missing store is refused apart)
    assert (
        cli(
            "scan",
            "--purl",
            "pkg:pypi/django@4.2.0",
            "--store",
            empty,
        )
        == 2
    )
    assert "holds no CVEs" in capsys.readouterr().err


def test_table_output(
    cli: Callable[..., int], audit_sqlite_url: str, bom: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli("scan", str(bom), "--store", audit_sqlite_url, "--format", "table", "--fail-on", "kev")
        == 1
    )
    text = capsys.readouterr().out
    assert "FAILS" in text
    assert re.search(r"\d+ components identified, 1 unidentified; \d+ findings", text)


def test_post_api_scan_answers_the_json_contract(audit_sqlite_url: str, bom: Path) -> None:
    store = open_store(audit_sqlite_url)
    try:
        client = TestClient(Starlette(routes=scan_routes(store)))
        answer = client.post("/api/scan?filename=bom.json", content=bom.read_bytes())
        assert answer.status_code == 200
        result = scan([read_input(bom.read_bytes(), "bom.json")], StoreSource(store))
        # The whole contract of `assay scan --format json`, its verdict included (the
        # answer once left the verdict out, though the request can carry failOn rules).
        verdict = evaluate(result, [], [], today=date.today())
        expected = {**result.to_dict(), "verdict": verdict.to_dict()}
        assert answer.json() == orjson.loads(orjson.dumps(expected))
        purls = client.post("/api/scan?purl=pkg:github/zmanda/amanda@3.3.0")
        assert purls.json()["components"][0]["identifiedBy"] == "repository"
        bad = client.post("/api/scan", content=b'{"bomFormat": "CycloneDX", "specVersion": "9"}')
        assert bad.status_code == 400
        assert "specVersion" in bad.json()["error"]
        assert client.post("/api/scan?colour=red", content=b"x").status_code == 400
        assert client.post("/api/scan?filename=../../etc/passwd", content=b"x").status_code == 400
        assert client.post("/api/scan").status_code == 400
        big = client.post("/api/scan", content=b" " * (MAX_BODY_BYTES + 1))
        assert big.status_code == 413
    finally:
        store.close()


def test_the_remote_source_answers_as_the_store(audit_sqlite_url: str, bom: Path) -> None:
    """`--nvd-url` against a real assay server on loopback gives the store's answer."""
    from tests.live import serving

    inventory = read_input(bom.read_bytes(), "bom.json")
    with serving(audit_sqlite_url) as root:
        remote = ApiSource(f"{root}/rest/json")
        try:
            from_api = scan([inventory], remote).to_dict()
        finally:
            remote.close()
    store = open_store(audit_sqlite_url)
    try:
        from_store = scan([inventory], StoreSource(store)).to_dict()
    finally:
        store.close()
    assert from_api["components"] == from_store["components"]
    assert from_api["unidentified"] == from_store["unidentified"]


def test_an_unpinned_requirement_is_listed_as_unidentified_not_fatal(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One unpinned line used to abort the whole scan (exit 2) while `-e` lines were skipped.
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("django==4.2.0\nrequests>=2.0\n-e ./local\n")
    code = cli("scan", str(requirements), "--store", audit_sqlite_url, "--format", "json")
    assert code in (0, 1)
    result = orjson.loads(capsys.readouterr().out)
    [unpinned] = [u for u in result["unidentified"] if u["name"] == "requests"]
    assert unpinned["ref"] == "requests>=2.0"
    assert unpinned["purl"] == "pkg:pypi/requests"
    assert unpinned["version"] is None
    assert "no version" in unpinned["reason"]
    listed = [*result["components"], *result["unidentified"]]
    assert any(c["name"] == "django" and c["version"] == "4.2.0" for c in listed)
    assert result["inputs"][0]["components"] == 2


@pytest.mark.parametrize("count", [False, True])
def test_fail_on_conditional_decides_the_exit_code_as_the_library_does(
    cli: Callable[..., int],
    audit_sqlite_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    count: bool,
) -> None:
    # CVE-2022-0004 holds for this firmware only on hardware the SBOM does not list.
    bom = tmp_path / "bom.json"
    cpe = "cpe:2.3:o:intel:atom_p5921b_firmware:-:*:*:*:*:*:*:*"
    bom.write_bytes(
        orjson.dumps(
            {
                "bomFormat": "CycloneDX",
                "specVersion": "1.5",
                "components": [{"bom-ref": "fw", "name": "atom_p5921b_firmware", "cpe": cpe}],
            }
        )
    )
    argv = [
        "scan",
        str(bom),
        "--store",
        audit_sqlite_url,
        "--format",
        "json",
        "--fail-on",
        "severity>=HIGH",
    ]
    code = cli(*argv, *(["--fail-on-conditional"] if count else []))
    verdict = orjson.loads(capsys.readouterr().out)["verdict"]
    assert code == (0 if verdict["passed"] else 1)
    assert verdict["countsConditional"] is count
    moved = "failing" if count else "conditionalNotCounted"
    assert [f["id"] for f in verdict[moved]] == ["CVE-2022-0004"]
