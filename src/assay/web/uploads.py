"""Form posts of the upload pages (`/verify`, `/scan`): bounded, parsed in memory, never stored.

`read_form(request, limit)` refuses a post from another site (its `Origin`, or
`Sec-Fetch-Site` when a browser sends no `Origin`), a body over `limit` bytes (413), a
content type that is not a form (415) and an unreadable form (400); otherwise it returns
the fields and the uploaded files' bytes. The body is read into memory up to `limit` and
parsed there: uploaded files never reach a temporary file on disk.
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from starlette.datastructures import UploadFile
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import Response

MAX_FIELDS: Final = 32
MAX_FILES: Final = 16
MAX_FILENAME_CHARS: Final = 128
DRAIN_LIMIT_FACTOR: Final = 4
"""An over-limit body is read (and dropped) up to this many times the limit before the
413 page is sent, so that a browser shows the page rather than a reset connection."""


class FormRefused(Exception):
    """A post that is not served: `status`, a `title` and a `message` for the error page."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(f"{title}: {message}")
        self.status = status
        self.title = title
        self.message = message


@dataclass(frozen=True, slots=True)
class UploadedFile:
    field: str
    filename: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Form:
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: tuple[UploadedFile, ...] = ()

    def value(self, name: str) -> str:
        """The first value of a text field, stripped ("" when absent)."""
        values = self.fields.get(name)
        return values[0].strip() if values else ""

    def first_values(self) -> dict[str, str]:
        """Each text field's first value, as posted (to fill the form in again)."""
        return {name: values[0] for name, values in self.fields.items() if values}

    def files_of(self, name: str) -> list[UploadedFile]:
        """The files chosen in a file field (browsers send an empty part when none was)."""
        return [f for f in self.files if f.field == name and (f.filename or f.data)]


def human_bytes(count: int) -> str:
    """`4 MiB`, `512 KiB`: how a page states a limit."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count:,} bytes"


def same_origin(request: Request) -> bool:
    """False for a form posted from another site: a cheap guard against cross-site posts."""
    origin = request.headers.get("origin")
    if origin is None:
        # Browsers that send no Origin on same-origin posts still send Sec-Fetch-Site.
        return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    if origin == "null":
        return False
    # Behind a reverse proxy the Host may be the proxy's upstream: the host the browser
    # used is then in X-Forwarded-Host (a cross-site form cannot set either header).
    hosts = {request.headers.get("host", "")}
    forwarded = request.headers.get("x-forwarded-host")
    if forwarded:
        hosts.add(forwarded.split(",", 1)[0].strip())
    wanted = urlsplit(origin).netloc.lower()
    return bool(wanted) and wanted in {host.lower() for host in hosts if host}


def clean_filename(text: str | None) -> str:
    """A file name fit for messages: its last path part, printable, at most 128 characters."""
    base = (text or "").replace("\\", "/").rsplit("/", 1)[-1]
    printable = "".join(
        ch for ch in base if unicodedata.category(ch)[0] not in ("C", "Z") or ch == " "
    )
    return printable.strip()[:MAX_FILENAME_CHARS]


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit():
        raise FormRefused(400, "Unreadable form", "Content-Length: expected a number of bytes")
    too_large = FormRefused(
        413,
        "Upload too large",
        f"This form takes at most {human_bytes(limit)} in all; nothing was kept.",
    )
    if int(declared) > limit * DRAIN_LIMIT_FACTOR:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            chunks.clear()
            if size > limit * DRAIN_LIMIT_FACTOR:
                break
            continue
        chunks.append(chunk)
    if size > limit:
        raise too_large
    return b"".join(chunks)


class _InMemoryMultiPartParser(MultiPartParser):
    """Starlette's parser, its spooled files kept in memory (the body is already bounded)."""

    spool_max_size = 1 << 62


async def read_form(request: Request, limit: int) -> Form:
    """The posted form, or `FormRefused` (see the module docstring)."""
    if not same_origin(request):
        raise FormRefused(
            403,
            "Form posted from another site",
            "This server only answers forms posted from its own pages (the Origin header "
            "names another site).",
        )
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in ("multipart/form-data", "application/x-www-form-urlencoded"):
        raise FormRefused(
            415,
            "Not a form",
            "Content-Type: expected multipart/form-data or application/x-www-form-urlencoded, "
            f"found {content_type or 'none'!r}",
        )
    body = await _body(request, limit)

    async def replay() -> AsyncGenerator[bytes, None]:
        yield body
        yield b""

    try:
        if content_type == "multipart/form-data":
            parsed = await _InMemoryMultiPartParser(
                request.headers,
                replay(),
                max_files=MAX_FILES,
                max_fields=MAX_FIELDS,
                max_part_size=limit,
            ).parse()
        else:
            parsed = await FormParser(request.headers, replay()).parse()
    except MultiPartException as error:
        raise FormRefused(400, "Unreadable form", error.message) from None
    fields: dict[str, list[str]] = {}
    files: list[UploadedFile] = []
    try:
        for name, value in parsed.multi_items():
            if isinstance(value, UploadFile):
                data = await value.read()
                files.append(UploadedFile(name, clean_filename(value.filename), data))
            else:
                fields.setdefault(name, []).append(value)
    finally:
        await parsed.close()
    if len(fields) > MAX_FIELDS:
        raise FormRefused(400, "Unreadable form", f"expected at most {MAX_FIELDS} fields")
    return Form(fields, tuple(files))


async def posted_form(request: Request, limit: int) -> Form | Response:
    """The posted form, or the error page that refuses it."""
    from assay.web.templating import render

    try:
        return await read_form(request, limit)
    except FormRefused as refused:
        return render(
            request,
            "error.html",
            {"title": refused.title, "message": refused.message},
            status=refused.status,
        )
