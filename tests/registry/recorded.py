"""Recorded real answers (npm, PyPI, GitHub) served on loopback, as the services serve
them: each path answers its recorded body; anything else is 404. Requests are kept."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Answer:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    answers: dict[str, Answer] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    url: str = ""


@contextmanager
def serve(recorded: Recorded) -> Iterator[Recorded]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            return None

        def do_GET(self) -> None:
            recorded.requests.append((self.path, dict(self.headers.items())))
            if recorded.failures:
                answer = Answer(b"{}", recorded.failures.pop(0))
            else:
                answer = recorded.answers.get(self.path, Answer(b'{"error":"Not found"}', 404))
            body = answer.body.replace(b"{BASE}", recorded.url.encode())
            self.send_response(answer.status)
            for key, value in answer.headers.items():
                self.send_header(key, value.replace("{BASE}", recorded.url))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorded.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorded
    finally:
        server.shutdown()
        server.server_close()
