"""--fail-on rules and ignore files: parsing, expiry, and which findings count."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.audit.model import (
    Component,
    ComponentResult,
    Cvss,
    Epss,
    FindingSource,
    Identification,
    ScanResult,
    SourceStatus,
    Vulnerability,
)
from assay.audit.rules import evaluate, parse_fail_on, parse_ignore_file
from assay.errors import InputError


def vulnerability(
    cve: str, severity: str, score: float, *, kev: bool = False, conditional: bool = False
) -> Vulnerability:
    return Vulnerability(
        cve, severity, Cvss("3.1", score, "CVSS:3.1/AV:N"), kev, (), None, None, conditional
    )


def result(*vulnerabilities: Vulnerability) -> ScanResult:
    component = Component(
        "ref-1", "log4j-core", "2.14.1", "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1"
    )
    identification = Identification(
        ("cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*",), "cpe", 1.0, "given"
    )
    return ScanResult(
        (ComponentResult(component, identification, vulnerabilities, "bom.json"),),
        (),
        SourceStatus(1, None),
    )


TODAY = date(2026, 6, 1)


@pytest.mark.parametrize(
    ("rule", "failing"),
    [
        ("severity>=HIGH", {"CVE-2021-44228", "CVE-2021-45046"}),
        ("severity>=critical", {"CVE-2021-44228"}),
        ("severity=MEDIUM", {"CVE-2021-44832"}),
        ("cvss>=9.0", {"CVE-2021-44228", "CVE-2021-45046"}),
        ("cvss>9.0", {"CVE-2021-44228"}),
        ("kev", {"CVE-2021-44228"}),
        ("kev,cvss>=10", {"CVE-2021-44228"}),
        ("severity>=LOW,cvss>=9.5", {"CVE-2021-44228"}),
    ],
)
def test_fail_on_rules(rule: str, failing: set[str]) -> None:
    scanned = result(
        vulnerability("CVE-2021-44228", "CRITICAL", 10.0, kev=True),
        vulnerability("CVE-2021-45046", "HIGH", 9.0),
        vulnerability("CVE-2021-44832", "MEDIUM", 6.6),
    )
    verdict = evaluate(scanned, [parse_fail_on(rule)], [], today=TODAY)
    assert {f.vulnerability.id for f in verdict.failing} == failing
    assert verdict.passed is (not failing)


def test_several_rules_are_any_of_and_conditional_findings_never_fail() -> None:
    scanned = result(
        vulnerability("CVE-2021-44832", "MEDIUM", 6.6),
        vulnerability("CVE-2021-45046", "CRITICAL", 9.0, conditional=True),
    )
    rules = [parse_fail_on("kev"), parse_fail_on("severity>=MEDIUM")]
    verdict = evaluate(scanned, rules, [], today=TODAY)
    assert [f.vulnerability.id for f in verdict.failing] == ["CVE-2021-44832"]


def test_epss_and_source_rules() -> None:
    scored = replace(
        vulnerability("CVE-2021-44832", "MEDIUM", 6.6),
        epss=Epss(0.51, 0.97, "2026-05-31"),
        sources=(FindingSource("cisa-adp", "CVE-2021-44832", "$.containers.adp[0].affected[0]"),),
    )
    plain = vulnerability("CVE-2021-45046", "CRITICAL", 9.0)
    for text, failing in (
        ("epss>=0.5", ["CVE-2021-44832"]),
        ("epss>0.51", []),
        ("source=cisa-adp", ["CVE-2021-44832"]),
        ("source=osv", []),
        ("severity>=MEDIUM,source=cisa-adp", ["CVE-2021-44832"]),
    ):
        verdict = evaluate(result(scored, plain), [parse_fail_on(text)], [], today=TODAY)
        assert [f.vulnerability.id for f in verdict.failing] == failing, text


@pytest.mark.parametrize(
    "rule",
    ["severity>=SEVERE", "cvss>=11", "epss>1.5", "source=ghsa", "", "kev,", "cvss>=high"],
)
def test_bad_rules_say_what_is_expected(rule: str) -> None:
    with pytest.raises(InputError, match="--fail-on"):
        parse_fail_on(rule)


IGNORE = b"""
ignore:
  - id: CVE-2021-44228
    component: pkg:maven/org.apache.logging.log4j/log4j-core
    reason: JNDI lookups are disabled
    expires: 2026-12-31
  - id: CVE-2021-45046
    reason: superseded by the upgrade
    expires: 2026-01-31
  - id: CVE-2021-44832
    component: some-other-component
    reason: not this one
    expires: 2027-01-01
"""


def test_ignore_entries_apply_until_they_expire_and_only_to_their_component() -> None:
    entries = parse_ignore_file(IGNORE, ".assay-ignore.yaml")
    scanned = result(
        vulnerability("CVE-2021-44228", "CRITICAL", 10.0, kev=True),
        vulnerability("CVE-2021-45046", "HIGH", 9.0),
        vulnerability("CVE-2021-44832", "MEDIUM", 6.6),
    )
    verdict = evaluate(scanned, [parse_fail_on("severity>=MEDIUM")], entries, today=TODAY)
    assert [f.vulnerability.id for f in verdict.ignored] == ["CVE-2021-44228"]
    assert {f.vulnerability.id for f in verdict.failing} == {"CVE-2021-45046", "CVE-2021-44832"}
    assert [e.id for e in verdict.expired] == ["CVE-2021-45046"]
    assert verdict.to_dict()["expiredIgnores"][0]["expires"] == "2026-01-31"
    # On the expiry day itself the entry still applies.
    last_day = evaluate(scanned, [], entries, today=date(2026, 1, 31))
    assert {f.vulnerability.id for f in last_day.ignored} == {"CVE-2021-44228", "CVE-2021-45046"}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            b"ignore:\n  - id: CVE-2021-1\n    reason: r\n    expires: 2026-01-01\n",
            "$.ignore[0].id",
        ),
        (b"ignore:\n  - id: CVE-2021-44228\n    expires: 2026-01-01\n", "$.ignore[0].reason"),
        (
            b"ignore:\n  - id: CVE-2021-44228\n    reason: r\n    expires: soon\n",
            "$.ignore[0].expires",
        ),
        (
            b"ignore:\n  - id: CVE-2021-44228\n    reason: r\n    expires: 2026-01-01\n    until: x\n",
            "$.ignore[0].until",
        ),
        (b"ignores: []\n", "$"),
        (
            b"ignore:\n  - id: CVE-2021-44228\n    id: CVE-2021-45046\n    reason: r\n    expires: 2026-01-01\n",
            "line 3",
        ),
        (
            b'{"ignore": [{"id": "CVE-2021-44228", "reason": "r", "expires": "2026-01-01", "reason": "s"}]}',
            "line 1",
        ),
    ],
)
def test_bad_ignore_files_name_the_place(text: bytes, where: str) -> None:
    with pytest.raises(InputError) as error:
        parse_ignore_file(text, "ignore.yaml")
    assert where in error.value.where


def test_conditional_findings_fail_with_fail_on_conditional_and_are_counted_apart_without() -> None:
    # A GlobalProtect SBOM listing no OS had 5 findings (2 HIGH), all conditional: exit 0
    # with no way to change it and nothing saying so.
    scanned = result(
        vulnerability("CVE-2024-3400", "CRITICAL", 10.0, conditional=True),
        vulnerability("CVE-2024-5921", "HIGH", 7.5, conditional=True),
        vulnerability("CVE-2024-2432", "MEDIUM", 4.5, conditional=True),
    )
    rules = [parse_fail_on("severity>=HIGH")]
    lenient = evaluate(scanned, rules, [], today=TODAY)
    assert lenient.passed
    assert [f.vulnerability.id for f in lenient.conditional_not_counted] == [
        "CVE-2024-3400",
        "CVE-2024-5921",
    ]
    assert lenient.to_dict()["countsConditional"] is False
    strict = evaluate(scanned, rules, [], today=TODAY, count_conditional=True)
    assert not strict.passed
    assert [f.vulnerability.id for f in strict.failing] == ["CVE-2024-3400", "CVE-2024-5921"]
    assert strict.conditional_not_counted == ()


@given(
    findings=st.lists(
        st.tuples(
            st.sampled_from(["LOW", "MEDIUM", "HIGH", "CRITICAL"]),
            st.floats(0, 10),
            st.booleans(),
            st.booleans(),
        ),
        max_size=12,
    ),
    rule=st.sampled_from(["severity>=HIGH", "cvss>=7", "kev", "severity>=LOW,cvss>=5"]),
)
def test_counting_conditional_findings_fails_exactly_those_set_apart(
    findings: list[tuple[str, float, bool, bool]], rule: str
) -> None:
    scanned = result(
        *(
            vulnerability(f"CVE-2024-{n:04d}", severity, score, kev=kev, conditional=conditional)
            for n, (severity, score, kev, conditional) in enumerate(findings)
        )
    )
    rules = [parse_fail_on(rule)]
    lenient = evaluate(scanned, rules, [], today=TODAY)
    strict = evaluate(scanned, rules, [], today=TODAY, count_conditional=True)
    ids = [f.vulnerability.id for f in strict.failing]
    assert sorted(ids) == sorted(
        f.vulnerability.id for f in (*lenient.failing, *lenient.conditional_not_counted)
    )
    assert all(not f.vulnerability.conditional for f in lenient.failing)
