"""Rules of the vulnerability scan predicates: in-toto vulns v0.1 and v0.2
(`https://in-toto.io/attestation/vulns/...`) and cosign's vuln v1
(`https://cosign.sigstore.dev/attestation/vuln/v1`).

v0.2's required fields are errors when missing: `scanner.uri`, `scanner.db.lastUpdate`
(when `db` is given), `scanner.result` with each result's `id` and `severity[]`
(`method`, `score`), `metadata.scanStartedOn` and `scanFinishedOn`. v0.1 and cosign's
predicate leave `result` free-form ("the result of the scan, in any format") and add an
`invocation` block; v0.1 requires the scanner URI, cosign's (whose own valid examples
leave it empty) does not; the times are checked the same way.
"""

from __future__ import annotations

from typing import Any, Final

from assay.attestation import _checks as c
from assay.attestation._json import child
from assay.attestation.findings import Finding

_P: Final = "$.predicate"


def _metadata(out: list[Finding], predicate: dict[str, Any]) -> None:
    path = child(_P, "metadata")
    metadata = predicate.get("metadata")
    if not isinstance(metadata, dict):
        if metadata is None:
            c.missing(out, path, "an object with scanStartedOn and scanFinishedOn")
        else:
            c.wrong_type(out, path, "an object", metadata)
        return
    for key in ("scanStartedOn", "scanFinishedOn"):
        if c.is_empty(metadata.get(key)):
            c.missing(out, child(path, key), "a timestamp")
        else:
            c.timestamp(out, metadata, key, path)


def _scanner(
    out: list[Finding], predicate: dict[str, Any], *, strict_result: bool, uri: bool = True
) -> None:
    path = child(_P, "scanner")
    scanner = predicate.get("scanner")
    if not isinstance(scanner, dict):
        if scanner is None:
            c.missing(out, path, "an object describing the scanner")
        else:
            c.wrong_type(out, path, "an object", scanner)
        return
    if uri:
        c.required_str(out, scanner, "uri", path, uri=strict_result)
    else:
        c.optional_str(out, scanner, "uri", path)
    c.optional_str(out, scanner, "version", path)
    if c.optional_object(out, scanner, "db", path):
        db_path = child(path, "db")
        db = scanner["db"]
        c.optional_str(out, db, "uri", db_path)
        c.optional_str(out, db, "version", db_path)
        if strict_result and c.is_empty(db.get("lastUpdate")):
            c.missing(out, child(db_path, "lastUpdate"), "a timestamp")
        else:
            c.timestamp(out, db, "lastUpdate", db_path)
    if strict_result:
        _results(out, scanner.get("result"), child(path, "result"))


def _results(out: list[Finding], results: Any, path: str) -> None:
    if not isinstance(results, list):
        if results is None:
            c.missing(out, path, "an array of results (empty when nothing was found)")
        else:
            c.wrong_type(out, path, "an array", results)
        return
    for index, entry in enumerate(results):
        at = f"{path}[{index}]"
        if not isinstance(entry, dict):
            c.wrong_type(out, at, "an object", entry)
            continue
        c.required_str(out, entry, "id", at)
        severity = entry.get("severity")
        if not isinstance(severity, list):
            if severity is None:
                c.missing(out, child(at, "severity"), "an array of {method, score}")
            else:
                c.wrong_type(out, child(at, "severity"), "an array", severity)
        else:
            for position, score in enumerate(severity):
                where = f"{child(at, 'severity')}[{position}]"
                if not isinstance(score, dict):
                    c.wrong_type(out, where, "an object", score)
                    continue
                c.required_str(out, score, "method", where)
                c.required_str(out, score, "score", where)
        notes = entry.get("annotations")
        if notes is not None and not (
            isinstance(notes, list) and all(isinstance(n, dict) for n in notes)
        ):
            c.wrong_type(out, child(at, "annotations"), "an array of objects", notes)


def _invocation(out: list[Finding], predicate: dict[str, Any]) -> None:
    if c.optional_object(out, predicate, "invocation", _P):
        path = child(_P, "invocation")
        for key in ("uri", "event_id", "builder.id"):
            c.optional_str(out, predicate["invocation"], key, path)


def check_vulns_v02(out: list[Finding], predicate: dict[str, Any]) -> None:
    _scanner(out, predicate, strict_result=True)
    _metadata(out, predicate)


def check_vulns_v01(out: list[Finding], predicate: dict[str, Any]) -> None:
    _invocation(out, predicate)
    _scanner(out, predicate, strict_result=False)
    _metadata(out, predicate)


def check_cosign_vuln_v1(out: list[Finding], predicate: dict[str, Any]) -> None:
    _invocation(out, predicate)
    _scanner(out, predicate, strict_result=False, uri=False)  # cosign's own examples omit it
    _metadata(out, predicate)
