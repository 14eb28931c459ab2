"""A scan as a vulnerability attestation, and such an attestation read back as a scan.

    predicate = vulns_predicate(ScannedAt(result, started, finished), version="1.0")
    statement = vulns_statement([("app.tar", {"sha256": "…"})], predicate)
    findings = read_vulns_predicate(predicate, "scan.intoto.json")   # -> ScanResult

Pure. The predicate is the in-toto vulns predicate v0.2
(`https://in-toto.io/attestation/vulns/v0.2`): `scanner.uri`/`version`, `scanner.db`
(`uri`, `version` from the store's generation, `lastUpdate` from its last completed sync
or import), `scanner.result[]` with one entry per finding (its `id` and `severity`
scores: NVD's severity and the CVSS base score), and `metadata.scanStartedOn`/
`scanFinishedOn`. The spec's `annotations` carry what the predicate has no field for:
the component (ref, name, version, purl, CPE names), KEV, the fixed-in version, whether
the finding is conditional and the VEX statement on it, so that a verifier can judge the
findings again with its own `failOn`, VEX and ignore rules (`read_vulns_predicate`).
cosign's `https://cosign.sigstore.dev/attestation/vuln/v1` carries the same scanner
and results with its `invocation` block (`cosign_vuln_predicate`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from assay.attestation.constants import COSIGN_VULN_V1, STATEMENT_V1, VULNS_V01, VULNS_V02
from assay.audit.model import (
    Component,
    ComponentResult,
    Cvss,
    Identification,
    ScanResult,
    SourceStatus,
    Vulnerability,
    list_of,
    text_of,
)
from assay.errors import AttestationError
from assay.policy.vulnerabilities import SEVERITY_ORDER

__all__ = [
    "COSIGN_VULN_V1",
    "SCANNER_URI",
    "VULNS_V01",
    "VULNS_V02",
    "ScannedAt",
    "cosign_vuln_predicate",
    "read_vulns_predicate",
    "vulns_predicate",
    "vulns_statement",
]

SCANNER_URI: Final = "pkg:pypi/assay"
DB_URI: Final = "https://services.nvd.nist.gov/rest/json/cves/2.0"
"""The data the store mirrors: NVD's CVE API 2.0."""
SEVERITY_METHOD: Final = "nvd"
_CVSS_METHOD: Final = "CVSS:"
MAX_RESULTS: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class ScannedAt:
    """A scan and when it ran."""

    result: ScanResult
    started: datetime
    finished: datetime


def _time(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _last_update(status: SourceStatus) -> str | None:
    return status.last_sync or status.last_import


def _result(component: ComponentResult, vulnerability: Vulnerability) -> dict[str, Any]:
    severity: list[dict[str, str]] = []
    if vulnerability.severity:
        severity.append({"method": SEVERITY_METHOD, "score": vulnerability.severity})
    if vulnerability.cvss is not None:
        severity.append(
            {
                "method": f"{_CVSS_METHOD}{vulnerability.cvss.version}",
                "score": f"{vulnerability.cvss.base_score:.1f}",
            }
        )
    c = component.component
    annotations: dict[str, Any] = {
        "component": {
            "ref": c.ref,
            "name": c.name,
            "version": c.version,
            "purl": c.purl,
            "cpes": list(component.identification.cpes),
        },
        "kev": vulnerability.kev,
        "fixedIn": vulnerability.fixed_in,
        "conditional": vulnerability.conditional,
    }
    if vulnerability.cvss is not None:
        annotations["cvssVector"] = vulnerability.cvss.vector
    if vulnerability.vex is not None:
        annotations["vex"] = vulnerability.vex.to_dict()
    return {"id": vulnerability.id, "severity": severity, "annotations": [annotations]}


def _scanner(scanned: ScannedAt, version: str) -> dict[str, Any]:
    status = scanned.result.store
    scanner: dict[str, Any] = {"uri": f"{SCANNER_URI}@{version}", "version": version}
    update = _last_update(status)
    if update is not None:  # `lastUpdate` is required of a `db`: none without it
        db: dict[str, Any] = {"uri": DB_URI}
        if status.generation is not None:
            db["version"] = f"generation-{status.generation}"
        scanner["db"] = {**db, "lastUpdate": update}
    scanner["result"] = [_result(c, v) for c, v in scanned.result.findings]
    return scanner


def vulns_predicate(scanned: ScannedAt, *, version: str) -> dict[str, Any]:
    """The in-toto vulns v0.2 predicate of a scan (see the module docstring)."""
    return {
        "scanner": _scanner(scanned, version),
        "metadata": {
            "scanStartedOn": _time(scanned.started),
            "scanFinishedOn": _time(scanned.finished),
        },
    }


def cosign_vuln_predicate(
    scanned: ScannedAt, *, version: str, invocation_uri: str = ""
) -> dict[str, Any]:
    """cosign's vuln v1 predicate of a scan (Kyverno's `vulnerability` checks read it)."""
    return {
        "invocation": {
            "parameters": None,
            "uri": invocation_uri,
            "event_id": "",
            "builder.id": "",
        },
        **vulns_predicate(scanned, version=version),
    }


def vulns_statement(
    subjects: Sequence[tuple[str, Mapping[str, str]]],
    predicate: Mapping[str, Any],
    predicate_type: str = VULNS_V02,
) -> dict[str, Any]:
    """An in-toto v1 statement about `subjects` (name, digest set) with the predicate."""
    if not subjects:
        raise AttestationError("subject", "expected at least one subject, found none")
    return {
        "_type": STATEMENT_V1,
        "subject": [{"name": name, "digest": dict(digest)} for name, digest in subjects],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


# -- reading -----------------------------------------------------------------------------


def _severity(entry: Mapping[str, Any], where: str) -> tuple[str | None, Cvss | None]:
    scores = entry.get("severity")
    if not isinstance(scores, list):
        raise AttestationError(f"{where}.severity", "expected an array of {method, score}")
    severity: str | None = None
    cvss: Cvss | None = None
    for index, score in enumerate(scores):
        rating = _score(score, f"{where}.severity[{index}]")
        if isinstance(rating, Cvss):
            cvss = rating
        elif rating is not None:
            severity = rating
    return severity, cvss


def _score(score: object, where: str) -> str | Cvss | None:
    """One `{method, score}`: NVD's severity word, a CVSS score, or neither (None)."""
    if not isinstance(score, Mapping):
        raise AttestationError(where, "expected {method, score}")
    method, value = text_of(score.get("method")), score.get("score")
    if method is None or not isinstance(value, str | int | float):
        raise AttestationError(where, "expected {method, score}")
    text = str(value)
    if method.lower() == SEVERITY_METHOD and text.upper() in SEVERITY_ORDER:
        return text.upper()
    if method.upper().startswith(_CVSS_METHOD) or method.lower().startswith("cvss"):
        return _cvss_score(method, text, f"{where}.score")
    return None


def _cvss_score(method: str, text: str, where: str) -> Cvss:
    """A CVSS `score` under a `CVSS_V3`-style method (its version after the colon)."""
    try:
        return Cvss(method.split(":", 1)[-1], float(text), "")
    except ValueError:
        raise AttestationError(where, f"expected a CVSS score, found {text!r}") from None


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise AttestationError(where, "expected an object")
    return value


def _read_time(metadata: Mapping[str, Any], key: str, where: str) -> datetime:
    text = text_of(metadata.get(key))
    try:
        moment = datetime.fromisoformat((text or "").replace("Z", "+00:00"))
    except ValueError:
        raise AttestationError(
            f"{where}.metadata.{key}", f"expected an RFC 3339 time, found {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _annotations(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A result's annotations, merged into one object (later keys win)."""
    notes = entry.get("annotations")
    merged: dict[str, Any] = {}
    for item in list_of(notes):
        if isinstance(item, Mapping):
            merged.update(item)
    return merged


def _finding(entry: Mapping[str, Any], note: Mapping[str, Any], at: str) -> Vulnerability:
    severity, cvss = _severity(entry, at)
    vector = text_of(note.get("cvssVector"))
    if cvss is not None and vector:
        cvss = Cvss(cvss.version, cvss.base_score, vector)
    return Vulnerability(
        str(entry["id"]),
        severity,
        cvss,
        note.get("kev") is True,
        (),
        None,
        text_of(note.get("fixedIn")),
        note.get("conditional") is True,
    )


_Group = tuple[Component, list[Vulnerability], tuple[str, ...]]


def _group(about: Mapping[str, Any], ref: str, at: str) -> _Group:
    """The component an annotation names, with no finding yet, and its CPE names."""
    cpes = about.get("cpes")
    component = Component(
        ref=ref,
        name=text_of(about.get("name")) or ref,
        version=text_of(about.get("version")),
        purl=text_of(about.get("purl")),
        where=at,
    )
    names = tuple(c for c in list_of(cpes) if isinstance(c, str))
    return component, [], names


def _results(scanner: Mapping[str, Any], where: str) -> list[Any]:
    entries = scanner.get("result")
    if entries is None:
        return []
    if not isinstance(entries, list) or len(entries) > MAX_RESULTS:
        raise AttestationError(f"{where}.scanner.result", "expected an array of results")
    return entries


def _grouped(entries: Sequence[Any], where: str) -> dict[str, _Group]:
    """The results as findings, grouped by the component ref their annotation names."""
    groups: dict[str, _Group] = {}
    for index, entry in enumerate(entries):
        at = f"{where}.scanner.result[{index}]"
        if not isinstance(entry, Mapping) or text_of(entry.get("id")) is None:
            raise AttestationError(at, "expected an object with an id")
        note = _annotations(entry)
        about = note.get("component")
        about = about if isinstance(about, Mapping) else {}
        ref = text_of(about.get("ref")) or ""
        finding = _finding(entry, note, at)
        if ref not in groups:
            groups[ref] = _group(about, ref, at)
        groups[ref][1].append(finding)
    return groups


def read_vulns_predicate(
    predicate: Mapping[str, Any], source: str
) -> tuple[ScanResult, datetime, datetime]:
    """A vulns predicate (v0.1, v0.2 or cosign's v1) as a scan, with its start and finish.

    Findings of one component (by the annotated ref, else the vulnerability alone) are
    grouped as the scan had them; results without annotations become findings of an
    unnamed component, so that rules on ids and scores still judge them.
    """
    where = f"{source}: $.predicate"
    scanner = _object(predicate.get("scanner"), f"{where}.scanner")
    metadata = _object(predicate.get("metadata"), f"{where}.metadata")
    started, finished = (
        _read_time(metadata, key, where) for key in ("scanStartedOn", "scanFinishedOn")
    )
    groups = _grouped(_results(scanner, where), where)
    components = tuple(
        ComponentResult(
            component,
            Identification(names, "cpe" if names else "name", 1.0, "from the attestation"),
            tuple(findings),
            source,
        )
        for component, findings, names in groups.values()
    )
    return ScanResult(components, (), SourceStatus(None, None)), started, finished
