"""Run the real app on a loopback port in a background thread, for clients that speak HTTP."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from assay.nvd.server.app import ServerSettings, create_app
from assay.nvd.storage import open_store


@contextmanager
def serving(store_url: str, settings: ServerSettings | None = None) -> Iterator[str]:
    """Serve `store_url` on 127.0.0.1 and yield the base URL (`http://127.0.0.1:PORT`)."""
    store = open_store(store_url)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(store, settings),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start within 10 s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()


NVD_HOST = "https://services.nvd.nist.gov"


def redirect_nvdlib(monkeypatch: Any, base_url: str) -> Any:
    """nvdlib with its hard-coded NVD host redirected to `base_url` and no pacing; the
    URLs it sent are collected in `nvdlib.sent`."""
    import nvdlib
    import nvdlib.get
    import requests

    real_get = requests.get
    sent: list[str] = []

    def redirected(url: str, *args: Any, **kwargs: Any) -> Any:
        answer = real_get(url.replace(NVD_HOST, base_url), *args, **kwargs)
        sent.append(answer.url)
        return answer

    monkeypatch.setattr(nvdlib.get.requests, "get", redirected)
    monkeypatch.setattr(nvdlib.get.time, "sleep", lambda _seconds: None)
    nvdlib.sent = sent
    return nvdlib
