"""NVD's wire shapes: the paged envelope, the error answer, and the legacy-field filter.

Records are stored NVD-encoded, so a page is assembled by joining bytes: no record is
parsed on the way out unless the legacy compatibility filter asks for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.responses import Response

from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.jsonenc import encode

COMMON_HEADERS = {
    "apikey": "No",
    "access-control-allow-origin": "*",
}
CORS_PREFLIGHT = {
    **COMMON_HEADERS,
    "access-control-allow-methods": "GET, HEAD, OPTIONS",
    "access-control-allow-headers": "apiKey, Content-Type, Accept",
    "allow": "GET, HEAD, OPTIONS",
}
MAX_MESSAGE_LENGTH = 300

# The fields nvd-api 0.9.1 (2023 schema, strict deserialization) knows; newer ones make it fail.
LEGACY_CVE_KEYS = frozenset(
    ["id", "sourceIdentifier", "published", "lastModified", "vulnStatus", "evaluatorComment", "evaluatorSolution", "evaluatorImpact", "cisaExploitAdd", "cisaActionDue", "cisaRequiredAction", "cisaVulnerabilityName", "descriptions", "references", "metrics", "weaknesses", "configurations", "vendorComments"]
)
LEGACY_METRIC_KEYS = frozenset(("cvssMetricV31", "cvssMetricV30", "cvssMetricV2"))


def envelope(
    *,
    format_name: str,
    list_key: str,
    wrapper: str,
    start_index: int,
    total: int,
    records: Sequence[bytes],
) -> bytes:
    """The NVD response body, keys in NVD's order, records emitted as stored."""
    timestamp = format_nvd_timestamp(datetime.now(UTC))
    head = (
        f'{{"resultsPerPage":{len(records)},"startIndex":{start_index},'
        f'"totalResults":{total},"format":"{format_name}","version":"2.0",'
        f'"timestamp":"{timestamp}","{list_key}":['
    ).encode()
    opener = f'{{"{wrapper}":'.encode()
    parts = [head]
    for index, record in enumerate(records):
        if index:
            parts.append(b",")
        parts.append(opener)
        parts.append(record)
        parts.append(b"}")
    parts.append(b"]}")
    return b"".join(parts)


def json_response(body: bytes, *, head: bool) -> Response:
    headers = dict(COMMON_HEADERS)
    if head:
        headers["content-length"] = str(len(body))
        return Response(b"", media_type="application/json", headers=headers)
    return Response(body, media_type="application/json", headers=headers)


def nvd_error(reason: str, status: int = 404) -> Response:
    """NVD's answer to a bad request: the status, an empty body, the reason in `message`."""
    return Response(
        b"", status_code=status, headers={**COMMON_HEADERS, "message": header_safe(reason)}
    )


def header_safe(text: str) -> str:
    """Printable ASCII only (header values are Latin-1 and must not break lines)."""
    safe = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    return safe[:MAX_MESSAGE_LENGTH]


def legacy_cve(record: bytes) -> bytes:
    """Drop the CVE fields NVD added after 2023 (`cveTags`, `cvssMetricV40`, ...)."""
    cve: dict[str, Any] = orjson.loads(record)
    trimmed = {key: value for key, value in cve.items() if key in LEGACY_CVE_KEYS}
    metrics = trimmed.get("metrics")
    if isinstance(metrics, dict):
        trimmed["metrics"] = {k: v for k, v in metrics.items() if k in LEGACY_METRIC_KEYS}
    return encode(trimmed)
