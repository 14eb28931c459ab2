"""`POST /api/scan`: the scan of `assay scan`, over HTTP, against the served store.

Two kinds of body, at most `MAX_BODY_BYTES`:

- a scan request, `Content-Type: application/vnd.assay.scan+json`: an object with any of
  `inputs` and `vex` (arrays of `{"name", "content"}`, the content as text or as the JSON
  document itself), `purls`, `minConfidence`, `sources`, `failOn`, `failOnConditional`,
  `ignore` (one such file) and `maxAge` (`assay.audit.request.fields_from_json`);
- one input file as `assay scan` reads it (CycloneDX, SPDX, an attestation, a lock file),
  with the same fields as query parameters: `?filename=` names the file, `?purl=`
  (repeatable) adds packages, with or instead of a body, `?failOn=` (repeatable),
  `?minConfidence=`, `?sources=`, `?failOnConditional=`, `?maxAge=`.

Both make one `ScanRequest` (`assay.audit.request`), carried out by
`assay.audit.run.run_scan` as the command line does, within `SCAN_LIMITS`. The answer is
the JSON contract of `assay scan --format json`: 200 with the result and its verdict; 400
with `{"error": "..."}` naming the field and what is wrong; 413 for a body over the
limit; 403 for a post a browser sent from another site; 422 when the scan needs more than
the upload time budget; 503 when the store holds no CVEs and no OSV records, or with
`Retry-After` when the server is busy with other uploads.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Final

import orjson
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from assay.errors import AssayError, InputError
from assay.nvd.server.osv_api import bounded_body
from assay.nvd.storage import Store
from assay.web.upload_pool import (
    MAX_UPLOAD_COMPONENTS,
    Budget,
    BudgetedSource,
    UploadPool,
    upload_failure,
)
from assay.web.uploads import same_origin

if TYPE_CHECKING:
    from assay.audit.request import ScanFields, ScanLimits, ScanRequest
    from assay.audit.run import ScanOutcome

__all__ = ["MAX_BODY_BYTES", "REQUEST_TYPE", "scan_limits", "scan_routes"]

MAX_BODY_BYTES: Final = 16 * 1024 * 1024
MAX_QUERY_PURLS: Final = 1000
MAX_FILES: Final = 16
"""Input files, and VEX documents, of one request (a form's cap: `assay.web.uploads`)."""
REQUEST_TYPE: Final = "application/vnd.assay.scan+json"
"""The media type of a JSON scan request (any other body is one input file)."""
QUERY_FIELDS: Final = (
    "filename",
    "purl",
    "failOn",
    "minConfidence",
    "sources",
    "failOnConditional",
    "maxAge",
)
"""The query parameters of a body that is one input file."""
_FILENAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
)


def scan_limits() -> ScanLimits:
    """What one upload may ask (`/scan` and `POST /api/scan` alike)."""
    from assay.audit.request import ScanLimits

    return ScanLimits(
        max_inputs=MAX_FILES,
        max_purls=MAX_QUERY_PURLS,
        max_vex=MAX_FILES,
        max_components=MAX_UPLOAD_COMPONENTS,
    )


def _json(status: int, value: object, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(value), status_code=status, media_type="application/json", headers=headers
    )


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return _json(status, {"error": message}, headers)


def plain_filename(text: str, where: str) -> str:
    """A file name as given over HTTP: its base name, of letters, digits and `._-`."""
    base = os.path.basename(text)[:128]
    if not base or any(ch not in _FILENAME_CHARS for ch in base):
        raise InputError(where, "expected a plain file name (letters, digits, . _ -)")
    return base


def _query_fields(params: QueryParams, body: bytes) -> ScanFields:
    """A body that is one input file, the other fields in the query."""
    from assay.audit.request import NamedData, ScanFields

    unknown = sorted(set(params) - set(QUERY_FIELDS))
    if unknown:
        raise InputError(unknown[0], f"unknown parameter; expected {', '.join(QUERY_FIELDS)}")
    filename = params.get("filename")
    name = plain_filename(filename, "filename") if filename else "input"
    return ScanFields(
        inputs=[NamedData(name, body)] if body.strip() else [],
        purls=[(text, f"purl {text}") for text in params.getlist("purl")],
        min_confidence=params.get("minConfidence"),
        sources=params.get("sources"),
        fail_on=params.getlist("failOn"),
        fail_on_conditional=params.get("failOnConditional", "false"),
        max_age=params.get("maxAge"),
    )


def scan_fields(request: Request, body: bytes) -> ScanFields:
    """The fields of a posted scan request (see the module docstring)."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != REQUEST_TYPE:
        return _query_fields(request.query_params, body)
    from assay.audit.request import fields_from_json

    if request.query_params:
        raise InputError(next(iter(request.query_params)), "expected no query with a JSON request")
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise InputError("request body", f"expected a JSON scan request: {error}") from None
    return fields_from_json(document, plain_filename)


def run_upload_scan(store: Store, request: ScanRequest, budget: Budget) -> ScanOutcome:
    """A scan request carried out in an upload thread, within its budget."""
    from assay.audit.run import run_scan
    from assay.audit.store_source import StoreSource

    source = BudgetedSource(StoreSource(store), budget)
    return run_scan(request, source, checkpoint=budget.check)


def scan_routes(store: Store, uploads: UploadPool | None = None) -> list[BaseRoute]:
    """The `POST /api/scan` route over an open store (the app keeps it open). The body is
    read on the event loop; decoding it and the scan run in the upload pool (`uploads`)
    with its budget and component cap (`assay.web.upload_pool`)."""
    pool = uploads or UploadPool.default()

    async def endpoint(request: Request) -> Response:
        if not same_origin(request):
            return _error(
                403,
                "posted from another site (Origin or Sec-Fetch-Site): this API answers "
                "programs and this server's own pages",
            )
        body = await bounded_body(request, MAX_BODY_BYTES)
        if body is None:
            return _error(413, f"request body: expected at most {MAX_BODY_BYTES} bytes")
        try:
            from assay.audit.request import parse_scan_request

            scan_request = parse_scan_request(scan_fields(request, body), scan_limits())
            outcome = await pool.run(request, partial(run_upload_scan, store, scan_request))
        except AssayError as error:
            status, message, headers = upload_failure(error)
            return _error(status, message, headers)
        return _json(200, outcome.to_dict())

    return [Route("/api/scan", endpoint, methods=["POST"])]
