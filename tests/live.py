"""Run the real app on a loopback port in a background thread, for clients that speak HTTP."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

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
