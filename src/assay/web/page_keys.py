"""`assay serve --api-keys required` for everything the server answers, not only the NVD
API: the pages, `POST /api/scan` and the osv.dev API ask for a valid key too.

A program sends the key in the `apiKey` header, as to the NVD API. A browser holds it in
a cookie it is given by `/login` (a form that takes the key): `HttpOnly`,
`SameSite=Strict`, `Secure` over HTTPS, checked against the store like the header (by
digest, in constant time, the verdict kept a few seconds). Without a valid key a page
answers 401 with the login form, an API 401 with a JSON reason. Health checks and the
static files and NVD's public dashboard counts stay open; the NVD API keeps its own check (`assay.nvd.server.access`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.errors import StoreError
from assay.nvd.server.access import API_PREFIXES, ApiKeys
from assay.nvd.server.statistics import PATH as STATISTICS_PATH
from assay.nvd.storage import ServiceStore

COOKIE: Final = "assay_api_key"
OPEN_PATHS: Final = ("/healthz", "/readyz", "/login", STATISTICS_PATH)
"""Open whatever the mode: health checks, the sign-in form, and NVD's public dashboard
counts (served by NVD's website without keys; cve-bin-tool reads them first)."""
OPEN_PREFIXES: Final = ("/static/", *API_PREFIXES)
JSON_PREFIXES: Final = ("/api/", "/v1/")
COOKIE_SECONDS: Final = 12 * 3600
MAX_KEY_LENGTH: Final = 256


class PageKeys:
    """ASGI middleware: with keys required, every non-API path needs a valid key."""

    def __init__(self, app: ASGIApp, *, store: ServiceStore) -> None:
        self.app = app
        self.keys = ApiKeys(app, store=store, mode="required")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _open(scope["path"]):
            await self.app(scope, receive, send)
            return
        presented = _presented(scope)
        try:
            name = None if presented is None else await self.keys.name_of(presented)
        except StoreError:
            await _refusal(scope, 503, "the store is unavailable")(scope, receive, send)
            return
        if name is None:
            reason = "a valid API key is needed" if presented is None else "Invalid apiKey."
            await _refusal(scope, 401, reason)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)


def _presented(scope: Scope) -> str | None:
    cookie_header: str | None = None
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for name, value in headers:
        if name == b"apikey":
            return value.decode("latin-1")[:MAX_KEY_LENGTH]
        if name == b"cookie":
            cookie_header = value.decode("latin-1")
    if cookie_header is None:
        return None
    cookies = SimpleCookie()
    try:
        cookies.load(cookie_header)
    except Exception:  # a malformed Cookie header holds no key of ours
        return None
    morsel = cookies.get(COOKIE)
    return None if morsel is None or not morsel.value else str(morsel.value)[:MAX_KEY_LENGTH]


def _refusal(scope: Scope, status: int, reason: str) -> Response:
    path: str = scope["path"]
    if path.startswith(JSON_PREFIXES):
        return JSONResponse({"error": reason}, status_code=status)
    from assay.web.templating import render

    request = Request(scope)
    return render(
        request,
        "login.html",
        {"title": "A key is needed", "message": reason, "next": path},
        status=status,
    )


async def login_form(request: Request) -> Response:
    from assay.web.templating import render

    return render(
        request,
        "login.html",
        {"title": "Sign in with an API key", "message": "", "next": _next(request)},
    )


def login_endpoint(keys: ApiKeys) -> Callable[[Request], Awaitable[Response]]:
    """`POST /login`: a valid key becomes the browser's cookie, then back to `next`."""
    from assay.web.templating import render
    from assay.web.uploads import posted_form

    async def login(request: Request) -> Response:
        form = await posted_form(request, 16 * 1024)
        if isinstance(form, Response):
            return form
        key = form.value("key").strip()[:MAX_KEY_LENGTH]
        target = _safe_next(form.value("next"))
        try:
            name = await keys.name_of(key) if key else None
        except StoreError:
            name = None
        if name is None:
            return render(
                request,
                "login.html",
                {"title": "Sign in with an API key", "message": "Invalid apiKey.", "next": target},
                status=401,
            )
        answer = RedirectResponse(target, status_code=303)
        answer.set_cookie(
            COOKIE,
            key,
            max_age=COOKIE_SECONDS,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return answer

    return login


def _next(request: Request) -> str:
    return _safe_next(request.query_params.get("next", "/"))


def _safe_next(text: str) -> str:
    # Only a path of this server: never another site (an open redirect).
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return "/"
    return quote(text, safe="/?=&%:@-._~")
