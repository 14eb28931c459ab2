"""`POST /api/scan`: the scan of `assay scan`, over HTTP, against the served store.

The request body is one input file, as `assay scan` reads it (CycloneDX, SPDX, an
attestation, a lock file), at most `MAX_BODY_BYTES`; `?filename=` names it (it decides
between lock-file kinds and appears in the answer), `?minConfidence=` is
`--min-confidence`, and `?purl=` (repeatable, up to 1000) adds packages, with or instead
of a body. The answer is the JSON contract of `assay scan --format json` without the
verdict: 200 with `ScanResult.to_dict()`; 400 with `{"error": "..."}` naming what is
wrong for unusable input (more than `MAX_UPLOAD_COMPONENTS` components included); 413 for
a body over the limit; 403 for a post a browser sent from another site; 422 when the scan needs more than the upload time budget; 503 when
the store holds no CVEs and no OSV records, or with `Retry-After` when the server is busy with other uploads.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Final

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from assay.audit.inputs import read_input
from assay.audit.inputs.purls import purl_inventory
from assay.audit.model import Inventory, ScanResult
from assay.audit.scan import scan
from assay.audit.store_source import StoreSource
from assay.errors import AssayError, InputError
from assay.nvd.storage import Store
from assay.web.upload_pool import (
    MAX_UPLOAD_COMPONENTS,
    Budget,
    BudgetedSource,
    UploadPool,
    UploadsBusy,
    UploadStopped,
    check_component_count,
)
from assay.web.uploads import same_origin

__all__ = ["MAX_BODY_BYTES", "scan_routes"]

MAX_BODY_BYTES: Final = 16 * 1024 * 1024
MAX_QUERY_PURLS: Final = 1000
_FILENAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
)


def _json(status: int, value: object) -> Response:
    return Response(orjson.dumps(value), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json(status, {"error": message})


async def _body(request: Request) -> bytes | None:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _filename(text: str | None) -> str:
    if not text:
        return "input"
    base = os.path.basename(text)[:128]
    if not base or any(ch not in _FILENAME_CHARS for ch in base):
        raise InputError("filename", "expected a plain file name (letters, digits, . _ -)")
    return base


def scan_routes(store: Store, uploads: UploadPool | None = None) -> list[BaseRoute]:
    """The `POST /api/scan` route over an open store (the app keeps it open). The body is
    read on the event loop; decoding it and the scan run in the upload pool (`uploads`)
    with its budget and component cap (`assay.web.upload_pool`)."""
    source = StoreSource(store)
    pool = uploads or UploadPool.default()

    def run(
        body: bytes, filename: str, purls: list[str], min_confidence: float, budget: Budget
    ) -> ScanResult | None:
        inventories: list[Inventory] = []
        if body.strip():
            inventories.append(read_input(body, filename, max_components=MAX_UPLOAD_COMPONENTS))
        if purls:
            inventories.append(purl_inventory(purls))
        if not inventories:
            raise InputError("request body", "expected an input file, or purl parameters")
        check_component_count(sum(len(i.components) for i in inventories), "request body")
        budget.check()
        if store.count_cves() == 0 and store.count_osv() == 0:
            return None
        return scan(inventories, BudgetedSource(source, budget), min_confidence=min_confidence)

    async def endpoint(request: Request) -> Response:
        if not same_origin(request):
            return _error(
                403,
                "posted from another site (Origin or Sec-Fetch-Site): this API answers "
                "programs and this server's own pages",
            )
        body = await _body(request)
        if body is None:
            return _error(413, f"request body: expected at most {MAX_BODY_BYTES} bytes")
        try:
            params = request.query_params
            unknown = sorted(set(params) - {"filename", "minConfidence", "purl"})
            if unknown:
                raise InputError(
                    unknown[0], "unknown parameter; expected filename, minConfidence, purl"
                )
            confidence_text = params.get("minConfidence", "0")
            try:
                min_confidence = float(confidence_text)
            except ValueError:
                raise InputError(
                    "minConfidence", f"expected a number 0-1, found {confidence_text!r}"
                ) from None
            if not 0.0 <= min_confidence <= 1.0:
                raise InputError(
                    "minConfidence", f"expected a number 0-1, found {confidence_text!r}"
                )
            purls = params.getlist("purl")
            if len(purls) > MAX_QUERY_PURLS:
                raise InputError("purl", f"expected at most {MAX_QUERY_PURLS} purls")
            filename = _filename(params.get("filename"))
            result = await pool.run(request, partial(run, body, filename, purls, min_confidence))
        except InputError as error:
            return _error(400, str(error))
        except UploadsBusy as busy:
            answer = _error(503, str(busy))
            answer.headers["retry-after"] = str(busy.retry_after)
            return answer
        except UploadStopped as stopped:
            return _error(422 if stopped.over_budget else 499, str(stopped))
        except AssayError as error:
            return _error(503, error.diagnostics())
        if result is None:
            return _error(503, "the vulnerability store holds no CVEs and no OSV records")
        return _json(200, result.to_dict())

    return [Route("/api/scan", endpoint, methods=["POST"])]
