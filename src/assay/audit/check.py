"""`VulnerabilityCheck`: a policy's `vulnerabilities:` rule, as a verification step.

It implements `assay.verify.dependency_check.DependencyCheck`: the verifier hands it the
verified provenance's dependencies and the verified SBOM statements for the same subject;
it scans them against a `VulnerabilitySource` and judges the findings with the policy's
`failOn` rules and `ignore` entries (`assay.policy.vulnerabilities`). Two checks count in
the verdict:

* `vulnerabilities.store`: the store holds CVEs and, with `maxAge`, its last completed
  sync is at most that many days old;
* `vulnerabilities.findings`: no finding that is neither ignored nor conditional meets a
  `failOn` rule.

When both pass, the VSA records `ASSAY_VULNERABILITIES_CLEAN` among its `verifiedLevels`;
the report's details name the store generation and last sync used, and list failing,
ignored and unidentified components.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from assay.audit.inputs import SBOM_PREDICATES, document_inventory
from assay.audit.inputs.purls import component_from_purl
from assay.audit.model import Component, Inventory, SourceStatus
from assay.audit.rules import evaluate
from assay.audit.scan import scan
from assay.audit.source import VulnerabilitySource
from assay.errors import AssayError
from assay.policy.model import Policy
from assay.verify.checks import Check
from assay.verify.dependency_check import DependencyCheckInput, DependencyCheckResult

__all__ = ["CLEAN_LEVEL", "VulnerabilityCheck"]

CLEAN_LEVEL: Final = "ASSAY_VULNERABILITIES_CLEAN"


def _age_days(status: SourceStatus, now: datetime) -> float | None:
    if not status.last_sync:
        return None
    try:
        moment = datetime.fromisoformat(status.last_sync.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (now - moment).total_seconds() / 86400


def dependency_inventory(subject: DependencyCheckInput) -> list[Inventory]:
    """The components of the verified provenance and of verified SBOM statements."""
    inventories: list[Inventory] = []
    components: list[Component] = []
    for index, dependency in enumerate(subject.dependencies):
        where = f"provenance dependency [{index}]"
        uri = dependency.uri
        if uri and uri.startswith("pkg:"):
            try:
                components.append(component_from_purl(uri, where))
                continue
            except AssayError:
                pass
        if uri:
            repository = uri.split("@", 1)[0] if uri.startswith("git+") else None
            components.append(Component(ref=uri, name=uri, repository=repository, where=where))
    if components:
        inventories.append(
            Inventory("provenance", "slsa-provenance", tuple(components), verified=True)
        )
    for document in subject.documents:
        base = document.predicate_type.split("?", 1)[0].rstrip("/")
        if any(base.startswith(prefix) for prefix in SBOM_PREDICATES):
            inventory = document_inventory(dict(document.predicate), document.source)
            inventories.append(
                Inventory(
                    document.source,
                    inventory.format,
                    inventory.components,
                    verified=True,
                    document=inventory.document,
                )
            )
    return inventories


class VulnerabilityCheck:
    """The `vulnerabilities:` policy rule over a source (see the module docstring)."""

    name = "vulnerabilities"

    def __init__(
        self,
        source: VulnerabilitySource,
        *,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.source = source
        self._now = now

    def applies_to(self, policy: Policy) -> bool:
        return policy.vulnerabilities is not None

    def check(self, subject: DependencyCheckInput) -> DependencyCheckResult:
        rule = subject.policy.vulnerabilities
        if rule is None:
            return DependencyCheckResult(self.name, ())
        now = self._now()
        status = self.source.status()
        age = _age_days(status, now)
        store_ok = bool(status.cve_count) and (
            rule.max_age_days is None or (age is not None and age <= rule.max_age_days)
        )
        store_check = Check(
            "vulnerabilities.store",
            store_ok,
            {"cves": "> 0", "maxAgeDays": rule.max_age_days},
            {"cves": status.cve_count, "ageDays": None if age is None else round(age, 2)},
            "" if store_ok else _store_problem(status, age, rule.max_age_days),
        )
        try:
            inventories = dependency_inventory(subject)
            result = scan(inventories, self.source)
        except AssayError as error:
            failed = Check(
                "vulnerabilities.findings", False, "readable dependencies", str(error), str(error)
            )
            return DependencyCheckResult(self.name, (store_check, failed), (), _details(status))
        verdict = evaluate(result, rule.fail_on, rule.ignore, today=now.date())
        failing = [f"{f.component.component.ref} {f.vulnerability.id}" for f in verdict.failing]
        findings_check = Check(
            "vulnerabilities.findings",
            verdict.passed,
            [r.text for r in rule.fail_on],
            failing,
            ""
            if verdict.passed
            else f"{len(failing)} finding(s) meet a failOn rule: " + ", ".join(failing[:20]),
        )
        checks = (store_check, findings_check)
        passed = all(c.passed for c in checks)
        details = _details(status)
        details.update(
            {
                "components": len(result.components),
                "unidentified": [u.to_dict() for u in result.unidentified],
                "findings": [{"ref": c.component.ref, **v.to_dict()} for c, v in result.findings],
                "verdict": verdict.to_dict(),
            }
        )
        return DependencyCheckResult(self.name, checks, (CLEAN_LEVEL,) if passed else (), details)


def _store_problem(status: SourceStatus, age: float | None, max_age: float | None) -> str:
    if not status.cve_count:
        return "the vulnerability store holds no CVEs"
    if age is None:
        return f"the store has never completed a sync: its age is unknown (maxAge {max_age:g} days)"
    return f"the store was last synced {age:.1f} days ago, more than maxAge {max_age:g}"


def _details(status: SourceStatus) -> dict[str, Any]:
    return {"store": status.to_dict()}
