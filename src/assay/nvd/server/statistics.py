"""`/rest/public/dashboard/statistics?reporttype=countsbystatus`: NVD's dashboard counts.

Not part of the API 2.0 documentation, but clients call it: cve-bin-tool asks for it
before it downloads, reads the `Total`, `Rejected` and `Received` entries, and stops
when the path is missing. The answer has NVD's form, `{"vulnsByStatusCounts": [{"name":
..., "count": ..., "description": ..., "startDate": null, "endDate": null}, ...]}`:
`Total` first, then each status NVD's dashboard lists (counted from the `vulnStatus` of
the stored records; 0 when none has it), then any other status the store holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import orjson
from starlette.requests import Request
from starlette.responses import Response

from assay.errors import QueryError, StoreError
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.params import RawQuery, printable
from assay.nvd.server.responses import COMMON_HEADERS, CORS_PREFLIGHT, nvd_error
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Store

PATH = "/rest/public/dashboard/statistics"
REPORT_TYPE = "countsbystatus"

# (name, description) in the order NVD's dashboard gives them, after `Total`.
STATUSES = (
    ("Received", "All CVEs waiting for acceptance."),
    ("Awaiting Analysis", "All CVEs in queue for analysis."),
    ("Undergoing Analysis", "All CVEs currently being analyzed."),
    ("Analyzed", "All CVEs that have been analyzed."),
    (
        "Modified",
        "All CVEs that have been modified by the submission source after analysis and have "
        "not yet been re-analyzed.",
    ),
    ("Deferred", "All CVEs whose analysis is deferred."),
    ("Rejected", "All CVEs that have been rejected by the submission source."),
)
TOTAL = ("Total", "All CVEs known by the service.")


def counts_by_status(by_status: dict[str, int]) -> list[dict[str, object]]:
    """The `vulnsByStatusCounts` list for the stored counts per `vulnStatus`. Pure."""
    entries = [(*TOTAL, sum(by_status.values()))]
    entries += [(name, text, by_status.get(name, 0)) for name, text in STATUSES]
    known = {name for name, _ in STATUSES}
    entries += [
        (name, f"All CVEs with status {name}.", count)
        for name, count in sorted(by_status.items())
        if name and name not in known  # (a record without a status counts in Total only)
    ]
    return [
        {"count": count, "description": text, "endDate": None, "name": name, "startDate": None}
        for name, text, count in entries
    ]


def statistics_endpoint(store: Store) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(b"", headers=CORS_PREFLIGHT)
        try:
            raw = RawQuery(request.query_params.multi_items(), ("reporttype",))
            report = raw.text("reporttype")
        except QueryError as error:
            return nvd_error(error.reason)
        if report is None or report.lower() != REPORT_TYPE:
            return nvd_error(
                f"Invalid reporttype: expected {REPORT_TYPE}, found '{printable(report or '')}'"
            )
        try:
            by_status = await in_store_thread(store, store.count_cves_by_status)
        except StoreError:
            return nvd_error("The store is unavailable", status=503)
        body = {
            "created": format_nvd_timestamp(datetime.now(UTC)),
            "vulnsByStatusCounts": counts_by_status(by_status),
        }
        return Response(orjson.dumps(body), media_type="application/json", headers=COMMON_HEADERS)

    return handle
