"""A shortcut for the commonest request, one CVE by id: `GET /rest/json/cves/2.0?cveId=...`.

Mirrors, scanners and caches ask for single records far more often than for anything
else, and for them the framework's routing, request objects and worker-thread hop cost
more than the look-up itself. This ASGI middleware answers exactly that request shape
(GET, the CVE path, a single `cveId` parameter holding a well-formed id) and gives the
same bytes and headers as the full handler. Anything else (other parameters, HEAD,
the legacy paths, a store error) goes on to the application unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.cve_query import CveQuery
from assay.nvd.server.responses import (
    COMMON_HEADERS,
    GENERATION_HEADER,
    envelope_chunks,
    read_with_generation,
    store_failure,
)
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Store

PATHS = frozenset({"/rest/json/cves/2.0", "/rest/json/cves/2.0/"})
CVE_ID_QUERY = re.compile(rb"cveId=(CVE-\d{4}-\d{4,19})")
# The headers `ChunkedJsonResponse` sends, in its order (content-length goes in between).
HEAD_HEADERS = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in COMMON_HEADERS.items()]
CONTENT_TYPE = (b"content-type", b"application/json")


class CveIdShortcut:
    """ASGI middleware: answer `?cveId=` look-ups directly from the store.

    `inline` runs the look-up on the event loop, for stores whose single-row reads take
    microseconds (SQLite); otherwise it runs in the worker-thread pool like any query.
    """

    def __init__(self, app: ASGIApp, store: Store, inline: bool = False) -> None:
        self.app = app
        self.store = store
        self.inline = inline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in PATHS:
            await self.app(scope, receive, send)
            return
        match = CVE_ID_QUERY.fullmatch(scope["query_string"])
        if match is None:
            await self.app(scope, receive, send)
            return
        # What `parse_cve_query` makes of this query string, without its general checks.
        query = CveQuery(cve_id=match.group(1).decode("ascii"))
        try:
            if self.inline:
                generation, page = read_with_generation(self.store, self.store.search_cves, query)
            else:
                generation, page = await in_store_thread(
                    self.store, read_with_generation, self.store, self.store.search_cves, query
                )
        except (StoreError, ValueError) as error:
            # Answered here: the full handler would wait for the store a second time.
            await store_failure(error)(scope, receive, send)
            return
        body = b"".join(
            envelope_chunks(
                format_name="NVD_CVE",
                list_key="vulnerabilities",
                wrapper="cve",
                start_index=query.start_index,
                total=page.total,
                records=page.records,
            )
        )
        headers: list[Any] = [
            *HEAD_HEADERS,
            (GENERATION_HEADER.encode("latin-1"), b"%d" % generation),
            (b"content-length", b"%d" % len(body)),
            CONTENT_TYPE,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
