"""The smaller guards of `assay serve`: secrets in query strings kept out of the access log,
the Host allow-list, cross-site posts to `POST /api/scan`, and a rate limit whose Redis is
down says so."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from tests.service.servers import serving

from assay.nvd.server.service import ServiceSettings
from assay.nvd.storage import open_store
from assay.web.accesslog import LOGGER_NAME
from assay.web.app import WebSettings, create_web_app

SECRET = "k3y-0f-a-user"


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('guards') / 'store.db'}"
    open_store(url).close()
    return url


@pytest.fixture
def logged(store_url: str) -> Iterator[tuple[TestClient, list[str]]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    store = open_store(store_url)
    keep = Keep()
    try:
        with TestClient(create_web_app(store, WebSettings(access_log="common"))) as client:
            logging.getLogger(LOGGER_NAME).addHandler(keep)
            yield client, lines
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(keep)
        store.close()


def test_a_key_in_the_query_string_is_not_logged(logged: tuple[TestClient, list[str]]) -> None:
    client, lines = logged
    client.get(f"/rest/json/cves/2.0?apiKey={SECRET}&resultsPerPage=1")
    client.get(f"/?q=x&api_key={SECRET}&token={SECRET}")
    assert len(lines) == 2
    assert all(SECRET not in line for line in lines)
    assert "apiKey=***&resultsPerPage=1" in lines[0]


def test_a_cross_site_post_to_the_scan_api_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store)) as client:
            for headers in ({"origin": "https://evil.example"}, {"origin": "null"},
                            {"sec-fetch-site": "cross-site"}):  # fmt: skip
                answer = client.post("/api/scan?purl=pkg:pypi/django@4.2.0", headers=headers)
                assert answer.status_code == 403, headers
                assert "another site" in answer.json()["error"]
            # Programs (no Origin) and the server's own pages still may.
            same = client.post(
                "/api/scan?purl=pkg:pypi/django@4.2.0", headers={"origin": "http://testserver"}
            )
            assert same.status_code != 403
            assert client.post("/api/scan?purl=pkg:pypi/django@4.2.0").status_code != 403
    finally:
        store.close()


@pytest.mark.slow
def test_only_allowed_hosts_are_served(store_url: str, tmp_path: Path) -> None:
    with serving(store_url, folder=tmp_path) as server:  # on 127.0.0.1: loopback names only
        assert httpx.get(server.base + "/healthz").status_code == 200
        assert httpx.get(server.base + "/", headers={"host": f"localhost:{server.port}"}).is_success
        rebound = httpx.get(server.base + "/", headers={"host": "attacker.example"})
        assert rebound.status_code == 400
    with serving(store_url, "--allowed-host", "nvd.example.org", folder=tmp_path) as server:
        assert httpx.get(server.base + "/", headers={"host": "nvd.example.org"}).is_success
        assert httpx.get(server.base + "/").status_code == 400
    with serving(store_url, "--allowed-host", "*", folder=tmp_path) as server:
        assert httpx.get(server.base + "/", headers={"host": "anything.example"}).is_success


def test_a_rate_limit_whose_redis_is_down_names_redis(store_url: str) -> None:
    pytest.importorskip("redis")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    service = ServiceSettings(rate_limit="5/30", rate_limit_store=f"redis://127.0.0.1:{port}/0")
    store = open_store(store_url)
    try:
        with TestClient(create_web_app(store, service=service)) as client:
            answer = client.get("/rest/json/cves/2.0?resultsPerPage=1")
            assert answer.status_code == 503
            assert "Redis" in answer.headers["message"]
            assert "store" not in answer.headers["message"]
    finally:
        store.close()
