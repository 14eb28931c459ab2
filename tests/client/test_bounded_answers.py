"""The clients read an answer within caps, in every coding the real server sends, and
follow redirects within the origin only: the sync and the async client, against the
real assay app and a hostile loopback upstream."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from tests.live import serving
from tests.sync.hostile import Answer, Request, Upstream, gzip_bomb

from assay.nvd.client import (
    AsyncNvdClient,
    NvdClient,
    NvdRedirectError,
    NvdResponseTooLarge,
)


@pytest.fixture(scope="module")
def served(sample_store_url: str) -> Iterator[str]:
    with serving(sample_store_url) as root:
        yield f"{root}/rest/json"


@pytest.mark.parametrize("coding", ["zstd", "gzip", "deflate", "identity"])
def test_every_coding_of_the_real_server_reads_the_same_page(served: str, coding: str) -> None:
    with NvdClient(wait_time=0, base_url=served) as plain:
        expected = plain.get_cves(results_per_page=200, start_index=0)
    with NvdClient(wait_time=0, base_url=served, headers={"Accept-Encoding": coding}) as nvd:
        page = nvd.get_cves(results_per_page=200, start_index=0)
    assert [item.cve.raw for item in page.vulnerabilities] == [
        item.cve.raw for item in expected.vulnerabilities
    ]
    assert len(page.vulnerabilities) == 200


@pytest.mark.parametrize("coding", ["zstd", "gzip", "identity"])
def test_a_page_over_the_decoded_cap_is_refused(served: str, coding: str) -> None:
    headers = {"Accept-Encoding": coding}
    with (
        NvdClient(wait_time=0, base_url=served, headers=headers, max_decoded_bytes=50_000) as nvd,
        pytest.raises(NvdResponseTooLarge, match="more than 50000 bytes once decoded"),
    ):
        nvd.get_cves(results_per_page=200, start_index=0)


def _bomb_upstream() -> Upstream:
    bomb = gzip_bomb(64)

    def script(_request: Request) -> Answer:
        return Answer(headers={"Content-Encoding": "gzip"}, body=bomb)

    return Upstream(script)


def test_the_async_client_stops_a_gzip_bomb_at_the_cap() -> None:
    async def fetch(base: str) -> None:
        async with AsyncNvdClient(wait_time=0, base_url=base, max_decoded_bytes=8 << 20) as nvd:
            await nvd.get_cves(results_per_page=1)

    with _bomb_upstream() as upstream, pytest.raises(NvdResponseTooLarge, match="8 MiB"):
        asyncio.run(fetch(upstream.base_url))
    assert len(upstream.requests) == 1


def test_the_async_client_sends_no_key_to_another_origin() -> None:
    def nothing(_request: Request) -> Answer:
        return Answer(body=b"{}")

    with Upstream(nothing) as other:

        def redirect(request: Request) -> Answer:
            return Answer(307, {"Location": f"{other.root}{request.path}"})

        async def fetch(base: str) -> None:
            async with AsyncNvdClient(wait_time=0, base_url=base, api_key="k3y") as nvd:
                await nvd.get_cves(results_per_page=1)

        with Upstream(redirect) as upstream, pytest.raises(NvdRedirectError, match="another"):
            asyncio.run(fetch(upstream.base_url))
        assert other.requests == []
