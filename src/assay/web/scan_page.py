"""`/scan`: SBOMs, lock files, purls and VEX documents posted from a form, scanned as
`assay scan` would.

The form's fields become one `ScanRequest` (`assay.audit.request`, the rules of `assay
scan` and `POST /api/scan`), carried out by `assay.audit.run.run_scan` against the served
store; the page renders the typed outcome, and `format=json` answers its `to_dict()`, the
contract of `POST /api/scan`. Nothing posted is kept. The audit half is imported on the
first post.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import orjson

from assay.errors import InputError
from assay.nvd.storage import Store
from assay.web.form_pages import UploadFormPages
from assay.web.scan_api import MAX_BODY_BYTES, MAX_QUERY_PURLS, run_upload_scan, scan_limits
from assay.web.upload_pool import Budget
from assay.web.uploads import Form

if TYPE_CHECKING:
    from assay.audit.model import ComponentResult, ScanResult, Vulnerability
    from assay.audit.request import NamedData, ScanFields
    from assay.audit.run import ScanOutcome

SCAN_FORM_BYTES: Final = MAX_BODY_BYTES
"""The whole posted form (the limit of `POST /api/scan`'s body)."""
MAX_FORM_PURLS: Final = MAX_QUERY_PURLS
TYPED_PURLS: Final = "purls typed in"
LABELS: Final = {
    "inputs": "SBOM or lock files",
    "purls": "Package URLs",
    "minConfidence": "Minimum identification confidence",
    "sources": "Sources",
    "failOn": "Fail on",
    "failOnConditional": "Count conditional findings",
    "vex": "VEX documents",
}
"""The request's fields (`assay.audit.request.FIELDS`) as the form labels them."""


@dataclass(frozen=True, slots=True)
class FindingRow:
    component: ComponentResult
    vulnerability: Vulnerability


def finding_rows(result: ScanResult) -> list[FindingRow]:
    """Every (component, CVE), definite findings first, then by severity and score."""
    rows = [FindingRow(c, v) for c, v in result.findings]
    rows.sort(
        key=lambda r: (
            r.vulnerability.conditional,
            -r.vulnerability.severity_rank,
            -(r.vulnerability.base_score or 0.0),
            r.component.component.name,
            r.vulnerability.id,
        )
    )
    return rows


def _lines(text: str) -> list[tuple[int, str]]:
    """The numbered lines of a text area that say something (not blank, not `#`)."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _files(form: Form, field: str) -> list[NamedData]:
    from assay.audit.request import NamedData

    return [
        NamedData(item.filename or f"upload {index}", item.data)
        for index, item in enumerate(form.files_of(field), start=1)
    ]


def form_fields(form: Form) -> ScanFields:
    """The scan request the form asks for: files uploaded, purls and rules typed in."""
    from assay.audit.request import ScanFields

    return ScanFields(
        inputs=_files(form, "input"),
        purls=[(text, f"purls line {number}") for number, text in _lines(form.value("purls"))],
        purl_source=TYPED_PURLS,
        min_confidence=form.value("min_confidence"),
        sources=form.value("sources") or None,
        fail_on=[text for _, text in _lines(form.value("fail_on"))],
        fail_on_conditional=form.value("fail_on_conditional") or "false",
        vex=_files(form, "vex"),
    )


def _outcome(store: Store, form: Form, budget: Budget) -> ScanOutcome:
    from assay.audit.request import RequestFieldError, parse_scan_request

    try:
        request = parse_scan_request(form_fields(form), scan_limits())
    except RequestFieldError as error:
        raise InputError(LABELS.get(error.field, error.field), error.reason) from None
    return run_upload_scan(store, request, budget)


class ScanPages(UploadFormPages["ScanOutcome"]):
    template = "scan.html"
    form_bytes = SCAN_FORM_BYTES

    def _page_context(self) -> dict[str, Any]:
        return {"max_purls": MAX_FORM_PURLS}

    def _work(self, form: Form) -> Callable[[Budget], ScanOutcome]:
        return partial(_outcome, self.store, form)

    def _shown(self, outcome: ScanOutcome) -> dict[str, Any]:
        return _outcome_context(outcome)

    def _json(self, outcome: ScanOutcome) -> bytes:
        return orjson.dumps(outcome.to_dict())


def _outcome_context(outcome: ScanOutcome) -> dict[str, Any]:
    """What the page shows of a scan: its findings (definite and conditional apart), the
    verdict and the findings that fail it."""
    rows = finding_rows(outcome.result)
    return {
        "result": outcome.result,
        "verdict": outcome.verdict,
        "warnings": outcome.warnings,
        "rows": rows,
        "affected": [r for r in rows if not r.vulnerability.conditional],
        "conditional": [r for r in rows if r.vulnerability.conditional],
        "failing": {
            (f.component.component.ref, f.vulnerability.id) for f in outcome.verdict.failing
        },
    }
