"""Compression, validators and 304s, over the real app on both stores."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator

import orjson
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from assay.nvd.server.app import create_app
from assay.nvd.server.compression import negotiate
from assay.nvd.server.service import ServiceSettings
from assay.nvd.storage import open_store

CVES = "/rest/json/cves/2.0"


@pytest.fixture(scope="module")
def client(sample_store_url: str) -> Iterator[TestClient]:
    store = open_store(sample_store_url)
    service = ServiceSettings(cache_control="public, max-age=30")
    with TestClient(create_app(store, service=service)) as client:
        yield client
    store.close()


def raw(client: TestClient, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the body as sent (not decoded by the client)."""
    with client.stream("GET", path, headers=headers) as response:
        body = b"".join(response.iter_raw())
        return response.status_code, dict(response.headers), body


def test_pages_are_compressed_as_the_client_asks(client: TestClient) -> None:
    status, plain_headers, plain = raw(
        client, f"{CVES}?resultsPerPage=2000", **{"accept-encoding": "identity"}
    )
    assert status == 200
    assert "content-encoding" not in plain_headers
    assert int(plain_headers["content-length"]) == len(plain)

    status, headers, body = raw(
        client, f"{CVES}?resultsPerPage=2000", **{"accept-encoding": "gzip"}
    )
    assert status == 200
    assert headers["content-encoding"] == "gzip"
    assert headers["vary"] == "Accept-Encoding"
    assert len(body) < len(plain) / 4
    assert _same_page(gzip.decompress(body), plain)

    status, headers, body = raw(
        client, f"{CVES}?resultsPerPage=2000", **{"accept-encoding": "gzip;q=0.5, zstd"}
    )
    assert headers["content-encoding"] == "zstd"
    decoded = zstandard.ZstdDecompressor().decompressobj().decompress(body)
    assert _same_page(decoded, plain)


def test_a_single_record_is_compressed_with_its_length(client: TestClient) -> None:
    status, headers, body = raw(
        client, f"{CVES}?cveId=CVE-2024-23113", **{"accept-encoding": "gzip"}
    )
    assert status == 200
    assert headers["content-encoding"] == "gzip"
    assert int(headers["content-length"]) == len(body)
    assert orjson.loads(gzip.decompress(body))["totalResults"] == 1


def test_errors_and_refusals_stay_uncompressed(client: TestClient) -> None:
    status, headers, _body = raw(client, f"{CVES}?cveId=bogus", **{"accept-encoding": "gzip"})
    assert status == 404
    assert "content-encoding" not in headers
    assert headers["message"]
    status, headers, _ = raw(
        client, f"{CVES}?cveId=CVE-2024-23113", **{"accept-encoding": "gzip;q=0, zstd;q=0"}
    )
    assert "content-encoding" not in headers


def test_validators_and_304s(client: TestClient) -> None:
    status, headers, _ = raw(client, f"{CVES}?cveId=CVE-2024-23113")
    assert status == 200
    etag, last_modified = headers["etag"], headers["last-modified"]
    assert etag.startswith('W/"g')
    assert headers["cache-control"] == "public, max-age=30"

    status, headers, body = raw(client, f"{CVES}?resultsPerPage=5", **{"if-none-match": etag})
    assert (status, body) == (304, b"")
    assert headers["etag"] == etag
    assert headers["access-control-allow-origin"] == "*"
    status, _, _ = raw(client, f"{CVES}?resultsPerPage=5", **{"if-none-match": 'W/"g999999", *'})
    assert status == 304
    status, _, _ = raw(client, f"{CVES}?resultsPerPage=5", **{"if-none-match": 'W/"g999999"'})
    assert status == 200
    status, _, _ = raw(client, f"{CVES}?resultsPerPage=5", **{"if-modified-since": last_modified})
    assert status == 304
    status, _, _ = raw(
        client, f"{CVES}?resultsPerPage=5", **{"if-modified-since": "Mon, 01 Jan 2001 00:00:00 GMT"}
    )
    assert status == 200
    # If-None-Match wins over If-Modified-Since (RFC 9110).
    status, _, _ = raw(
        client,
        f"{CVES}?resultsPerPage=5",
        **{"if-none-match": 'W/"g999999"', "if-modified-since": last_modified},
    )
    assert status == 200
    status, _, _ = raw(client, f"{CVES}?resultsPerPage=5", **{"if-modified-since": "garbage"})
    assert status == 200


def test_a_write_moves_the_etag(store_url: str) -> None:
    from tests.conftest import ASSETS

    from assay.nvd.ingest.importer import Importer
    from assay.nvd.server import httpcache

    store = open_store(store_url)
    try:
        with TestClient(create_app(store)) as client:
            first = client.get(f"{CVES}?resultsPerPage=1").headers["etag"]
            report = Importer(store).import_files(sorted((ASSETS / "nvd" / "cves").glob("*.json")))
            assert report.ok
            httpcache.REFRESH_SECONDS, saved = 0.0, httpcache.REFRESH_SECONDS
            try:
                deadline = time.monotonic() + 10
                second = first
                while second == first and time.monotonic() < deadline:
                    second = client.get(f"{CVES}?resultsPerPage=1").headers["etag"]
                    time.sleep(0.05)
            finally:
                httpcache.REFRESH_SECONDS = saved
            assert second != first
            answer = client.get(f"{CVES}?resultsPerPage=1", headers={"if-none-match": first})
            assert answer.status_code == 200
    finally:
        store.close()


@given(
    st.lists(st.sampled_from(["gzip", "zstd", "br", "identity", "*", "deflate"]), max_size=4),
    st.lists(st.sampled_from(["", ";q=0", ";q=0.5", ";q=1", ";q=x"]), min_size=4, max_size=4),
)
def test_negotiation_never_picks_a_refused_encoding(names: list[str], qualities: list[str]) -> None:
    header = ", ".join(name + quality for name, quality in zip(names, qualities, strict=False))
    chosen = negotiate(header)
    refused = {name for name, q in zip(names, qualities, strict=False) if q in (";q=0", ";q=x")}
    assert chosen in (None, "gzip", "zstd")
    if chosen is not None:
        assert chosen not in refused or any(
            n == chosen and q not in (";q=0", ";q=x")
            for n, q in zip(names, qualities, strict=False)
        )
        assert chosen in names or "*" in names


def _same_page(a: bytes, b: bytes) -> bool:
    left, right = orjson.loads(a), orjson.loads(b)
    left.pop("timestamp")
    right.pop("timestamp")
    return bool(left == right)


def test_the_api_description_names_the_validators_and_the_walk_restart(
    client: TestClient,
) -> None:
    """Every NVD listing documents If-None-Match (304) and If-Match (412) as served;
    `/api/snapshots` is described only by a server that publishes snapshots."""
    document = client.get("/openapi.json").json()
    listings = {path: item["get"] for path, item in document["paths"].items() if "/2.0" in path}
    assert len(listings) == 5
    for path, operation in listings.items():
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert headers == {"If-None-Match", "If-Match"}, path
        assert {"304", "412"} <= set(operation["responses"]), path
    assert not any(path.startswith("/api/snapshots") for path in document["paths"])

    generation = raw(client, f"{CVES}?resultsPerPage=5")[1]["x-assay-generation"]
    status, headers, _ = raw(
        client, f"{CVES}?resultsPerPage=5&startIndex=5", **{"if-match": f'W/"g{generation}"'}
    )
    assert status == 200
    stale = int(generation) + 1
    status, headers, _ = raw(
        client, f"{CVES}?resultsPerPage=5&startIndex=5", **{"if-match": f'W/"g{stale}"'}
    )
    assert status == 412
    assert set(listings[CVES]["responses"]["412"]["headers"]) <= set(headers)
