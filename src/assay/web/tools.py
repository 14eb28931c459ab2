"""The pages that are not NVD look-ups: the API description (`/docs`).

The example responses on `/docs` are real: each example request is run against this
store exactly as the API runs it, and its first lines are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from assay.errors import QueryError, StoreError
from assay.nvd.cve_query import parse_cve_query
from assay.nvd.server.listings import CPEMATCH, CPES, HISTORY, SOURCES
from assay.nvd.server.openapi import (
    CPE_ENDPOINT,
    CPEMATCH_ENDPOINT,
    CVE_ENDPOINT,
    HISTORY_ENDPOINT,
    SOURCE_ENDPOINT,
    EndpointDoc,
)
from assay.nvd.server.responses import Envelope
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import Page, Store
from assay.web.store_state import STORE_UNAVAILABLE, log_store_error
from assay.web.templating import render

EXAMPLE_LINES = 60


@dataclass(frozen=True, slots=True)
class Example:
    doc: EndpointDoc
    pairs: tuple[tuple[str, str], ...]
    run: Callable[[Store, tuple[tuple[str, str], ...]], Page]
    wrapper: str | None

    @property
    def url(self) -> str:
        return f"{self.doc.path}?{urlencode(self.pairs)}"


EXAMPLES = (
    Example(
        CVE_ENDPOINT,
        (("cveId", "CVE-2024-23113"),),
        lambda store, pairs: store.search_cves(parse_cve_query(pairs)),
        "cve",
    ),
    Example(
        HISTORY_ENDPOINT,
        (("cveId", "CVE-2019-1010218"), ("resultsPerPage", "1")),
        lambda store, pairs: HISTORY.search(store, HISTORY.parse(pairs)),
        HISTORY.wrapper,
    ),
    Example(
        CPE_ENDPOINT,
        (("cpeMatchString", "cpe:2.3:a:microsoft:access"), ("resultsPerPage", "1")),
        lambda store, pairs: CPES.search(store, CPES.parse(pairs)),
        CPES.wrapper,
    ),
    Example(
        CPEMATCH_ENDPOINT,
        (("matchCriteriaId", "A2572D17-1DE6-457B-99CC-64AFD54487EA"),),
        lambda store, pairs: CPEMATCH.search(store, CPEMATCH.parse(pairs)),
        CPEMATCH.wrapper,
    ),
    Example(
        SOURCE_ENDPOINT,
        (("resultsPerPage", "1"),),
        lambda store, pairs: SOURCES.search(store, SOURCES.parse(pairs)),
        SOURCES.wrapper,
    ),
)


def example_response(store: Store, example: Example) -> str:
    """The first lines of the example's answer from this store, indented."""
    page = example.run(store, example.pairs)
    body = b"".join(
        Envelope(
            format_name=example.doc.format_name,
            list_key=example.doc.list_key,
            wrapper=example.wrapper,
            start_index=0,
            total=page.total,
            records=page.records,
        ).pieces()
    )
    lines = orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2).decode().splitlines()
    if len(lines) > EXAMPLE_LINES:
        lines = [*lines[:EXAMPLE_LINES], f"  … ({len(lines) - EXAMPLE_LINES} more lines)"]
    return "\n".join(lines)


class ToolPages:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def docs(self, request: Request) -> Response:
        sections: list[dict[str, Any]] = []
        for example in EXAMPLES:
            try:
                response = await in_store_thread(self.store, example_response, self.store, example)
            except QueryError as error:
                response = f"(this store cannot answer the example: {error})"
            except StoreError as error:
                log_store_error(error)
                response = f"(this store cannot answer the example: {STORE_UNAVAILABLE})"
            sections.append({"doc": example.doc, "example": example, "response": response})
        return render(request, "docs.html", {"sections": sections})

    async def try_it(self, request: Request) -> Response:
        """The "try it" form: the non-empty fields, sent on to the API path as its query."""
        endpoints = {example.doc.operation_id: example.doc for example in EXAMPLES}
        doc = endpoints.get(request.query_params.get("endpoint", ""))
        if doc is None:
            return render(
                request,
                "error.html",
                {
                    "title": "Unknown endpoint",
                    "message": "endpoint: expected one of " + ", ".join(endpoints),
                },
                status=400,
            )
        kinds = {param.name: param.kind for param in doc.parameters}
        pairs: list[tuple[str, str]] = []
        for name, value in request.query_params.multi_items():
            if name not in kinds or not value.strip():
                continue
            pairs.append((name, "" if kinds[name] == "flag" else value.strip()))
        query = urlencode(pairs)
        return RedirectResponse(f"{doc.path}?{query}" if query else doc.path, status_code=303)
