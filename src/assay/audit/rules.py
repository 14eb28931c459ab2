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


class _Judge:
    """Sorts findings into a verdict's lists."""

    def __init__(
        self, rules: Sequence[FailRule], active: Sequence[IgnoreEntry], count_conditional: bool
    ) -> None:
        self.rules = rules
        self.active = active
        self.count_conditional = count_conditional
        self.failing: list[Finding] = []
        self.ignored: list[Finding] = []
        self.not_counted: list[Finding] = []
        self.suppressed: list[Finding] = []

    def _place(self, vulnerability: Vulnerability) -> list[Finding] | None:
        """The list a finding goes in (None: none of them)."""
        if vulnerability.vex is not None and vulnerability.vex.suppresses:
            return self.suppressed
        if not any(rule.holds(vulnerability) for rule in self.rules):
            return None
        if vulnerability.conditional and not self.count_conditional:
            return self.not_counted
        return self.failing

    def judge_all(self, result: ScanResult) -> None:
        for component in result.components:
            for vulnerability in component.vulnerabilities:
                self.judge(component, vulnerability)

    def judge(self, component: ComponentResult, vulnerability: Vulnerability) -> None:
        entry = next((e for e in self.active if covers(e, component, vulnerability)), None)
        if entry is not None:
            self.ignored.append(Finding(component, vulnerability, entry))
            return
        place = self._place(vulnerability)
        if place is not None:
            place.append(Finding(component, vulnerability))


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
    if not active and not rules:
        return Verdict((), (), expired, (), counts_conditional=count_conditional)
    judge = _Judge(rules, active, count_conditional)
    judge.judge_all(result)
    return Verdict(
        tuple(judge.failing),
        tuple(judge.ignored),
        expired,
        tuple(rules),
        counts_conditional=count_conditional,
        conditional_not_counted=tuple(judge.not_counted),
        suppressed=tuple(judge.suppressed),
    )
