"""osv.dev's API v1, answered from the store's OSV records.

    POST /v1/query          {"package": {"ecosystem", "name"} | {"purl"}, "version"}
                            or {"commit": "..."}; optional "page_token"
                            -> {"vulns": [whole records]} ({} when none)
    POST /v1/querybatch     {"queries": [query, ...]} (at most 1,000)
                            -> {"results": [{"vulns": [{"id", "modified"}]} | {}]}
    GET  /v1/vulns/{id}     -> the record; 404 when the store has none by that id

A version is affected as the OSV schema's evaluation says (`assay.osv.evaluate`); a query
without a version lists every record naming the package; a commit finds the records
whose GIT ranges name it as introduced or last affected (docs/osv.md: osv.dev also walks
the repositories' history, which a store does not hold). Withdrawn records are never
listed, and are still served by id. Results are ordered by id and paged as osv.dev pages
them: at most `PAGE_SIZE` records per query, the rest behind a `next_page_token` that the
same query sends back as `page_token`.

Bad input is a 400 with osv.dev's error shape (`{"code": 3, "message": ...}`) naming the
field; a body over its limit is a 413; any other path or method below `/v1` a 404 of the
same shape. `/openapi.json` describes the three paths.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from assay.errors import InputError, StoreError
from assay.nvd.storage import Store
from assay.osv.evaluate import record_hit
from assay.osv.names import package_of_purl
from assay.osv.record import OsvRecord, matching_view

__all__ = ["MAX_BATCH_QUERIES", "OsvQuery", "bounded_body", "osv_routes", "parse_query"]

MAX_QUERY_BYTES: Final = 64 * 1024
MAX_BATCH_BYTES: Final = 16 * 1024 * 1024
MAX_BATCH_QUERIES: Final = 1000
PAGE_SIZE: Final = 1000
"""Records per query per answer (osv.dev's own page size)."""
MAX_FIELD: Final = 1024
VIEW_CACHE: Final = 50_000
_INVALID: Final = 3  # gRPC's INVALID_ARGUMENT, as osv.dev's errors give it
_NOT_FOUND: Final = 5
_UNAVAILABLE: Final = 14
_QUERY_FIELDS: Final = frozenset({"package", "version", "commit", "page_token"})
_PACKAGE_FIELDS: Final = frozenset({"name", "ecosystem", "purl"})


@dataclass(frozen=True, slots=True)
class OsvQuery:
    """One query: by package (with or without a version) or by commit."""

    ecosystem: str | None = None
    name: str | None = None
    version: str | None = None
    commit: str | None = None
    offset: int = 0
    """Where the page starts (from `page_token`)."""
    known_ecosystem: bool = True
    """False for a purl whose type names no OSV ecosystem: nothing can match it."""


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(where, f"expected a string, found {type(value).__name__}")
    if not value or len(value) > MAX_FIELD:
        raise InputError(where, f"expected 1 to {MAX_FIELD} characters")
    return value


def parse_query(value: object, where: str = "query") -> OsvQuery:
    """A query as osv.dev reads it; `InputError` naming the field when it is not one."""
    if not isinstance(value, dict):
        raise InputError(where, "expected a JSON object")
    _refuse_unknown(value, _QUERY_FIELDS, where)
    offset = _offset(value.get("page_token"), f"{where}.page_token")
    version = value.get("version")
    if version is not None:
        version = _text(version, f"{where}.version")
    commit = value.get("commit")
    package = value.get("package")
    if commit is not None:
        if package is not None or version is not None:
            raise InputError(where, "expected a commit, or a package and version, not both")
        return OsvQuery(commit=_text(commit, f"{where}.commit").lower(), offset=offset)
    if package is None:
        raise InputError(where, "expected a package (with a version) or a commit")
    return _package_query(package, version, offset, where)


def _refuse_unknown(value: dict[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(value) - known)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", "unknown field")


def _package_query(package: object, version: str | None, offset: int, where: str) -> OsvQuery:
    """A query by `package`: a purl, or a name and an ecosystem."""
    if not isinstance(package, dict):
        raise InputError(f"{where}.package", "expected a JSON object")
    _refuse_unknown(package, _PACKAGE_FIELDS, f"{where}.package")
    purl = package.get("purl")
    if purl is not None:
        return _purl_query(package, purl, version, offset, where)
    name = _text(package.get("name"), f"{where}.package.name")
    ecosystem = _text(package.get("ecosystem"), f"{where}.package.ecosystem")
    return OsvQuery(ecosystem, name, version, offset=offset)


def _purl_query(
    package: dict[str, Any], purl: object, version: str | None, offset: int, where: str
) -> OsvQuery:
    """A query by purl; the version is in the purl or beside it, not in both."""
    text = _text(purl, f"{where}.package.purl")
    if "name" in package or "ecosystem" in package:
        raise InputError(f"{where}.package", "expected a purl or a name and ecosystem, not both")
    try:
        named = package_of_purl(text)
    except InputError as error:
        raise InputError(f"{where}.package.purl", error.reason) from None
    if named is None:
        return OsvQuery(name=text, version=version, offset=offset, known_ecosystem=False)
    if named.version is not None and version is not None:
        raise InputError(
            f"{where}.version", "expected the version in the purl or here, not in both"
        )
    return OsvQuery(named.ecosystem, named.name, version or named.version, offset=offset)


def _offset(token: object, where: str) -> int:
    """The offset a `next_page_token` of `_token` names (0: none given)."""
    if token in (None, ""):
        return 0
    kind, _, number = _token_text(token).partition(":")
    if kind != "o" or not number.isdigit() or int(number) > 10**9:
        raise InputError(where, "expected a next_page_token this server gave")
    return int(number)


def _token_text(token: object) -> str:
    """A token's unpadded URL-safe base64, decoded ("": it is not, or is too long to be
    one `_token` makes)."""
    if not isinstance(token, str) or len(token) > 64:
        return ""
    try:
        return base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ""


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


class _Views:
    """Stored records read for matching, the most recently used kept."""

    def __init__(self, size: int = VIEW_CACHE) -> None:
        self._size = size
        self._items: OrderedDict[bytes, OsvRecord] = OrderedDict()

    def get(self, raw: bytes) -> OsvRecord:
        found = self._items.get(raw)
        if found is None:
            found = self._items[raw] = matching_view(raw)
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return found


class OsvAnswers:
    """The store's answers to queries (run in a worker thread: they read the store)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._views = _Views()

    def answer(self, queries: Sequence[OsvQuery]) -> list[list[tuple[OsvRecord, bytes]]]:
        """For each query, every matching record (its view and bytes), ordered by id."""
        packages = [
            (q.ecosystem, q.name) for q in queries if q.commit is None and q.known_ecosystem
        ]
        found = self.store.osv_for_packages(
            [(e, n) for e, n in dict.fromkeys(packages) if e is not None and n is not None]
        )
        return [self._matches(query, self._candidates(query, found)) for query in queries]

    def _candidates(
        self, query: OsvQuery, found: Mapping[tuple[str, str], Sequence[bytes]]
    ) -> Sequence[bytes]:
        """The stored records naming the query's commit or package."""
        if query.commit is not None:
            return self.store.osv_for_commit(query.commit)
        if query.known_ecosystem and query.ecosystem and query.name:
            return found.get((query.ecosystem, query.name), ())
        return ()

    def _matches(self, query: OsvQuery, raws: Sequence[bytes]) -> list[tuple[OsvRecord, bytes]]:
        """The candidates that affect the query's version (all, without one), by id."""
        matches: list[tuple[OsvRecord, bytes]] = []
        for raw in raws:
            view = self._views.get(raw)
            if (
                query.version is not None
                and query.ecosystem
                and query.name
                and record_hit(view, query.ecosystem, query.name, query.version) is None
            ):
                continue
            matches.append((view, raw))
        matches.sort(key=lambda match: match[0].id)
        return matches


def _error(status: int, code: int, message: str) -> Response:
    return Response(
        orjson.dumps({"code": code, "message": message}),
        status_code=status,
        media_type="application/json",
    )


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is (or says it is) larger than `limit`."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def _json(request: Request, limit: int) -> tuple[Any, Response | None]:
    body = await bounded_body(request, limit)
    if body is None:
        return None, _error(413, _INVALID, f"request body larger than {limit} bytes")
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError as error:
        return None, _error(400, _INVALID, f"request body: expected JSON: {error}")


def _page(
    matches: list[tuple[OsvRecord, bytes]], offset: int
) -> tuple[list[tuple[OsvRecord, bytes]], str | None]:
    window = matches[offset : offset + PAGE_SIZE]
    more = offset + PAGE_SIZE < len(matches)
    return window, (_token(offset + PAGE_SIZE) if more else None)


def osv_routes(store: Store) -> list[BaseRoute]:
    """The `/v1/...` routes over an open store (the app keeps it open)."""
    answers = OsvAnswers(store)

    async def query(request: Request) -> Response:
        value, failed = await _json(request, MAX_QUERY_BYTES)
        if failed is not None:
            return failed
        try:
            parsed = parse_query(value)
        except InputError as error:
            return _error(400, _INVALID, str(error))
        try:
            (matches,) = await run_in_threadpool(answers.answer, [parsed])
        except StoreError as error:
            return _error(503, _UNAVAILABLE, str(error))
        window, token = _page(matches, parsed.offset)
        if not window:
            return Response(b"{}", media_type="application/json")
        parts = [b'{"vulns":[', b",".join(raw for _, raw in window), b"]"]
        if token is not None:
            parts.append(b',"next_page_token":' + orjson.dumps(token))
        parts.append(b"}")
        return Response(b"".join(parts), media_type="application/json")

    async def querybatch(request: Request) -> Response:
        value, failed = await _json(request, MAX_BATCH_BYTES)
        if failed is not None:
            return failed
        try:
            if not isinstance(value, dict) or set(value) - {"queries"}:
                raise InputError("request body", 'expected {"queries": [...]}')
            items = value.get("queries")
            if not isinstance(items, list):
                raise InputError("queries", "expected an array of queries")
            if len(items) > MAX_BATCH_QUERIES:
                raise InputError(
                    "queries", f"Too many queries: expected at most {MAX_BATCH_QUERIES}"
                )
            parsed = [parse_query(item, f"queries[{i}]") for i, item in enumerate(items)]
        except InputError as error:
            return _error(400, _INVALID, str(error))
        try:
            found = await run_in_threadpool(answers.answer, parsed)
        except StoreError as error:
            return _error(503, _UNAVAILABLE, str(error))
        results: list[dict[str, Any]] = []
        for item, matches in zip(parsed, found, strict=True):
            window, token = _page(matches, item.offset)
            result: dict[str, Any] = {}
            if window:
                result["vulns"] = [{"id": view.id, "modified": view.modified} for view, _ in window]
            if token is not None:
                result["next_page_token"] = token
            results.append(result)
        return Response(orjson.dumps({"results": results}), media_type="application/json")

    async def vuln(request: Request) -> Response:
        osv_id = request.path_params["osv_id"]
        if not osv_id or len(osv_id) > MAX_FIELD:
            return _error(400, _INVALID, "id: expected 1 to 1024 characters")
        try:
            raw = await run_in_threadpool(store.osv_by_id, osv_id)
        except StoreError as error:
            return _error(503, _UNAVAILABLE, str(error))
        if raw is None:
            return _error(404, _NOT_FOUND, "Bug not found.")
        return Response(
            b"" if request.method == "HEAD" else raw,
            media_type="application/json",
            headers={"content-length": str(len(raw))},
        )

    async def unknown(request: Request) -> Response:
        return _error(404, _NOT_FOUND, f"no such path: {request.method} {request.url.path}"[:200])

    every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return [
        Route("/v1/query", query, methods=["POST"]),
        Route("/v1/querybatch", querybatch, methods=["POST"]),
        _whole_path(Route("/v1/vulns/{osv_id:path}", vuln, methods=["GET", "HEAD"])),
        # Any other path or method below /v1 answers in osv.dev's error shape too.
        Route("/v1", unknown, methods=every),
        _whole_path(Route("/v1/{rest:path}", unknown, methods=every)),
    ]


def _whole_path(route: Route) -> Route:
    """Starlette's `path` parameter is `.*`, which stops at a newline: a path holding a
    percent-encoded line feed would match no route and get a plain-text 404."""
    route.path_regex = re.compile(route.path_regex.pattern, re.DOTALL)
    return route
