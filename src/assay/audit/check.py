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

When both pass, the VSA records `ASSAY_VULNERABILITIES_CLEAN` among its `verifiedLevels`,
and `ASSAY_VULN_SCANNED_1D` (or the `attestations.maxAge` given: `…_12H`, `…_2D`): the
scan was at most that old when verified. The report's details name the store generation
and last sync used, and list failing, ignored and unidentified components.

VEX documents given to the check apply to the findings (`assay.audit.vex`); with
`vex.signers`, only documents signed by those policy signers do, and any other is
refused in a failing `vulnerabilities.vex` check naming it and why. The documents that
changed a finding are the result's `input_attestations`, for the VSA.

With `attestations:`, a vulnerability scan attestation (in-toto vulns v0.1/v0.2 or
cosign's vuln v1) about the verified subject, signed by one of the named policy signers
and finished at most `maxAge` before now, stands for the scan: its findings are judged
by the same `failOn`, VEX and ignore rules (`vulnerabilities.attestation`), and it is
listed among the `input_attestations`. Without one, the check scans as above (its
details say why no attestation was taken). The scan the check performed is `performed`,
for `assay verify --vulns-out`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from assay.attestation.constants import COSIGN_VULN_V1, VULNS_V01, VULNS_V02
from assay.audit.inputs import document_inventory, sbom_kind
from assay.audit.inputs.purls import dependency_component
from assay.audit.model import Component, Inventory, SourceStatus
from assay.audit.rules import Verdict, evaluate
from assay.audit.scan import scan
from assay.audit.source import VulnerabilitySource
from assay.audit.vex import Admission, admit, apply_vex, product_names
from assay.audit.vulns import ScannedAt, read_vulns_predicate
from assay.errors import AssayError
from assay.policy.model import Policy
from assay.policy.vulnerabilities import (
    DEFAULT_SCAN_AGE,
    AttestationRule,
    VulnerabilityRule,
    scanned_level,
)
from assay.results import Check
from assay.verify.dependency_check import (
    DependencyCheckInput,
    DependencyCheckResult,
    VerifiedDocument,
)
from assay.vex import VexDocument

__all__ = ["CLEAN_LEVEL", "SCAN_PREDICATES", "VulnerabilityCheck"]

CLEAN_LEVEL: Final = "ASSAY_VULNERABILITIES_CLEAN"
SCAN_PREDICATES: Final = (VULNS_V02, VULNS_V01, COSIGN_VULN_V1)


_SKEW: Final = timedelta(minutes=5)


def dependency_inventory(subject: DependencyCheckInput) -> list[Inventory]:
    """The components of the verified provenance and of verified SBOM statements."""
    provenance = _provenance_components(subject)
    inventories = (
        [Inventory("provenance", "slsa-provenance", provenance, verified=True)]
        if provenance
        else []
    )
    sboms = (d for d in subject.documents if sbom_kind(d.predicate_type) is not None)
    return inventories + [_sbom_inventory(document) for document in sboms]


def _provenance_components(subject: DependencyCheckInput) -> tuple[Component, ...]:
    """The components of the verified provenance's dependencies, read as `assay scan`
    reads them: a malformed purl fails the check, naming it."""
    components = (
        dependency_component(dependency.uri, dependency.name, f"provenance dependency [{index}]")
        for index, dependency in enumerate(subject.dependencies)
    )
    return tuple(component for component in components if component is not None)


def _sbom_inventory(document: VerifiedDocument) -> Inventory:
    """The components of a verified SBOM statement's predicate."""
    inventory = document_inventory(dict(document.predicate), document.source)
    return Inventory(
        document.source,
        inventory.format,
        inventory.components,
        verified=True,
        document=inventory.document,
    )


class VulnerabilityCheck:
    """The `vulnerabilities:` policy rule over a source (see the module docstring)."""

    name = "vulnerabilities"

    def __init__(
        self,
        source: VulnerabilitySource | None,
        *,
        vex: Sequence[VexDocument] = (),
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.source = source
        self.vex = tuple(vex)
        self._now = now
        self.performed: ScannedAt | None = None
        """The scan the last `check` performed (None when an attestation stood for it)."""

    def applies_to(self, policy: Policy) -> bool:
        return policy.vulnerabilities is not None

    def check(self, subject: DependencyCheckInput) -> DependencyCheckResult:
        rule = subject.policy.vulnerabilities
        if rule is None:
            return DependencyCheckResult(self.name, ())
        now = self._now()
        self.performed = None
        admission = admit(self.vex, rule.vex_signers)
        vex_checks = _vex_checks(admission, rule.vex_signers)
        taken, why_not = _attestation(rule, subject.documents, now)
        if taken is not None:
            return self._judge_attestation(rule, taken, admission.admitted, vex_checks, now)
        if self.source is None:
            missing = Check(
                "vulnerabilities.attestation",
                False,
                "a fresh vulnerability scan attestation by a trusted scanner",
                why_not,
                why_not,
            )
            return DependencyCheckResult(self.name, (missing, *vex_checks))
        status = self.source.status()
        store_check = _store_check(status, rule.max_age_days, now)
        try:
            inventories = dependency_inventory(subject)
            started = self._now()
            result = scan(inventories, self.source)
            finished = self._now()
        except AssayError as error:
            failed = Check(
                "vulnerabilities.findings", False, "readable dependencies", str(error), str(error)
            )
            return DependencyCheckResult(
                self.name, (store_check, failed, *vex_checks), (), _details(status)
            )
        applied = apply_vex(result, admission.admitted, product_names(inventories))
        result = applied.result
        self.performed = ScannedAt(result, started, finished)
        details = _details(status)
        if rule.attestations is not None:
            details["attestation"] = why_not
        return self._judged(
            rule,
            result,
            (store_check,),
            vex_checks,
            now,
            details=details,
            inputs=tuple((d.source, {"sha256": d.sha256}) for d in applied.used),
        )

    def _judge_attestation(
        self,
        rule: VulnerabilityRule,
        document: VerifiedDocument,
        vex: Sequence[VexDocument],
        vex_checks: tuple[Check, ...],
        now: datetime,
    ) -> DependencyCheckResult:
        try:
            result, _, finished = read_vulns_predicate(document.predicate, document.source)
        except AssayError as error:
            failed = Check(
                "vulnerabilities.attestation", False, "a readable scan", str(error), str(error)
            )
            return DependencyCheckResult(self.name, (failed, *vex_checks))
        assert rule.attestations is not None
        taken = Check(
            "vulnerabilities.attestation",
            True,
            f"a scan by {', '.join(rule.attestations.signers)} at most "
            f"{rule.attestations.max_age} old",
            {"source": document.source, "signers": list(document.signers),
             "scanFinishedOn": finished.isoformat()},
        )  # fmt: skip
        applied = apply_vex(result, vex)
        inputs = ((document.source, dict(document.digest)),) if document.digest else ()
        return self._judged(
            rule,
            applied.result,
            (taken,),
            vex_checks,
            now,
            details={"attestation": document.source},
            inputs=inputs + tuple((d.source, {"sha256": d.sha256}) for d in applied.used),
        )

    def _judged(
        self,
        rule: VulnerabilityRule,
        result: Any,
        first: tuple[Check, ...],
        vex_checks: tuple[Check, ...],
        now: datetime,
        *,
        details: dict[str, Any],
        inputs: tuple[tuple[str, dict[str, str]], ...],
    ) -> DependencyCheckResult:
        verdict = evaluate(result, rule.fail_on, rule.ignore, today=now.date())
        checks = (*first, _findings_check(rule, verdict), *vex_checks)
        passed = all(c.passed for c in checks)
        age = rule.attestations.max_age if rule.attestations is not None else DEFAULT_SCAN_AGE
        details.update(
            {
                "components": len(result.components),
                "unidentified": [u.to_dict() for u in result.unidentified],
                "findings": [{"ref": c.component.ref, **v.to_dict()} for c, v in result.findings],
                "verdict": verdict.to_dict(),
            }
        )
        return DependencyCheckResult(
            self.name,
            checks,
            (CLEAN_LEVEL, scanned_level(age)) if passed else (),
            details,
            inputs,
        )


def _findings_check(rule: VulnerabilityRule, verdict: Verdict) -> Check:
    """Whether no finding meets a `failOn` rule (naming the first 20 that do)."""
    failing = [f"{f.component.component.ref} {f.vulnerability.id}" for f in verdict.failing]
    return Check(
        "vulnerabilities.findings",
        verdict.passed,
        [r.text for r in rule.fail_on],
        failing,
        ""
        if verdict.passed
        else f"{len(failing)} finding(s) meet a failOn rule: " + ", ".join(failing[:20]),
    )


def _vex_checks(admission: Admission, signers: Sequence[str]) -> tuple[Check, ...]:
    """A failed check naming the VEX documents a policy refused (none when none was)."""
    if not admission.refused:
        return ()
    refused = [f"{d.source}: {reason}" for d, reason in admission.refused]
    return (
        Check(
            "vulnerabilities.vex",
            False,
            f"VEX signed by {', '.join(signers)}",
            refused,
            "refused: " + "; ".join(refused),
        ),
    )


def _store_check(status: SourceStatus, max_age_days: float | None, now: datetime) -> Check:
    """Whether the store holds CVEs and was synced within `max_age_days`."""
    age = status.age_days(now)
    store_ok = bool(status.cve_count) and (
        max_age_days is None or (age is not None and age <= max_age_days)
    )
    return Check(
        "vulnerabilities.store",
        store_ok,
        {"cves": "> 0", "maxAgeDays": max_age_days},
        {"cves": status.cve_count, "ageDays": None if age is None else round(age, 2)},
        "" if store_ok else _store_problem(status, age, max_age_days),
    )


def _finished_on(document: VerifiedDocument) -> datetime | str:
    """The attestation's `scanFinishedOn` (UTC when it names no zone), or why none."""
    metadata = document.predicate.get("metadata")
    finished = metadata.get("scanFinishedOn") if isinstance(metadata, dict) else None
    try:
        moment = datetime.fromisoformat(str(finished).replace("Z", "+00:00"))
    except ValueError:
        return f"{document.source}: no readable scanFinishedOn ({finished!r})"
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _finished(document: VerifiedDocument, wanted: AttestationRule, now: datetime) -> datetime | str:
    """When a scan attestation's scan finished, or why the rule does not accept it."""
    signers = [name for name in document.signers if name in wanted.signers]
    if not signers:
        return (
            f"{document.source}: signed by {', '.join(document.signers)}, not by "
            f"{', '.join(wanted.signers)}"
        )
    moment = _finished_on(document)
    if isinstance(moment, str):
        return moment
    if now - moment > wanted.max_age:
        return (
            f"{document.source}: finished {moment.isoformat()}, older than maxAge {wanted.max_age}"
        )
    if moment > now + _SKEW:
        return f"{document.source}: finished in the future ({moment.isoformat()})"
    return moment


def _attestation(
    rule: VulnerabilityRule, documents: Sequence[VerifiedDocument], now: datetime
) -> tuple[VerifiedDocument | None, str]:
    """The newest scan attestation the rule accepts, or None and why there is none."""
    wanted: AttestationRule | None = rule.attestations
    if wanted is None:
        return None, "the policy accepts no scan attestation"
    scans = [d for d in documents if d.predicate_type in SCAN_PREDICATES]
    if not scans:
        return None, "no verified vulnerability scan attestation about the subject"
    return _newest(scans, wanted, now)


def _newest(
    scans: Sequence[VerifiedDocument], wanted: AttestationRule, now: datetime
) -> tuple[VerifiedDocument | None, str]:
    """The scan attestation that finished last of those the rule accepts, or None and
    why it accepts none."""
    reasons = []
    best: tuple[datetime, VerifiedDocument] | None = None
    for document in scans:
        moment = _finished(document, wanted, now)
        if isinstance(moment, str):
            reasons.append(moment)
        elif best is None or moment > best[0]:
            best = (moment, document)
    if best is None:
        return None, "; ".join(reasons)
    return best[1], ""


def _store_problem(status: SourceStatus, age: float | None, max_age: float | None) -> str:
    if not status.cve_count:
        return "the vulnerability store holds no CVEs"
    if age is None:
        return f"the store has never completed a sync: its age is unknown (maxAge {max_age:g} days)"
    return f"the store was last synced {age:.1f} days ago, more than maxAge {max_age:g}"


def _details(status: SourceStatus) -> dict[str, Any]:
    return {"store": status.to_dict()}
