"""The Host allow-list: `assay serve --allowed-host NAME` (repeatable).

A server on a loopback address is reachable from any web page the user opens, through
DNS rebinding: a name the attacker controls resolves to 127.0.0.1, and the browser
then treats the server's pages as that name's. Answering only requests whose `Host`
names the server closes that door. The default follows `--host`: on a loopback address
the loopback names (`localhost`, `127.0.0.1`, `::1`); on any other address every name
(the server is meant to be reached by names this process cannot know; give them with
`--allowed-host`). `*` allows any name, `*.example.org` any name under example.org.
"""

from __future__ import annotations

import ipaddress
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")
REFUSED: Final = b"Invalid Host header"


def default_allowed_hosts(listen: str) -> tuple[str, ...] | None:
    """The allow-list for a server listening on `listen` (None: any name)."""
    if listen.lower() == "localhost":
        return LOOPBACK_NAMES
    try:
        loopback = ipaddress.ip_address(listen.strip("[]")).is_loopback
    except ValueError:
        return None
    return LOOPBACK_NAMES if loopback else None


def host_name(header: str) -> str:
    """The name of a `Host` header, without its port (`[::1]:8000` is `::1`)."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def allowed(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether host `name` matches one of `patterns` (lower case, see the docstring)."""
    for pattern in patterns:
        if pattern in ("*", name):
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class AllowedHosts:
    """ASGI middleware: 400 to a request whose `Host` is not on the list."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = tuple(host.lower().strip("[]") for host in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = ""
        for name, value in scope["headers"]:
            if name == b"host":
                header = value.decode("latin-1")
                break
        if allowed(host_name(header), self.hosts):
            await self.app(scope, receive, send)
            return
        headers = [(b"content-type", b"text/plain; charset=utf-8"),
                   (b"content-length", b"%d" % len(REFUSED))]  # fmt: skip
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": REFUSED})
