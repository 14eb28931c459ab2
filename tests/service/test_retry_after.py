"""Retry-After on a rate-limit 403 is the time until a request would be granted.

Before, it named the end of the current bucket (2-3 s under NVD's 5 per 30 s) while the
window cleared only after about 30 s: a client that waited as told was refused again."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.conftest import backends, make_store_url

from assay.nvd.server.ratelimit import BUCKETS, Limiter, RatePolicy, RateRule, next_grant_at
from assay.nvd.storage import open_store, service_store

RULE = RateRule(5, 30)
POLICY = RatePolicy("nvd", RULE, RateRule(50, 30))


@pytest.fixture(params=[*backends(), "redis"])
def limiter(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Limiter]:
    if request.param == "redis":
        redis = pytest.importorskip("redis")
        client = redis.Redis(host="127.0.0.1", port=6379, db=3, socket_connect_timeout=2)
        try:
            client.flushdb()
        except redis.RedisError:
            pytest.skip("no Redis on 127.0.0.1:6379")
        finally:
            client.close()
        from assay.nvd.server.redis_counter import RedisCounter

        yield Limiter(RedisCounter("redis://127.0.0.1:6379/3", buckets=BUCKETS), POLICY)
        return
    folder = tmp_path_factory.mktemp(f"retry-{request.param}")
    for url in make_store_url(request.param, folder):
        store = open_store(url)
        try:
            yield Limiter(service_store(store), POLICY)
        finally:
            store.close()


def test_waiting_as_told_is_enough_and_not_waiting_is_refused(limiter: Limiter) -> None:
    async def run() -> None:
        start = 1_700_000_000_000
        for n in range(5):  # five requests across the first seconds
            assert await limiter.allow("client", RULE, start + n * 700) == 0
        refused_at = start + 5_000
        wait = await limiter.allow("client", RULE, refused_at)
        assert 20 <= wait <= 30  # the first requests leave the window after ~30 s
        again = await limiter.allow("client", RULE, refused_at + (wait - 2) * 1000)
        assert again > 0  # asking early is refused, with the rest of the wait
        assert await limiter.allow("client", RULE, refused_at + wait * 1000) == 0

    asyncio.run(run())


hits_strategy = st.dictionaries(
    st.integers(0, BUCKETS - 1), st.integers(1, 8), min_size=1, max_size=BUCKETS
)


@given(hits=hits_strategy, limit=st.integers(1, 20))
def test_the_next_grant_is_the_first_bucket_whose_window_is_under_the_limit(
    hits: dict[int, int], limit: int
) -> None:
    rule = RateRule(limit, 30)
    bucket_ms = rule.bucket_ms
    now_bucket = (BUCKETS - 1) * bucket_ms
    listed = [(index * bucket_ms, count) for index, count in hits.items()]

    def count_at(bucket: int) -> int:
        start = bucket - (BUCKETS - 1) * bucket_ms
        return sum(count for at, count in listed if start <= at <= bucket)

    until = next_grant_at(listed, rule, now_bucket)
    assert until > now_bucket
    assert until % bucket_ms == 0
    assert count_at(until) < limit
    earlier = until - bucket_ms
    if earlier > now_bucket:
        assert count_at(earlier) >= limit
