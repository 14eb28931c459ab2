"""A front for the loopback registry that behaves as other registries do: a bearer-token
challenge (Docker Hub, GHCR, Artifact Registry), failures to retry, altered bodies.

Requests it lets through are forwarded to the real `docker-registry` unchanged.
"""

from __future__ import annotations

import base64
import http.server
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Behaviour:
    user: str = "alice"
    password: str = "s3cret"
    token: str = "tok-123"
    require_token: bool = True
    failures: list[int] = field(default_factory=list)
    """Statuses to answer, one per request, before forwarding (e.g. [503, 429])."""
    alter_blobs: bool = False
    redirect_blobs: str = ""
    """A base URL blobs are redirected to (307), as registries send them to storage."""
    seen: list[str] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)


@contextmanager
def front(upstream: str, behaviour: Behaviour) -> Iterator[str]:
    """host:port of a server in front of `upstream` (host:port)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            return None

        def _reply(
            self, status: int, body: bytes = b"", headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _handle(self) -> None:
            behaviour.seen.append(f"{self.command} {self.path}")
            host = self.headers["Host"]
            if self.path.startswith("/token"):
                from urllib.parse import parse_qsl, urlsplit

                behaviour.token_requests.append(dict(parse_qsl(urlsplit(self.path).query)))
                expected = base64.b64encode(f"{behaviour.user}:{behaviour.password}".encode())
                if self.headers.get("Authorization") != f"Basic {expected.decode()}":
                    self._reply(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}')
                    return
                self._reply(200, json.dumps({"token": behaviour.token}).encode())
                return
            if behaviour.failures:
                status = behaviour.failures.pop(0)
                self._reply(status, b"{}", {"Retry-After": "0"} if status == 429 else {})
                return
            if behaviour.require_token and self.headers.get("Authorization") != (
                f"Bearer {behaviour.token}"
            ):
                import re

                match = re.match(r"^/v2/(.+?)/(manifests|blobs|referrers|tags)/", self.path)
                repository = match.group(1) if match else ""
                challenge = (
                    f'Bearer realm="http://{host}/token",service="test-registry",'
                    f'scope="repository:{repository}:pull"'
                )
                self._reply(401, b'{"errors":[]}', {"WWW-Authenticate": challenge})
                return
            if behaviour.redirect_blobs and "/blobs/sha256:" in self.path:
                self._reply(307, b"", {"Location": f"{behaviour.redirect_blobs}{self.path}"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(
                f"http://{upstream}{self.path}", data=body, method=self.command
            )
            for key in ("Accept", "Content-Type"):
                if self.headers.get(key):
                    request.add_header(key, self.headers[key])
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    status, data, headers = answer.status, answer.read(), answer.headers
            except urllib.error.HTTPError as error:
                status, data, headers = error.code, error.read(), error.headers
            if behaviour.alter_blobs and "/blobs/" in self.path and data:
                data = data[:-1] + bytes([data[-1] ^ 1])
            passed = {
                k: v
                for k, v in headers.items()
                if k.lower() in ("content-type", "docker-content-digest", "location")
            }
            self._reply(status, data, passed)

        do_GET = do_HEAD = do_PUT = do_POST = _handle

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
