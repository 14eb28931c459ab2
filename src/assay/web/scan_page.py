"""`/scan`: SBOMs, lock files or purls posted from a form, scanned as `assay scan` would.

The inputs are read by `assay.audit.inputs.read_input` (the readers of `assay scan`) and
scanned with `assay.audit.scan.scan` against the served store; the page renders the typed
`ScanResult`, and `format=json` answers its `to_dict()`, the contract of `POST /api/scan`.
Nothing posted is kept. The audit half is imported on the first post.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import orjson
from starlette.requests import Request
from starlette.responses import Response

from assay.errors import AssayError, InputError
from assay.nvd.storage import Store
from assay.web.templating import render
from assay.web.upload_pool import (
    MAX_UPLOAD_COMPONENTS,
    Budget,
    BudgetedSource,
    UploadPool,
    check_component_count,
    upload_failure,
)
from assay.web.uploads import Form, human_bytes, posted_form

if TYPE_CHECKING:
    from assay.audit.model import (
        Component,
        ComponentResult,
        Inventory,
        ScanResult,
        Vulnerability,
    )

SCAN_FORM_BYTES: Final = 16 * 1024 * 1024
"""The whole posted form (the limit of `POST /api/scan`'s body)."""
MAX_FORM_PURLS: Final = 1000
TYPED_PURLS: Final = "purls typed in"


class EmptyStore(Exception):
    """The store holds no CVEs: a scan would answer nothing, which is not "safe"."""


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


def parse_min_confidence(text: str) -> float:
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise InputError("minimum confidence", f"expected a number from 0 to 1, found {text!r}")
    return value


def read_inventories(form: Form) -> list[Inventory]:
    """The inventories of the uploaded files and of the purls typed in."""
    from assay.audit.inputs import read_input
    from assay.audit.inputs.purls import component_from_purl
    from assay.audit.model import Inventory

    inventories: list[Inventory] = []
    for index, item in enumerate(form.files_of("input"), start=1):
        name = item.filename or f"upload {index}"
        if not item.data.strip():
            raise InputError(name, "expected an SBOM or lock file, found an empty file")
        inventories.append(read_input(item.data, name, max_components=MAX_UPLOAD_COMPONENTS))
    lines = [
        (number, line.strip())
        for number, line in enumerate(form.value("purls").splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if len(lines) > MAX_FORM_PURLS:
        raise InputError("purls", f"expected at most {MAX_FORM_PURLS} purls, found {len(lines)}")
    if lines:
        components: dict[str, Component] = {}
        for number, text in lines:
            components.setdefault(text, component_from_purl(text, f"purls line {number}"))
        inventories.append(Inventory(TYPED_PURLS, "purl", tuple(components.values())))
    if not inventories:
        raise InputError("input", "expected an SBOM or lock file to upload, or purls to type in")
    check_component_count(sum(len(i.components) for i in inventories), "input")
    return inventories


class ScanPages:
    def __init__(self, store: Store, uploads: UploadPool | None = None) -> None:
        self.store = store
        self.uploads = uploads or UploadPool.default()

    def _context(self, form: Form | None = None) -> dict[str, Any]:
        return {
            "limit": human_bytes(SCAN_FORM_BYTES),
            "max_purls": MAX_FORM_PURLS,
            "form": {} if form is None else form.first_values(),
        }

    async def form(self, request: Request) -> Response:
        return render(request, "scan.html", self._context())

    def _run(self, form: Form, budget: Budget) -> ScanResult:
        from assay.audit.scan import scan
        from assay.audit.store_source import StoreSource

        min_confidence = parse_min_confidence(form.value("min_confidence"))
        inventories = read_inventories(form)
        budget.check()
        if self.store.count_cves() == 0:
            raise EmptyStore
        source = BudgetedSource(StoreSource(self.store), budget)
        return scan(inventories, source, min_confidence=min_confidence)

    async def submit(self, request: Request) -> Response:
        form = await posted_form(request, SCAN_FORM_BYTES)
        if isinstance(form, Response):
            return form
        context = self._context(form)
        as_json = form.value("format") == "json"
        try:
            result = await self.uploads.run(request, partial(self._run, form))
        except (AssayError, EmptyStore) as error:
            headers: dict[str, str]
            if isinstance(error, EmptyStore):
                status, message, headers = 503, "the vulnerability store holds no CVEs", {}
            else:
                status, message, headers = upload_failure(error)
            if as_json:
                return Response(
                    orjson.dumps({"error": message}),
                    status_code=status,
                    media_type="application/json",
                    headers=headers,
                )
            context["error"] = message
            page = render(request, "scan.html", context, status=status)
            page.headers.update(headers)
            return page
        if as_json:
            return Response(orjson.dumps(result.to_dict()), media_type="application/json")
        rows = finding_rows(result)
        context.update(
            result=result,
            rows=rows,
            affected=[r for r in rows if not r.vulnerability.conditional],
            conditional=[r for r in rows if r.vulnerability.conditional],
        )
        return render(request, "scan.html", context)
