"""The vulnerability scan predicates: `assay attest validate --strict` and `attest schema`
on the real examples and on what `assay scan --attest` writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.attestation import Severity, validate
from assay.attestation.schema import json_schema
from assay.audit import vulns
from assay.audit.model import (
    Component,
    ComponentResult,
    Cvss,
    Identification,
    ScanResult,
    SourceStatus,
    Vulnerability,
)
from assay.errors import AttestationError

ASSETS = Path(__file__).parent.parent / "assets" / "vex" / "attestations"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("vulns-v0.2-example1.json", 0),
        ("vulns-v0.1-example1.json", 0),
        ("cosign-valid-vuln.json", 0),
        # its predicateType lacks the scheme: not a type assay checks, a warning (strict: 1)
        ("cosign-malformed-vuln.json", 1),
        # a predicate alone is not a statement
        ("cosign-vuln-predicate.json", 1),
    ],
)
def test_real_examples_validate_strictly(cli: Callable[..., int], name: str, code: int) -> None:
    assert cli("attest", "validate", "--strict", str(ASSETS / name)) == code


def _scan() -> vulns.ScannedAt:
    component = ComponentResult(
        Component("ref-1", "lib", "1.0", "pkg:pypi/lib@1.0"),
        Identification(("cpe:2.3:a:lib:lib:1.0:*:*:*:*:*:*:*",), "cpe", 1.0, "given"),
        (
            Vulnerability(
                "CVE-2024-1",
                "HIGH",
                Cvss("3.1", 7.5, "CVSS:3.1/AV:N"),
                True,
                ("CWE-79",),
                None,
                "1.1",
                False,
            ),
        ),
        "bom.json",
    )
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    result = ScanResult((component,), (), SourceStatus(7, "2026-01-01T00:00:00Z"))
    return vulns.ScannedAt(result, moment, moment)


def test_written_predicate_is_valid_and_reads_back() -> None:
    predicate = vulns.vulns_predicate(_scan(), version="1.2.3")
    statement = vulns.vulns_statement([("app", {"sha256": "ab" * 32})], predicate)
    assert [f for f in validate(statement) if f.severity is Severity.ERROR] == []
    assert validate(statement) == []  # strictly: no warning either
    jsonschema.Draft202012Validator(json_schema("vulns-v0.2-statement")).validate(statement)
    assert predicate["scanner"]["db"] == {
        "uri": vulns.DB_URI,
        "version": "generation-7",
        "lastUpdate": "2026-01-01T00:00:00Z",
    }
    (entry,) = predicate["scanner"]["result"]
    assert entry["severity"] == [
        {"method": "nvd", "score": "HIGH"},
        {"method": "CVSS:3.1", "score": "7.5"},
    ]
    result, started, finished = vulns.read_vulns_predicate(predicate, "scan.json")
    (component,) = result.components
    assert component.component.purl == "pkg:pypi/lib@1.0"
    (finding,) = component.vulnerabilities
    assert (finding.id, finding.severity, finding.kev, finding.fixed_in) == (
        "CVE-2024-1",
        "HIGH",
        True,
        "1.1",
    )
    assert finding.cvss == Cvss("3.1", 7.5, "CVSS:3.1/AV:N")
    assert started == finished == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_cosign_predicate_is_valid() -> None:
    predicate = vulns.cosign_vuln_predicate(_scan(), version="1.2.3")
    statement = vulns.vulns_statement(
        [("app", {"sha256": "ab" * 32})], predicate, vulns.COSIGN_VULN_V1
    )
    assert validate(statement) == []
    jsonschema.Draft202012Validator(json_schema("cosign-vuln-v1-statement")).validate(statement)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda p: p["metadata"].pop("scanFinishedOn"), "$.predicate.metadata.scanFinishedOn"),
        (lambda p: p["scanner"].pop("result"), "$.predicate.scanner.result"),
        (lambda p: p["scanner"]["db"].pop("lastUpdate"), "$.predicate.scanner.db.lastUpdate"),
        (
            lambda p: p["scanner"]["result"][0]["severity"][0].pop("score"),
            "$.predicate.scanner.result[0].severity[0].score",
        ),
        (
            lambda p: p["metadata"].update(scanStartedOn="yesterday"),
            "$.predicate.metadata.scanStartedOn",
        ),
    ],
)
def test_v02_required_fields(change: Callable[[dict[str, object]], object], path: str) -> None:
    predicate = json.loads(json.dumps(vulns.vulns_predicate(_scan(), version="1")))
    change(predicate)
    statement = vulns.vulns_statement([("app", {"sha256": "ab" * 32})], predicate)
    errors = [f.path for f in validate(statement) if f.severity is Severity.ERROR]
    assert errors == [path]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(json_schema("vulns-v0.2-statement")).validate(statement)


def test_schema_command_prints_the_vulns_schemas(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("vulns-v0.2", "vulns-v0.1", "cosign-vuln-v1"):
        assert cli("attest", "schema", name) == 0
        assert json.loads(capsys.readouterr().out)["$id"] == f"urn:assay:schema:{name}"


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*path, index)))
    return found


@settings(max_examples=150)
@given(st.data())
def test_any_value_anywhere_in_a_predicate_is_read_or_refused(data: st.DataObject) -> None:
    predicate = json.loads(json.dumps(vulns.vulns_predicate(_scan(), version="1")))
    path = data.draw(st.sampled_from(_paths(predicate)[1:]))
    target = predicate
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(_JSON)
    where = "scan.json"
    try:
        vulns.read_vulns_predicate(predicate, "scan.json")
    except AttestationError as error:  # anything else fails the test
        where = error.where
    assert where.startswith("scan.json")
