"""NVD's wire shapes: the paged envelope, the error answer, and the legacy-field filter.

Records are stored NVD-encoded, so a page is assembled by joining bytes: no record is
parsed on the way out unless the legacy compatibility filter asks for it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.jsonenc import encode
from assay.nvd.storage import DamagedRecord

if TYPE_CHECKING:
    from assay.nvd.storage import Page, Store

_Query = TypeVar("_Query")

COMMON_HEADERS = {
    "apikey": "No",
    "access-control-allow-origin": "*",
    # A page script may read why a request failed, as NVD's answers carry it.
    "access-control-expose-headers": "message, apikey, x-assay-generation",
}
CORS_PREFLIGHT = {
    **COMMON_HEADERS,
    "access-control-allow-methods": "GET, HEAD, OPTIONS",
    "access-control-allow-headers": "apiKey, Content-Type, Accept",
    "allow": "GET, HEAD, OPTIONS",
}
MAX_MESSAGE_LENGTH = 300
# The store's data generation when a list answer was read (an assay extension): a mirror
# passes it back as `sinceGeneration` to get what was written since (docs/sync.md).
GENERATION_HEADER = "x-assay-generation"

# The fields nvd-api 0.9.1 (2023 schema, strict deserialization) knows; newer ones make it fail.
LEGACY_CVE_KEYS = frozenset(
    [
        "id",
        "sourceIdentifier",
        "published",
        "lastModified",
        "vulnStatus",
        "evaluatorComment",
        "evaluatorSolution",
        "evaluatorImpact",
        "cisaExploitAdd",
        "cisaActionDue",
        "cisaRequiredAction",
        "cisaVulnerabilityName",
        "descriptions",
        "references",
        "metrics",
        "weaknesses",
        "configurations",
        "vendorComments",
    ]
)
LEGACY_METRIC_KEYS = frozenset(("cvssMetricV31", "cvssMetricV30", "cvssMetricV2"))


# A large page goes out in pieces of about this size: joining a 40 MB page at once
# costs ~20 ms of page faults on fresh memory (and uvicorn would copy what the socket
# does not take at once into a buffer of the same size); pieces this big reuse memory.
CHUNK_BYTES = 1 << 20
_RELEASED = b""


class Envelope:
    """The NVD response body, keys in NVD's order, records emitted as stored (each under
    `wrapper`, or bare when it is None), made piece by piece (`pieces`, each about
    `chunk_bytes`) as the answer is sent. Its `length` is known before any piece is made;
    each record is let go once it is in a piece, so an answer holds the records still to
    send and one piece, and a client that reads slowly holds no more than that."""

    def __init__(
        self,
        *,
        format_name: str,
        list_key: str,
        wrapper: str | None,
        start_index: int,
        total: int,
        records: Sequence[bytes],
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        timestamp = now_timestamp()
        self._head = (
            f'{{"resultsPerPage":{len(records)},"startIndex":{start_index},'
            f'"totalResults":{total},"format":"{format_name}","version":"2.0",'
            f'"timestamp":"{timestamp}","{list_key}":['
        ).encode()
        self._opener = f'{{"{wrapper}":'.encode() if wrapper is not None else b""
        self._closer = b"}" if wrapper is not None else b""
        self._records = list(records)  # (our own list: its items are let go as they go out)
        self._chunk_bytes = chunk_bytes
        count = len(self._records)
        self.length = (
            len(self._head)
            + sum(map(len, self._records))
            + count * (len(self._opener) + len(self._closer))
            + max(0, count - 1)  # commas
            + 2  # "]}"
        )

    def pieces(self) -> Iterator[bytes]:
        """The body's consecutive pieces (once: the records are let go as they go)."""
        records, self._records = self._records, []
        opener, closer = self._opener, self._closer
        parts = [self._head]
        size = len(self._head)
        for index, record in enumerate(records):
            if index:
                parts.append(b",")
            parts.append(opener)
            parts.append(record)
            parts.append(closer)
            records[index] = _RELEASED
            size += len(record)
            del record
            if size >= self._chunk_bytes:
                piece = b"".join(parts)
                parts.clear()
                size = 0
                yield piece
        parts.append(b"]}")
        yield b"".join(parts)


def now_timestamp() -> str:
    """The envelope's `timestamp`: now, in NVD's form (to the millisecond, so the text is
    made once a millisecond however many answers ask; the date and time of day once a
    second, the milliseconds appended)."""
    millisecond = time.time_ns() // 1_000_000
    last = _last_timestamp[0]
    if last[0] == millisecond:
        return last[1]
    seconds, rest = divmod(millisecond, 1000)
    second = _last_second[0]
    if second[0] != seconds:  # ("YYYY-MM-DDTHH:MM:SS." of this second)
        second = (seconds, format_nvd_timestamp(datetime.fromtimestamp(seconds, UTC))[:-3])
        _last_second[0] = second
    text = f"{second[1]}{rest:03d}"
    _last_timestamp[0] = (millisecond, text)
    return text


# (one tuple each: threads see both parts or none)
_last_timestamp: list[tuple[int, str]] = [(-1, "")]
_last_second: list[tuple[int, str]] = [(-1, "")]
_CVE_HEAD = b'{"resultsPerPage":%d,"startIndex":0,"totalResults":%d,"format":"NVD_CVE","version":"2.0","timestamp":"'


def single_cve_body(record: bytes | None) -> bytes:
    """The body `Envelope` makes of a `cveId` look-up's page (`record`, or none)."""
    if record is None:
        return b"".join((_CVE_HEAD % (0, 0), now_timestamp().encode(), b'","vulnerabilities":[]}'))
    return b"".join(
        (
            _CVE_HEAD % (1, 1),
            now_timestamp().encode(),
            b'","vulnerabilities":[{"cve":',
            record,
            b"}]}",
        )
    )


class ChunkedJsonResponse(Response):
    """A JSON answer sent as consecutive pieces, its length known beforehand (so the
    client sees one ordinary `content-length` body; HEAD gets the length and no body).

    An `Envelope` is made piece by piece as the answer goes: uvicorn waits for a socket
    that takes no more (transport back-pressure) before it takes the next piece, so none
    is made ahead of the client. `release` is called once the answer is sent or dropped
    (it frees a `LargeAnswers` slot)."""

    media_type = "application/json"

    def __init__(
        self,
        body: Envelope | Sequence[bytes],
        *,
        head: bool,
        headers: dict[str, str] | None = None,
        release: Callable[[], None] | None = None,
    ) -> None:
        self.body_source: Envelope | Sequence[bytes] | None = None if head else body
        self.length = body.length if isinstance(body, Envelope) else sum(map(len, body))
        self.release = release
        super().__init__(
            headers={**COMMON_HEADERS, **(headers or {}), "content-length": str(self.length)}
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            source, self.body_source = self.body_source, None
            if source is None or self.length == 0:
                await send({"type": "http.response.body", "body": b""})
                return
            pieces = source.pieces() if isinstance(source, Envelope) else iter(source)
            del source
            sent = 0
            for piece in pieces:
                sent += len(piece)
                await send(
                    {"type": "http.response.body", "body": piece, "more_body": sent < self.length}
                )
                del piece
        finally:
            if self.release is not None:
                self.release()


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


# -- the nvd-api 0.9.1 view of products, match criteria and changes --------------------
# Its 2023 models reject unknown keys, values of the wrong type, a `refs[].type` outside
# its enum and a `refs[].ref` its URL pattern refuses (the pattern of NVD's CPE schema).
LEGACY_CPE_KEYS = frozenset(
    [
        "deprecated",
        "cpeName",
        "cpeNameId",
        "created",
        "lastModified",
        "titles",
        "refs",
        "deprecatedBy",
        "deprecates",
    ]
)
LEGACY_REF_TYPES = frozenset(["Advisory", "Change Log", "Product", "Project", "Vendor", "Version"])
_LEGACY_REF_URL = re.compile(
    r"^([A-Za-z][A-Za-z0-9+.-]+):(\/\/([^@]+@)?([A-Za-z0-9.\-_~]+)(:\d+)?)?((?:[A-Za-z0-9-._~]|%[A-Fa-f0-9]|[!$&\'\[\]()*+,;=:@])+(?:\/(?:[A-Za-z0-9-._~]|%[A-Fa-f0-9]|[!$&\'\[\]()*+,;=:@])*)*|(?:\/(?:[A-Za-z0-9-._~]|%[A-Fa-f0-9]|[!$&\'()*+,;=:@])+)*)?(\?(?:[A-Za-z0-9-._~]|%[A-Fa-f0-9]|[!$&\'\[\]()*+,;=:@]|[\/?])*)?(\#(?:[A-Za-z0-9-._~]|%[A-Fa-f0-9]|[!$&\'\[\]()*+,;=:@]|[\/?])*)?$"
)
LEGACY_MATCH_KEYS = frozenset(
    [
        "criteria",
        "matchCriteriaId",
        "created",
        "lastModified",
        "status",
        "versionStartExcluding",
        "versionStartIncluding",
        "versionEndExcluding",
        "versionEndIncluding",
        "cpeLastModified",
        "matches",
    ]
)
LEGACY_CHANGE_KEYS = frozenset(
    ["cveId", "eventName", "cveChangeId", "sourceIdentifier", "created", "details"]
)
LEGACY_DETAIL_KEYS = frozenset(["type", "action", "oldValue", "newValue"])


def _strings(item: Any, keys: frozenset[str]) -> dict[str, str]:
    """The string-valued entries of `item` among `keys`."""
    if not isinstance(item, dict):
        return {}
    return {key: value for key, value in item.items() if key in keys and isinstance(value, str)}


_NAME_KEYS = frozenset(("cpeName", "cpeNameId"))
_LEGACY_CPE_LISTS = {  # each list of a product record, as nvd-api 0.9.1 reads its items
    "titles": frozenset(("title", "lang")),
    "deprecatedBy": _NAME_KEYS,
    "deprecates": _NAME_KEYS,
}


def legacy_cpe(record: bytes) -> bytes:
    """A product record as nvd-api 0.9.1 parses it (unknown keys and bad refs dropped)."""
    trimmed = _trimmed(record, LEGACY_CPE_KEYS, _LEGACY_CPE_LISTS)
    if "refs" in trimmed:
        trimmed["refs"] = [kept for ref in trimmed["refs"] if (kept := _legacy_ref(ref))]
    return encode(trimmed)


def _legacy_ref(ref: Any) -> dict[str, str]:
    """A product's reference as nvd-api 0.9.1 reads it (empty: it would refuse the URL);
    a type it does not know is left out."""
    kept = _strings(ref, frozenset(("ref", "type")))
    if _LEGACY_REF_URL.match(kept.get("ref", "")) is None:
        return {}
    if kept.get("type", "Advisory") not in LEGACY_REF_TYPES:
        del kept["type"]
    return kept


def legacy_match_string(record: bytes) -> bytes:
    """A match-criteria record as nvd-api 0.9.1 parses it (unknown keys dropped)."""
    return encode(_trimmed(record, LEGACY_MATCH_KEYS, {"matches": _NAME_KEYS}))


def legacy_change(record: bytes) -> bytes:
    """A change record as nvd-api 0.9.1 parses it (unknown keys and non-string values dropped)."""
    return encode(_trimmed(record, LEGACY_CHANGE_KEYS, {"details": LEGACY_DETAIL_KEYS}))


def _trimmed(
    record: bytes, keys: frozenset[str], lists: Mapping[str, frozenset[str]]
) -> dict[str, Any]:
    """`record`'s members among `keys`, each list of `lists` with its items' string
    members among the keys given for it."""
    loaded: dict[str, Any] = orjson.loads(record)
    trimmed = {key: value for key, value in loaded.items() if key in keys}
    for key, item_keys in lists.items():
        if key in trimmed:
            trimmed[key] = [_strings(item, item_keys) for item in trimmed[key]]
    return trimmed


def store_failure(error: Exception) -> Response:
    """503: the store could not answer (unreachable, or a stored record that does not
    read back: `DamagedRecord`, or JSON a record filter cannot parse, a `ValueError`)."""
    if isinstance(error, StoreError) and not isinstance(error, DamagedRecord):
        return nvd_error("The store is unavailable", status=503)
    return nvd_error("A stored record is damaged; the store needs repair", status=503)


def read_with_generation(
    store: Store, search: Callable[[_Query], Page], query: _Query, at: int | None = None
) -> tuple[int, Page]:
    """The data generation and the page, read from one copy of the data: the page holds
    every write up to that generation. `at`: the generation a paging client's walk began
    at (`walks.py`), so that a store with replicas reads from a copy at least that new."""
    return store.read_at_generation(partial(search, query), at_least=at or 0)
