"""Uploads (`POST /api/scan`, `/scan`) against a real `assay serve`: their own bounded pool,
503 with Retry-After when it is full, a time budget, a component cap for every input
kind, cancellation when the client leaves, and parsing off the event loop."""

from __future__ import annotations

import concurrent.futures
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.conftest import make_store_url
from tests.service.servers import Served, serving

from assay.nvd.storage import open_store

pytestmark = pytest.mark.slow

SCAN = "/api/scan?filename=requirements.txt"
KEYWORD = "/rest/json/cves/2.0?keywordSearch=overflow&resultsPerPage=5"


def requirements(count: int) -> bytes:
    """`count` pinned packages no store knows (each costs the scan a few look-ups)."""
    return "\n".join(f"unknown-package-{i}==1.{i}.0" for i in range(count)).encode()


def cyclonedx_xml(count: int) -> bytes:
    components = "".join(
        f'<component type="library" bom-ref="c{i}"><name>pkg{i}</name>'
        f"<version>1.{i}.0</version><purl>pkg:pypi/pkg{i}@1.{i}.0</purl></component>"
        for i in range(count)
    )
    return (
        '<?xml version="1.0"?><bom xmlns="http://cyclonedx.org/schema/bom/1.5" version="1">'
        f"<components>{components}</components></bom>"
    ).encode()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer

    folder = tmp_path_factory.mktemp("uploads")
    for url in make_store_url("sqlite", folder):
        store = open_store(url)
        assert Importer(store).import_files(list(bundled_files())).ok
        store.close()
        yield url


@pytest.fixture(scope="module")
def served(store_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("uploads-served")
    with serving(
        store_url, "--threads", "2", "--upload-threads", "1", "--upload-timeout", "4",
        folder=folder,
    ) as server:  # fmt: skip
        yield server


def test_busy_uploads_leave_store_queries_alone_and_past_the_queue_get_503(
    served: Served,
) -> None:
    body = requirements(3000)
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        posts = [
            pool.submit(httpx.post, served.base + SCAN, content=body, timeout=60) for _ in range(6)
        ]
        time.sleep(0.8)
        for _ in range(3):
            started = time.monotonic()
            assert httpx.get(served.base + KEYWORD, timeout=30).status_code == 200
            # (0.03 s on a quiet machine; 89 s when uploads shared the store's threads)
            assert time.monotonic() - started < 3
        answers = [post.result() for post in posts]
    refused = [a for a in answers if a.status_code == 503]
    assert refused, [a.status_code for a in answers]
    for answer in refused:
        assert int(answer.headers["retry-after"]) >= 1
        assert "busy" in answer.json()["error"]
    # The admitted ones ran out of their 4 s budget, and said so.
    over = [a for a in answers if a.status_code == 422]
    assert over, [a.status_code for a in answers]
    assert "4 s" in over[0].json()["error"]


def test_every_input_kind_has_a_component_cap(served: Served) -> None:
    started = time.monotonic()
    answer = httpx.post(served.base + SCAN, content=requirements(20_000), timeout=60)
    assert answer.status_code == 400
    assert "10000 components" in answer.json()["error"]
    assert time.monotonic() - started < 5
    started = time.monotonic()
    answer = httpx.post(
        served.base + "/api/scan?filename=bom.xml", content=cyclonedx_xml(12_000), timeout=60
    )
    assert answer.status_code == 400
    assert "10000 components" in answer.json()["error"]
    assert time.monotonic() - started < 5  # counted before the BOM is decoded (~1 ms each)


def test_a_scan_stops_when_its_client_leaves(served: Served) -> None:
    body = requirements(3000)
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(
            b"POST " + SCAN.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body
        )
        time.sleep(0.8)  # the scan has started (the pool's one thread)
    started = time.monotonic()
    answer = httpx.post(
        served.base + "/api/scan?purl=pkg:pypi/django@4.2.0", timeout=30
    )  # waits for the one upload thread
    assert answer.status_code == 200, answer.text
    assert time.monotonic() - started < 2.5


def test_healthz_answers_while_a_large_bom_is_parsed(served: Served) -> None:
    body = cyclonedx_xml(6000)  # ~5 s to decode with cyclonedx-python-lib
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        post = pool.submit(
            httpx.post, served.base + "/api/scan?filename=bom.xml", content=body, timeout=60
        )
        time.sleep(0.5)
        waits = []
        while not post.done():
            started = time.monotonic()
            assert httpx.get(served.base + "/healthz", timeout=30).status_code == 200
            waits.append(time.monotonic() - started)
            time.sleep(0.1)
        assert post.result().status_code in (200, 422)
    # On the event loop the decoding held every request for its whole ~5 s; in a thread
    # it only shares the interpreter (answers in ms, at worst a second on a busy machine).
    assert len(waits) > 10
    assert max(waits) < 2.0
    assert sorted(waits)[len(waits) // 2] < 0.2


def test_the_scan_form_shares_the_upload_pool(served: Served, tmp_path: Path) -> None:
    answer = httpx.post(
        served.base + "/scan",
        files={"input": ("requirements.txt", requirements(20_000))},
        data={"format": "json"},
        timeout=60,
    )
    assert answer.status_code == 400
    assert "10000 components" in answer.json()["error"]


def test_a_deeply_nested_lock_file_is_a_400_not_a_500(served: Served) -> None:
    for name, body in (
        ("poetry.lock", b"[[package]]\nname = 'a'\nversion = '1'\nx = " + b"[" * 50_000),
        ("uv.lock", b"version = 1\n[[package]]\nname = 'a'\nx = " + b"{a = " * 20_000),
    ):
        answer = httpx.post(f"{served.base}/api/scan?filename={name}", content=body, timeout=60)
        assert answer.status_code == 400, (name, answer.text[:200])
        assert "nesting" in answer.json()["error"]  # the lock-file reader names the depth
        form = httpx.post(
            served.base + "/scan", files={"input": (name, body)}, data={"format": "json"}
        )
        assert form.status_code == 400, (name, form.text[:200])


def test_verify_posts_share_the_upload_pool_and_its_busy_answer(served: Served) -> None:
    # /verify used the general thread pool: verifications piled up behind nothing and
    # ran on after their client left. Now it waits for, and is refused by, the upload pool.
    from tests.conftest import ASSETS

    provenance = ASSETS / "verify/slsa-verifier/cli/gcb_container/v0.2/gcloud-container-github.json"
    form = {"files": [("attestation", (provenance.name, provenance.read_bytes()))]}
    data = {"policy": "gcb", "format": "json"}
    alone = httpx.post(served.base + "/verify", **form, data=data, timeout=60)
    assert alone.status_code == 200, alone.text
    body = requirements(3000)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        scans = [
            pool.submit(httpx.post, served.base + SCAN, content=body, timeout=60) for _ in range(6)
        ]
        time.sleep(0.8)  # the one upload thread and its waiting line are taken
        busy = httpx.post(served.base + "/verify", **form, data=data, timeout=60)
        for scan in scans:
            scan.result()
    assert busy.status_code == 503, busy.text
    assert int(busy.headers["retry-after"]) >= 1
    assert "busy" in busy.json()["error"]
