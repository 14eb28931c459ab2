"""A scan written for other tools: SARIF 2.1.0 and a CycloneDX VDR.

Pure: a `ScanResult` (and its `Verdict`) in, a JSON-ready object out.

* `to_sarif`: one rule per CVE, one result per affected component and CVE; `level` from
  the severity (CRITICAL/HIGH `error`, MEDIUM `warning`, else `note`), the CVSS score as
  `security-severity` (what code-scanning services rank by); ignored findings carry a
  `suppressions` entry with the ignore file's reason; conditional ones are `note`s.
* `to_vdr`: the input CycloneDX BOM (or, for other inputs, a new 1.5 BOM of the
  components) with a `vulnerabilities` section: one entry per CVE, its NVD rating, CWEs
  and the `affects` refs; a conditional finding is `in_triage` with the reason.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

from assay.audit.model import (
    Component,
    ComponentResult,
    Inventory,
    ScanResult,
    Vulnerability,
    present,
)
from assay.audit.rules import Finding, Verdict
from assay.audit.vex_out import cyclonedx_analysis

__all__ = ["to_sarif", "to_vdr"]

SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
NVD_DETAIL: Final = "https://nvd.nist.gov/vuln/detail/"
OSV_DETAIL: Final = "https://osv.dev/vulnerability/"


def advisory(vulnerability_id: str) -> dict[str, str]:
    """Where a vulnerability id is described: NVD for a CVE, osv.dev for the others
    (GHSA, PYSEC, GO, RUSTSEC, ...)."""
    if vulnerability_id.startswith("CVE-"):
        return {"name": "NVD", "url": NVD_DETAIL + vulnerability_id}
    return {"name": "OSV", "url": OSV_DETAIL + vulnerability_id}


CONDITIONAL_DETAIL: Final = (
    "affected only together with a platform the input does not list (a configuration's AND node)"
)
_LEVELS: Final = {"CRITICAL": "error", "HIGH": "error", "MEDIUM": "warning"}
_METHODS: Final = {"2.0": "CVSSv2", "3.0": "CVSSv3", "3.1": "CVSSv31", "4.0": "CVSSv4"}


_NOTES: Final = (
    ("kev", "; listed as known exploited (CISA KEV)"),
    ("fixed_in", "; fixed in {}"),
    ("conditional", f"; {CONDITIONAL_DETAIL}"),
)
"""(finding field, the message's clause when it is set) in the order they are written."""


def _message(component: ComponentResult, vulnerability: Vulnerability) -> str:
    c = component.component
    text = f"{c.name} {c.version or ''}".strip() + f" is affected by {vulnerability.id}"
    notes = (
        template.format(value)
        for field, template in _NOTES
        if (value := getattr(vulnerability, field))
    )
    return text + _severity_clause(vulnerability) + "".join(notes)


def _severity_clause(vulnerability: Vulnerability) -> str:
    """` (HIGH, CVSS 3.1 7.5)`, ` (HIGH)`, or nothing for an unrated finding."""
    if not vulnerability.severity:
        return ""
    if vulnerability.cvss is None:
        return f" ({vulnerability.severity})"
    cvss = vulnerability.cvss
    return f" ({vulnerability.severity}, CVSS {cvss.version} {cvss.base_score})"


def _help(vulnerability_id: str, description: str | None, fixes: Sequence[str]) -> dict[str, str]:
    fixed = f"Fixed in {', '.join(fixes)}." if fixes else "No fixed version is known."
    text = f"{description}\n\n" if description else ""
    return {
        "text": f"{text}{fixed} Details: {NVD_DETAIL}{vulnerability_id}",
        "markdown": f"{text}**{fixed}** [{vulnerability_id}]({NVD_DETAIL}{vulnerability_id})",
    }


def _fixes(result: ScanResult) -> dict[str, list[str]]:
    """The versions that fix each CVE, in the order the findings name them."""
    fixes: dict[str, list[str]] = {}
    for _, vulnerability in result.findings:
        known = fixes.setdefault(vulnerability.id, [])
        if vulnerability.fixed_in and vulnerability.fixed_in not in known:
            known.append(vulnerability.fixed_in)
    return fixes


def _sarif_rule(
    vulnerability: Vulnerability, description: str | None, fixes: Sequence[str]
) -> dict[str, Any]:
    properties: dict[str, Any] = {"tags": ["security", "vulnerability", *vulnerability.cwes]}
    if vulnerability.cvss is not None:
        properties["security-severity"] = f"{vulnerability.cvss.base_score:.1f}"
    return {
        "id": vulnerability.id,
        "name": vulnerability.id.replace("-", ""),
        "shortDescription": {"text": vulnerability.id},
        "fullDescription": {"text": description or vulnerability.id},
        "help": _help(vulnerability.id, description, fixes),
        "helpUri": advisory(vulnerability.id)["url"],
        "properties": properties,
    }


def _suppressions(vulnerability: Vulnerability, excuse: Finding | None) -> list[dict[str, str]]:
    """Why a result is suppressed: an ignore entry's reason, else a VEX statement's words."""
    if excuse is not None and excuse.ignored_by is not None:
        return [{"kind": "external", "justification": excuse.ignored_by.reason}]
    vex = vulnerability.vex
    if vex is None or not vex.suppresses:
        return []
    why = vex.impact or vex.justification or vex.action_statement or ""
    return [{"kind": "external", "justification": f"VEX {vex.status}: {why}".strip()}]


def _sarif_result(
    component: ComponentResult, vulnerability: Vulnerability, excuse: Finding | None
) -> dict[str, Any]:
    ref = component.component.ref
    fingerprint = hashlib.sha256(f"{ref}\0{vulnerability.id}".encode()).hexdigest()
    level = _LEVELS.get(vulnerability.severity or "", "note")
    entry: dict[str, Any] = {
        "ruleId": vulnerability.id,
        "level": "note" if vulnerability.conditional else level,
        "message": {"text": _message(component, vulnerability)},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": component.source}},
                "logicalLocations": [
                    {
                        "name": ref,
                        "fullyQualifiedName": component.component.purl or ref,
                        "kind": "module",
                    }
                ],
            }
        ],
        "partialFingerprints": {"assayComponentVulnerability/v1": fingerprint},
        "properties": {
            "cpes": list(component.identification.cpes),
            "kev": vulnerability.kev,
            "fixedIn": vulnerability.fixed_in,
            "conditional": vulnerability.conditional,
            "epss": None if vulnerability.epss is None else vulnerability.epss.to_dict(),
            "sources": [source.to_dict() for source in vulnerability.sources],
        },
    }
    suppressions = _suppressions(vulnerability, excuse)
    if suppressions:
        entry["suppressions"] = suppressions
    return entry


def to_sarif(
    result: ScanResult,
    verdict: Verdict | None,
    *,
    version: str,
    descriptions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of the findings; each rule carries the CVE's description (from
    `descriptions`, by id) and help text naming the versions that fix it."""
    descriptions = descriptions or {}
    fixes = _fixes(result)
    ignored = (
        {(f.component.component.ref, f.vulnerability.id): f for f in verdict.ignored}
        if verdict
        else {}
    )
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for component, vulnerability in result.findings:
        if vulnerability.id not in rules:
            rules[vulnerability.id] = _sarif_rule(
                vulnerability, descriptions.get(vulnerability.id), fixes[vulnerability.id]
            )
        excuse = ignored.get((component.component.ref, vulnerability.id))
        results.append(_sarif_result(component, vulnerability, excuse))
    driver = {"name": "assay", "version": version, "rules": list(rules.values())}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def _rating(vulnerability: Vulnerability) -> dict[str, Any]:
    rating: dict[str, Any] = {"source": advisory(_rated_in(vulnerability))}
    if vulnerability.cvss is not None:
        rating["score"] = vulnerability.cvss.base_score
        rating["method"] = _METHODS.get(vulnerability.cvss.version, "other")
        rating["vector"] = vulnerability.cvss.vector
    rating["severity"] = (vulnerability.severity or "unknown").lower()
    return rating


def _rated_in(vulnerability: Vulnerability) -> str:
    """The advisory whose rating a finding carries: OSV's own record where OSV rated it."""
    if (vulnerability.rated_by or "nvd").startswith("osv"):
        osv_ids = (s.id for s in vulnerability.sources if s.source == "osv")
        return next(osv_ids, vulnerability.id)
    return vulnerability.id


def _bom_components(result: ScanResult) -> list[dict[str, Any]]:
    components: list[dict[str, Any]] = []
    seen: set[str] = set()
    items = [c.component for c in result.components] + [u.component for u in result.unidentified]
    for component in items:
        if component.ref in seen:
            continue
        seen.add(component.ref)
        components.append(_bom_component(component))
    return components


def _bom_component(component: Component) -> dict[str, Any]:
    """A scanned component as a CycloneDX library (its version, purl and first CPE
    where it has them)."""
    entry: dict[str, Any] = {"type": "library", "bom-ref": component.ref, "name": component.name}
    if component.version:
        entry["version"] = component.version
    if component.purl:
        entry["purl"] = component.purl
    if component.cpes:
        entry["cpe"] = component.cpes[0]
    return entry


def _with_refs(items: Any, refs: dict[str, str]) -> Any:
    """Components (nested too) with a `bom-ref` where the input gave none."""
    if not isinstance(items, list):
        return items
    return [_with_ref(item, refs) if isinstance(item, dict) else item for item in items]


def _with_ref(item: dict[str, Any], refs: dict[str, str]) -> dict[str, Any]:
    """One component (and those nested in it) with a `bom-ref`: the one the scan gave
    its `group/name@version`, else that key itself."""
    copy = dict(item)
    if "bom-ref" not in copy and isinstance(copy.get("name"), str):
        name = copy["name"] if not copy.get("group") else f"{copy['group']}/{copy['name']}"
        version = copy.get("version")
        key = f"{name}@{version}" if version else name
        copy["bom-ref"] = refs.get(key, key)
    if "components" in copy:
        copy["components"] = _with_refs(copy["components"], refs)
    return copy


def _vdr_bom(result: ScanResult, inventories: Sequence[Inventory]) -> dict[str, Any]:
    """The input BOM when there is one input and it is one, else a new BOM."""
    boms = [i.document for i in inventories if i.document is not None]
    if len(boms) != 1 or len(inventories) != 1:
        return {
            "bomFormat": "CycloneDX",
            "specVersion": "1.5",
            "serialNumber": f"urn:uuid:{uuid.uuid4()}",
            "version": 1,
            "components": _bom_components(result),
        }
    bom = dict(boms[0])
    if bom.get("specVersion") in ("1.2", "1.3"):
        bom["specVersion"] = "1.4"
    bom["components"] = _with_refs(bom.get("components", []), {})
    return bom


def _affects(component: ComponentResult) -> dict[str, Any]:
    version = component.component.version
    versions = {"versions": [{"version": version, "status": "affected"}]} if version else {}
    return {"ref": component.component.ref, **versions}


def _vdr_vulnerability(
    vulnerability: Vulnerability, components: Sequence[ComponentResult]
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": vulnerability.id,
        "source": advisory(vulnerability.id),
        "ratings": [_rating(vulnerability)],
        "affects": [_affects(c) for c in components],
        **_vdr_details(vulnerability),
    }
    analysis = _vdr_analysis(vulnerability, components)
    if analysis is not None:
        item["analysis"] = analysis
    return item


def _vdr_details(vulnerability: Vulnerability) -> dict[str, Any]:
    """The entry's optional parts: the other ids, the CWEs and the fix."""
    fixed_in = vulnerability.fixed_in
    return present(
        references=[{"id": alias, "source": advisory(alias)} for alias in vulnerability.aliases],
        cwes=[int(cwe[4:]) for cwe in vulnerability.cwes if cwe[4:].isdigit()],
        recommendation=f"Upgrade to {fixed_in} or later" if fixed_in else None,
    )


def _vdr_analysis(
    vulnerability: Vulnerability, components: Sequence[ComponentResult]
) -> dict[str, Any] | None:
    """What VEX says of the vulnerability, else `in_triage` when every finding of it is
    conditional."""
    analysis = cyclonedx_analysis(vulnerability)
    if analysis is not None:
        return analysis
    found = (v for c in components for v in c.vulnerabilities if v.id == vulnerability.id)
    if all(v.conditional for v in found):
        return {"state": "in_triage", "detail": CONDITIONAL_DETAIL}
    return None


def to_vdr(result: ScanResult, inventories: Sequence[Inventory]) -> dict[str, Any]:
    """The input BOM (or a new one) with a CycloneDX `vulnerabilities` section."""
    bom = _vdr_bom(result, inventories)
    # One entry per CVE, or per CVE and VEX statement when statements differ by component.
    by_id: dict[tuple[str, Any], tuple[Vulnerability, list[ComponentResult]]] = {}
    for component, vulnerability in result.findings:
        entry = by_id.setdefault((vulnerability.id, vulnerability.vex), (vulnerability, []))
        entry[1].append(component)
    order = sorted(by_id, key=lambda k: (k[0], k[1] is not None, str(k[1])))
    bom["vulnerabilities"] = [_vdr_vulnerability(*by_id[key]) for key in order]
    return bom
