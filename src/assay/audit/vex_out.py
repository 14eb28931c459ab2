"""A scan written as VEX: a statement for every finding (`assay scan --format openvex`),
and the CycloneDX `analysis` of a finding (`--format cyclonedx`).

Pure. A finding's status is what the VEX statement on it says; else `not_affected` when
an ignore entry excuses it (the entry's reason is the impact statement); else
`under_investigation`: a scanner's match is a claim to look into, not a verdict.
Findings with the same vulnerability and the same words are one statement naming all
their components (each by its purl, else its CPE names, else its ref).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from assay.audit.model import ComponentResult, ScanResult, Vulnerability, present
from assay.audit.rules import Verdict
from assay.vex import ProductId, VexStatement, VexStatus
from assay.vex.cyclonedx import OPENVEX_TO_JUSTIFICATION
from assay.vex.model import Assessment, parse_time
from assay.vex.write import openvex_document

__all__ = ["cyclonedx_analysis", "finding_statements", "to_openvex"]

_TO_CYCLONEDX: Final = {
    VexStatus.NOT_AFFECTED: "not_affected",
    VexStatus.AFFECTED: "exploitable",
    VexStatus.FIXED: "resolved",
    VexStatus.UNDER_INVESTIGATION: "in_triage",
}


def _products(component: ComponentResult) -> tuple[ProductId, ...]:
    c = component.component
    if c.purl:
        return (ProductId("purl", c.purl),)
    cpes = c.cpes or component.identification.cpes
    if cpes:
        return tuple(ProductId("cpe", cpe) for cpe in cpes)
    return (ProductId("ref", c.ref),)


def _words(
    vulnerability: Vulnerability, ignored: dict[tuple[str, str], Any], ref: str
) -> tuple[VexStatus, str | None, str | None, str | None, datetime | None]:
    vex = vulnerability.vex
    if vex is not None:
        moment = parse_time(vex.timestamp, "vex.timestamp") if vex.timestamp else None
        return vex.status, vex.justification, vex.impact, vex.action_statement, moment
    entry = ignored.get((ref, vulnerability.id))
    if entry is not None:
        impact = f"ignored: {entry.reason} (until {entry.expires.isoformat()})"
        return VexStatus.NOT_AFFECTED, None, impact, None, None
    return VexStatus.UNDER_INVESTIGATION, None, None, None, None


def finding_statements(result: ScanResult, verdict: Verdict | None) -> list[VexStatement]:
    """A statement for every finding, findings with the same words joined."""
    ignored = (
        {(f.component.component.ref, f.vulnerability.id): f.ignored_by for f in verdict.ignored}
        if verdict is not None
        else {}
    )
    grouped: dict[tuple[Any, ...], list[ProductId]] = {}
    for component, vulnerability in result.findings:
        words = _words(vulnerability, ignored, component.component.ref)
        aliases: tuple[str, ...] = tuple(getattr(vulnerability, "aliases", ()))
        key = (vulnerability.id, aliases, *words)
        grouped.setdefault(key, []).extend(_products(component))
    return [
        VexStatement(
            vid,
            aliases,
            tuple(dict.fromkeys(products)),
            status,
            justification,
            impact,
            action,
            moment,
        )
        for (vid, aliases, status, justification, impact, action, moment), products in sorted(
            grouped.items(), key=lambda item: (item[0][0], str(item[0][2]))
        )
    ]


def to_openvex(
    result: ScanResult, verdict: Verdict | None, *, now: datetime, version: str
) -> dict[str, Any]:
    """The scan as an OpenVEX 0.2.0 document (see the module docstring)."""
    return openvex_document(
        finding_statements(result, verdict),
        author="assay",
        role="vulnerability scanner",
        tooling=f"assay {version}",
        now=now,
    )


def cyclonedx_analysis(vulnerability: Vulnerability) -> dict[str, Any] | None:
    """The CycloneDX `analysis` of a finding a VEX statement speaks of (else None)."""
    vex = vulnerability.vex
    if vex is None:
        return None
    analysis: dict[str, Any] = {"state": _TO_CYCLONEDX[vex.status]}
    justification = _cyclonedx_justification(vex)
    if justification is not None:
        analysis["justification"] = justification
    return analysis | present(detail=vex.impact or vex.action_statement, lastUpdated=vex.timestamp)


def _cyclonedx_justification(vex: Assessment) -> str | None:
    """CycloneDX's word for why a component is not affected (OpenVEX's words mapped)."""
    if vex.status is not VexStatus.NOT_AFFECTED or vex.justification is None:
        return None
    return OPENVEX_TO_JUSTIFICATION.get(vex.justification, vex.justification)
