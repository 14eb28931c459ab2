"""The Jinja2 environment of the pages: templates shipped in the package, autoescaped."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import orjson
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from assay.results import in_words
from assay.web.cvss import explain_vector


def cve_href(cve_id: str) -> str:
    return f"/cve/{quote(cve_id)}"


def cpe_href(cpe_name: str) -> str:
    return f"/cpe/{quote(cpe_name, safe=':')}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("assay.web", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(cve_href=cve_href, cpe_href=cpe_href, explain_vector=explain_vector)
    env.filters["day"] = lambda text: (text or "")[:10]
    env.filters["severity_class"] = lambda text: f"sev-{(text or 'none').lower()}"
    env.filters["words"] = words
    env.tests["web_url"] = is_web_url
    return env


_WEB_URL = re.compile(r"https?://[^\x00-\x20\x7f]+", re.IGNORECASE)


def is_web_url(text: object) -> bool:
    """Whether a URL from a record may be a link: `http` or `https`, no spaces or control
    characters (a browser drops those, so `java\tscript:` is `javascript:`). Anything
    else (`javascript:`, `data:`, a relative path) is shown as text."""
    return isinstance(text, str) and _WEB_URL.fullmatch(text) is not None


def words(value: Any) -> str:
    """A check's expected or found value in words, as `assay verify` prints it (objects
    as compact JSON)."""
    return in_words(value, lambda found: orjson.dumps(found, default=str).decode())


def render(
    request: Request, name: str, context: dict[str, Any], *, status: int = 200
) -> HTMLResponse:
    """Render template `name` with `context`; the store's emptiness rides along."""
    template = environment().get_template(name)
    body = template.render(
        request=request,
        path=request.url.path,
        store_empty=getattr(request.app.state, "store_empty", lambda: False)(),
        **context,
    )
    return HTMLResponse(body, status_code=status)
