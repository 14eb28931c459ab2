"""When a scan fails: `--fail-on` rules and ignore entries applied to a `ScanResult`.

Pure. The rules and ignore entries themselves (their grammar, files and policy section)
are `assay.policy.vulnerabilities`; here they meet findings: only findings that are
neither ignored nor conditional count (a conditional finding depends on a platform the
input does not list), nor said `not_affected` or `fixed` by VEX (`assay.audit.vex`);
expired entries are reported apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from assay.audit.model import ComponentResult, ScanResult, Vulnerability
from assay.policy.vulnerabilities import (
    FailRule,
    IgnoreEntry,
    parse_fail_on,
    parse_ignore_entries,
    parse_ignore_file,
)

__all__ = [
    "FailRule",
    "IgnoreEntry",
    "Verdict",
    "covers",
    "evaluate",
    "parse_fail_on",
    "parse_ignore_entries",
    "parse_ignore_file",
]


def covers(entry: IgnoreEntry, component: ComponentResult, vulnerability: Vulnerability) -> bool:
    """Whether an ignore entry excuses a component's finding."""
    if vulnerability.id != entry.id:
        return False
    if entry.component is None:
        return True
    c = component.component
    names = {c.ref, c.name, f"{c.name}@{c.version}", *component.identification.cpes}
    if c.purl:
        names.add(c.purl)
        names.add(c.purl.split("@", 1)[0])
    return entry.component in names


@dataclass(frozen=True, slots=True)
class Finding:
    component: ComponentResult
    vulnerability: Vulnerability
    ignored_by: IgnoreEntry | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.component.component.ref,
            "id": self.vulnerability.id,
            **({"ignoredBy": self.ignored_by.to_dict()} if self.ignored_by else {}),
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """A scan judged: which findings fail it, which are ignored, which excuses expired."""

    failing: tuple[Finding, ...]
    ignored: tuple[Finding, ...]
    expired: tuple[IgnoreEntry, ...]
    rules: tuple[FailRule, ...]
    counts_conditional: bool = False
    """Whether conditional findings were judged like the others (`--fail-on-conditional`)."""
    conditional_not_counted: tuple[Finding, ...] = ()
    """Conditional findings that meet a rule but were not counted (when not counting them)."""
    suppressed: tuple[Finding, ...] = ()
    """Findings VEX says are `not_affected` or `fixed`: in the output, failing nothing."""

    @property
    def passed(self) -> bool:
        return not self.failing

    def to_dict(self) -> dict[str, Any]:
        return {
            "failOn": [rule.text for rule in self.rules],
            "passed": self.passed,
            "failing": [f.to_dict() for f in self.failing],
            "ignored": [f.to_dict() for f in self.ignored],
            "expiredIgnores": [e.to_dict() for e in self.expired],
            "countsConditional": self.counts_conditional,
            "conditionalNotCounted": [f.to_dict() for f in self.conditional_not_counted],
            "vexSuppressed": [f.to_dict() for f in self.suppressed],
        }


def evaluate(
    result: ScanResult,
    rules: Sequence[FailRule],
    ignores: Sequence[IgnoreEntry],
    *,
    today: date,
    count_conditional: bool = False,
) -> Verdict:
    """Judge a scan: a finding neither ignored nor set aside by VEX (`not_affected`,
    `fixed`: kept in `suppressed`) that meets any rule fails it. A conditional finding (it
    holds only on a platform the input does not list) fails it only with
    `count_conditional`; otherwise it is kept in `conditional_not_counted`."""
    active = [entry for entry in ignores if entry.expires >= today]
    expired = tuple(entry for entry in ignores if entry.expires < today)
    failing: list[Finding] = []
    ignored: list[Finding] = []
    not_counted: list[Finding] = []
    suppressed: list[Finding] = []
    if not active and not rules:
        return Verdict((), (), expired, (), counts_conditional=count_conditional)
    for component in result.components:
        for vulnerability in component.vulnerabilities:
            entry = next((e for e in active if covers(e, component, vulnerability)), None)
            if entry is not None:
                ignored.append(Finding(component, vulnerability, entry))
                continue
            if vulnerability.vex is not None and vulnerability.vex.suppresses:
                suppressed.append(Finding(component, vulnerability))
                continue
            if not any(rule.holds(vulnerability) for rule in rules):
                continue
            if vulnerability.conditional and not count_conditional:
                not_counted.append(Finding(component, vulnerability))
            else:
                failing.append(Finding(component, vulnerability))
    return Verdict(
        tuple(failing),
        tuple(ignored),
        expired,
        tuple(rules),
        counts_conditional=count_conditional,
        conditional_not_counted=tuple(not_counted),
        suppressed=tuple(suppressed),
    )
