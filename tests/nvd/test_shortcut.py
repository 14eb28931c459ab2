"""The `?cveId=` shortcut answers exactly as the full path does: the same status, headers
and bytes, with every layer it steps over (the composed app's pages and routing, the
metrics, the validators, compression), on both stores."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.testclient import TestClient
from tests.conftest import ASSETS

from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.ingest.importer import Importer
from assay.nvd.server.app import create_app
from assay.nvd.server.responses import Envelope, single_cve_body
from assay.nvd.server.service import ServiceSettings
from assay.nvd.storage import open_store
from assay.web.app import WebSettings, create_web_app
from assay.web.hosts import default_allowed_hosts

TIMESTAMP = re.compile(rb'"timestamp":"[^"]+"')
CVES = "/rest/json/cves/2.0"
MISSING = "CVE-2099-0001"
# What clients send: nothing, identity, gzip (httpx, requests), zstd, and refusals.
ENCODINGS = (None, "identity", "gzip", "zstd", "gzip;q=0, zstd;q=0", "br, gzip;q=0.5")
SERVE = ServiceSettings(allowed_hosts=default_allowed_hosts("127.0.0.1"))


def _loaded(path: Path) -> str:
    """A SQLite store at `path` with the test assets' CVEs."""
    url = f"sqlite:///{path}"
    store = open_store(url)
    report = Importer(store).import_files(sorted((ASSETS / "nvd" / "cves").glob("*.json")))
    store.close()
    assert report.ok, report.problems
    return url


def _api(url: str, service: ServiceSettings | None = None) -> Starlette:
    return create_app(open_store(url), service=service)


def _served(url: str, service: ServiceSettings = SERVE) -> Starlette:
    """The app `assay serve` runs on a loopback address."""
    return create_web_app(open_store(url), WebSettings(), service)


@pytest.fixture(scope="module", params=["api", "served"])
def client(request: pytest.FixtureRequest, sample_store_url: str) -> Iterator[TestClient]:
    app = _api(sample_store_url) if request.param == "api" else _served(sample_store_url)
    with TestClient(app, base_url="http://127.0.0.1:8000") as test_client:
        yield test_client
    app.state.store.close()


def _some_ids(client: TestClient) -> list[str]:
    page = client.get(CVES, params={"resultsPerPage": "40"}).json()
    return [item["cve"]["id"] for item in page["vulnerabilities"]]


def _both(
    client: TestClient, path: str, cve_id: str, headers: dict[str, str]
) -> tuple[httpx.Response, httpx.Response]:
    """The shortcut's answer and the full path's (a lower-case parameter name, which the
    handler accepts, does not take the shortcut)."""
    short = client.get(f"{path}?cveId={cve_id}", headers=headers)
    full = client.get(f"{path}?cveid={cve_id}", headers=headers)
    return short, full


def assert_same(short: httpx.Response, full: httpx.Response, *, compressed: bool) -> None:
    assert short.status_code == full.status_code
    skipped = {"date"} | ({"content-length"} if compressed else set())
    assert [(k, v) for k, v in short.headers.multi_items() if k not in skipped] == [
        (k, v) for k, v in full.headers.multi_items() if k not in skipped
    ]
    assert TIMESTAMP.sub(b"", _decoded(short)) == TIMESTAMP.sub(b"", _decoded(full))


def _decoded(response: httpx.Response) -> bytes:
    """The body as sent before compression (the client undoes gzip, not zstd)."""
    if response.headers.get("content-encoding") == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(response.content)
    return response.content


def test_the_query_it_stands_for_is_the_parsed_one() -> None:
    for cve_id in ("CVE-1999-0095", "CVE-2021-44228", "CVE-2024-1234567"):
        assert CveQuery(cve_id=cve_id) == parse_cve_query([("cveId", cve_id)])


@given(st.binary(min_size=2, max_size=300), st.booleans())
def test_the_single_record_body_is_the_envelopes(record: bytes, found: bool) -> None:
    chosen = record if found else None
    made = b"".join(
        Envelope(format_name="NVD_CVE", list_key="vulnerabilities", wrapper="cve",
                 start_index=0, total=int(found), records=[record] if found else []).pieces()
    )  # fmt: skip
    assert TIMESTAMP.sub(b"", single_cve_body(chosen)) == TIMESTAMP.sub(b"", made)


@pytest.mark.parametrize("suffix", ["", "/"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_same_status_headers_and_bytes_as_the_full_path(
    client: TestClient, suffix: str, encoding: str | None
) -> None:
    ids = _some_ids(client)
    assert ids
    headers = {} if encoding is None else {"accept-encoding": encoding}
    if encoding is None:
        headers = {"accept-encoding": ""}  # (httpx sends one of its own otherwise)
    for cve_id in [*ids[:12], MISSING]:
        short, full = _both(client, CVES + suffix, cve_id, headers)
        assert short.status_code == 200
        compressed = "content-encoding" in full.headers
        assert_same(short, full, compressed=compressed)
        assert short.headers["etag"].startswith('W/"g')
        if encoding in ("gzip", "zstd") and cve_id != MISSING:
            assert short.headers["content-encoding"] == encoding


def test_other_shapes_go_the_full_way(client: TestClient) -> None:
    bad = client.get(f"{CVES}?cveId=CVE-12-1")
    assert bad.status_code == 404
    assert bad.headers["message"]
    cve_id = _some_ids(client)[0]
    head = client.head(f"{CVES}?cveId={cve_id}")
    assert head.status_code == 200
    assert head.content == b""
    etag = client.get(f"{CVES}?cveId={cve_id}").headers["etag"]
    again = client.get(f"{CVES}?cveId={cve_id}", headers={"if-none-match": etag})
    assert again.status_code == 304
    assert again.headers["etag"] == etag


def _counts(client: TestClient) -> dict[tuple[str, str], float]:
    found: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            if sample.name == "assay_http_requests_total":
                found[(sample.labels["path"], sample.labels["status"])] = sample.value
    return found


def test_the_metrics_count_it_as_the_full_path(client: TestClient) -> None:
    cve_id = _some_ids(client)[0]
    key = (CVES, "200")
    before = _counts(client).get(key, 0.0)
    client.get(f"{CVES}?cveId={cve_id}")
    middle = _counts(client)[key]
    client.get(f"{CVES}?cveid={cve_id}")
    assert middle - before == 1
    assert _counts(client)[key] - middle == 1


@pytest.mark.parametrize("make", [_api, _served])
def test_a_damaged_record_gets_the_same_503(make: object, tmp_path: Path) -> None:
    """A record that does not read back: 503, with every header the full path gives."""
    source = tmp_path / "store.db"
    url = _loaded(source)
    connection = sqlite3.connect(source)
    with connection:
        (cve_id,) = connection.execute("SELECT min(cve_id) FROM cve").fetchone()
        connection.execute("UPDATE cve SET record = x'ff00' WHERE cve_id = ?", (cve_id,))
    connection.close()
    app = make(url)  # type: ignore[operator]
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for encoding in ("", "gzip"):
            short, full = _both(client, CVES, cve_id, {"accept-encoding": encoding})
            assert short.status_code == 503
            assert_same(short, full, compressed=False)
    app.state.store.close()


def test_an_empty_store_goes_the_full_way(tmp_path: Path) -> None:
    app = _served(f"sqlite:///{tmp_path / 'empty.db'}")
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        short, full = _both(client, CVES, MISSING, {"accept-encoding": ""})
        assert short.headers["x-assay-store"] == "empty"
        assert_same(short, full, compressed=False)
    app.state.store.close()


def test_behind_keys_and_limits_it_stands_in_for_the_inner_layers(tmp_path: Path) -> None:
    """With API keys and a rate limit (which decide per request) the shortcut sits
    behind them: the answers are still the full path's."""
    url = _loaded(tmp_path / "store.db")
    service = ServiceSettings(
        allowed_hosts=SERVE.allowed_hosts, api_keys="optional", rate_limit="100000/30"
    )
    app = _served(url, service)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for cve_id in [*_some_ids(client)[:5], MISSING]:
            for encoding in ("", "gzip"):
                short, full = _both(client, CVES, cve_id, {"accept-encoding": encoding})
                assert short.status_code == 200
                assert_same(short, full, compressed=bool(encoding))
    app.state.store.close()


def test_if_match_is_honoured_as_on_every_listing(client: TestClient) -> None:
    """`If-Match` names the generation of a walk: a look-up by `cveId` answers 412 when
    the store is elsewhere, as every other listing request does (`walks.py`)."""
    cve_id = _some_ids(client)[0]
    plain = client.get(f"{CVES}?cveId={cve_id}", headers={"accept-encoding": ""})
    generation = int(plain.headers["x-assay-generation"])
    for tag in (f'W/"g{generation}"', f'"g{generation}"', "*"):
        short, full = _both(client, CVES, cve_id, {"accept-encoding": "", "if-match": tag})
        assert short.status_code == 200
        assert_same(short, full, compressed=False)
        assert TIMESTAMP.sub(b"", short.content) == TIMESTAMP.sub(b"", plain.content)
    for tag in (f'W/"g{generation + 1}"', 'W/"g0"' if generation else 'W/"g7"', "nonsense"):
        short, full = _both(client, CVES, cve_id, {"accept-encoding": "", "if-match": tag})
        assert short.status_code == 412
        assert_same(short, full, compressed=False)
        assert short.content == b""
        assert short.headers["message"]
