"""`VulnerabilityCheck`: the policy's `vulnerabilities:` rule as a verification step,
over verified dependencies and SBOM statements, against a real store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from tests.audit.conftest import real_records

from assay.audit import CLEAN_LEVEL, StoreSource, VulnerabilityCheck
from assay.errors import InputError
from assay.nvd.storage import open_store
from assay.policy import Policy, PolicyError, parse_policy
from assay.verify.claims import Dependency, Subject
from assay.verify.dependency_check import DependencyCheck, DependencyCheckInput, VerifiedDocument

POLICIES = Path(__file__).parents[2] / "policies"
BASE = (POLICIES / "assay-attest.yaml").read_bytes()


def policy(section: str) -> Policy:
    return parse_policy(BASE + b"\n" + section.encode(), source="policy.yaml", base_dir=POLICIES)


@pytest.fixture
def source(audit_sqlite_url: str) -> Iterator[StoreSource]:
    store = open_store(audit_sqlite_url)
    try:
        yield StoreSource(store)
    finally:
        store.close()


def _kev_name() -> tuple[str, str]:
    for record in real_records():
        if record.get("cisaExploitAdd"):
            for configuration in record.get("configurations", []):
                for node in configuration["nodes"]:
                    for match in node["cpeMatch"]:
                        if match["vulnerable"] and match["criteria"].split(":")[5] not in (
                            "*",
                            "-",
                        ):
                            return match["criteria"], record["id"]
    raise AssertionError("the sample has a KEV record with a literal criteria")


def _subject(rule: str, documents: tuple[VerifiedDocument, ...] = ()) -> DependencyCheckInput:
    return DependencyCheckInput(
        policy=policy(rule),
        subjects=(Subject("app.tar.gz", {"sha256": "a" * 64}),),
        dependencies=(
            Dependency(
                "git+https://github.com/example/app@refs/heads/main", {"gitCommit": "b" * 40}, True
            ),
            Dependency("pkg:github/zmanda/amanda@3.3.0", {"sha256": "c" * 64}, False),
        ),
        documents=documents,
    )


def _sbom(cpe: str) -> VerifiedDocument:
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "components": [{"type": "library", "bom-ref": "kev-component", "name": "x", "cpe": cpe}],
    }
    return VerifiedDocument(
        "sbom.intoto.json", "https://cyclonedx.org/bom", orjson.loads(orjson.dumps(bom))
    )


def test_it_is_a_dependency_check_and_applies_only_to_policies_that_ask(
    source: StoreSource,
) -> None:
    check: DependencyCheck = VulnerabilityCheck(source)
    assert check.name == "vulnerabilities"
    assert check.applies_to(policy("vulnerabilities: {failOn: [kev]}"))
    assert not check.applies_to(parse_policy(BASE, source="p.yaml", base_dir=POLICIES))


def test_a_kev_finding_in_a_verified_sbom_fails_and_an_ignore_entry_excuses_it(
    source: StoreSource,
) -> None:
    cpe, cve = _kev_name()
    failing = VulnerabilityCheck(source).check(
        _subject("vulnerabilities: {failOn: [kev]}", (_sbom(cpe),))
    )
    assert not failing.passed
    assert failing.verified_levels == ()
    assert f"kev-component {cve}" in failing.checks[1].found
    assert failing.details["store"]["generation"] >= 1
    assert failing.to_dict()["details"]["components"] == 2

    excused = VulnerabilityCheck(source).check(
        _subject(
            "vulnerabilities:\n  failOn: [kev]\n  ignore:\n"
            f"    - {{id: {cve}, component: kev-component, reason: mitigated, expires: 2999-01-01}}\n",
            (_sbom(cpe),),
        )
    )
    assert excused.passed, excused.to_dict()
    assert excused.verified_levels == (CLEAN_LEVEL, "ASSAY_VULN_SCANNED_1D")
    assert not CLEAN_LEVEL.startswith("SLSA_")


def test_provenance_dependencies_alone(source: StoreSource) -> None:
    result = VulnerabilityCheck(source).check(_subject("vulnerabilities: {failOn: ['cvss>=0']}"))
    assert result.details["components"] == 1  # amanda, through the CPE dictionary
    assert [u["ref"] for u in result.details["unidentified"]] == [
        "git+https://github.com/example/app@refs/heads/main"
    ]


def test_max_age_needs_a_recent_sync(source: StoreSource) -> None:
    rule = "vulnerabilities: {failOn: [kev], maxAge: 7}"
    never = VulnerabilityCheck(source).check(_subject(rule))
    assert not never.checks[0].passed
    assert "never completed a sync" in never.checks[0].detail
    source.store.set_meta(
        "sync.cves",
        orjson.dumps({"version": 1, "upstream": "https://nvd", "phase": "incremental",
                      "since": "2026-06-01T00:00:00Z", "window": None, "nextIndex": 0, "total": None}).decode(),
    )  # fmt: skip
    try:
        fresh = VulnerabilityCheck(source, now=lambda: datetime(2026, 6, 3, tzinfo=UTC))
        assert fresh.check(_subject(rule)).checks[0].passed
        stale = VulnerabilityCheck(
            source, now=lambda: datetime(2026, 6, 1, tzinfo=UTC) + timedelta(days=9)
        )
        assert not stale.check(_subject(rule)).checks[0].passed
    finally:
        source.store.set_meta("sync.cves", "")


@pytest.mark.parametrize(
    ("section", "where"),
    [
        ("vulnerabilities: {failOn: [severe]}", "$.vulnerabilities.failOn[0]"),
        ("vulnerabilities: {failOn: []}", "$.vulnerabilities.failOn"),
        ("vulnerabilities: {maxAge: -1}", "$.vulnerabilities.maxAge"),
        ("vulnerabilities: {colour: red}", "$.vulnerabilities.colour"),
        (
            "vulnerabilities: {ignore: [{id: CVE-2021-44228, reason: r}]}",
            "$.vulnerabilities.ignore[0].expires",
        ),
    ],
)
def test_policy_errors_name_the_path(section: str, where: str) -> None:
    with pytest.raises((PolicyError, InputError)) as error:
        policy(section)
    assert error.value.where == f"policy.yaml: {where}"
