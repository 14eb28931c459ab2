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
    metadata: Any = predicate.get("metadata")
    what = "an object with scanStartedOn and scanFinishedOn"
    if not c.present(out, metadata, dict, path, expected="an object", what=what):
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
    scanner: Any = predicate.get("scanner")
    if not c.present(
        out, scanner, dict, path, expected="an object", what="an object describing the scanner"
    ):
        return
    if uri:
        c.required_str(out, scanner, "uri", path, uri=strict_result)
    else:
        c.optional_str(out, scanner, "uri", path)
    c.optional_str(out, scanner, "version", path)
    if c.optional_object(out, scanner, "db", path):
        _database(out, scanner["db"], child(path, "db"), strict_result=strict_result)
    if strict_result:
        _results(out, scanner.get("result"), child(path, "result"))


def _database(out: list[Finding], db: dict[str, Any], path: str, *, strict_result: bool) -> None:
    c.optional_str(out, db, "uri", path)
    c.optional_str(out, db, "version", path)
    if strict_result and c.is_empty(db.get("lastUpdate")):
        c.missing(out, child(path, "lastUpdate"), "a timestamp")
    else:
        c.timestamp(out, db, "lastUpdate", path)


def _results(out: list[Finding], results: Any, path: str) -> None:
    what = "an array of results (empty when nothing was found)"
    if not c.present(out, results, list, path, expected="an array", what=what):
        return
    for at, entry in c.objects(out, results, path):
        _result(out, entry, at)


def _result(out: list[Finding], entry: dict[str, Any], at: str) -> None:
    c.required_str(out, entry, "id", at)
    _severity(out, entry.get("severity"), child(at, "severity"))
    notes = entry.get("annotations")
    if notes is not None and not (
        isinstance(notes, list) and all(isinstance(n, dict) for n in notes)
    ):
        c.wrong_type(out, child(at, "annotations"), "an array of objects", notes)


def _severity(out: list[Finding], severity: Any, path: str) -> None:
    """A result's `severity`: an array of {method, score}."""
    what = "an array of {method, score}"
    if c.present(out, severity, list, path, expected="an array", what=what):
        for where, score in c.objects(out, severity, path):
            c.required_str(out, score, "method", where)
            c.required_str(out, score, "score", where)


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
