"""Request rate limits on the API's paths, counted across workers and hosts.

`--rate-limit nvd` is NVD's public policy: 5 requests in a rolling 30 s window without
an API key, 50 with one; past it, 403 with a `message` header (and `retry-after`).
`--rate-limit N/S` allows N requests per rolling S seconds to every client alike.
A client is its valid API key (by name) or else its address (as uvicorn saw it: behind
a proxy, with `--forwarded-allow-ips`, the address the proxy names).

The count lives where every server of the store sees it: in the store (`rate_hit`), or
in Redis with `--rate-limit-store redis://...`. The window is cut into `BUCKETS` time
buckets; a request is granted when the buckets of the last S seconds hold fewer than N
grants. The check and the grant are one atomic step (a transaction holding the
client's lock, or one Redis script), so two servers never both grant the last request.

A process takes grants from the shared count in leases: one at a time while the limit
is small (under `LEASE_FROM`, so NVD's 5 and 50 are counted exactly), and for larger
limits up to 1/64 of what remains in the window, used locally until its bucket ends.
A lease's unused grants are counted as used, so a lease can only make the limit
stricter, never looser. A refused client is told (`retry-after`) when its oldest counted
requests leave the window far enough for a request to be granted, and is refused locally
until then, without asking the shared count again.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.errors import InputError, StoreError, WritesUnavailable
from assay.nvd.server.access import API_PREFIXES, SCOPE_KEY
from assay.nvd.server.responses import nvd_error
from assay.nvd.server.store_calls import in_store_thread
from assay.nvd.storage import ServiceStore

V = TypeVar("V")
BUCKETS = 10
LEASE_FROM = 128  # limits below this are counted request by request
LEASE_SHARE = 64
MAX_LEASE = 1000
PRUNE_SECONDS = 30.0
MAX_CLIENTS = 100_000  # local leases and refusals kept at most (oldest forgotten)
SPEC = re.compile(r"([1-9][0-9]{0,8})/([1-9][0-9]{0,6})")
STORE_UNAVAILABLE = "The store is unavailable"


@dataclass(frozen=True, slots=True)
class RateRule:
    """`limit` requests per rolling `seconds`."""

    limit: int
    seconds: int
    bucket_ms: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Read on every request: worked out once.
        object.__setattr__(self, "bucket_ms", max(1, self.seconds * 1000 // BUCKETS))

    def describe(self) -> str:
        return f"{self.limit} requests in a rolling {self.seconds} second window"


@dataclass(frozen=True, slots=True)
class RatePolicy:
    """The rule for clients without a key and the rule for clients with one."""

    name: str  # how the policy was given: "nvd" or "N/S" (part of the shared count's key)
    anonymous: RateRule
    keyed: RateRule

    def to_text(self) -> str:
        return self.name


NVD_POLICY = RatePolicy("nvd", RateRule(5, 30), RateRule(50, 30))


def parse_policy(text: str, where: str = "--rate-limit") -> RatePolicy:
    """`nvd` or `N/S` (N requests per S seconds, both positive whole numbers)."""
    stripped = text.strip()
    if stripped == "nvd":
        return NVD_POLICY
    match = SPEC.fullmatch(stripped)
    if match is None:
        raise InputError(
            where,
            f"expected 'nvd' or N/S (N requests per S seconds, e.g. 100/60), found {text[:40]!r}",
        )
    rule = RateRule(int(match.group(1)), int(match.group(2)))
    return RatePolicy(stripped, rule, rule)


class HitCounter(Protocol):
    """The shared count: grant up to `want` hits in `bucket` within the window."""

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]: ...

    def hits_in_window(
        self, client: str, window_start: int, bucket: int
    ) -> list[tuple[int, int]]: ...

    def prune_hits(self, now: int) -> None: ...


@dataclass(slots=True)
class _Lease:
    bucket: int
    left: int


class Limiter:
    """The decisions of one process against a shared `HitCounter`."""

    def __init__(self, counter: HitCounter, policy: RatePolicy) -> None:
        self.counter = counter
        self.policy = policy
        self._leases: OrderedDict[str, _Lease] = OrderedDict()
        self._refused: OrderedDict[str, int] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._pruned = 0.0

    def count_key(self, client: str, rule: RateRule) -> str:
        """The shared count's name for `client` under `rule`."""
        return f"{self.policy.name}|{rule.limit}/{rule.seconds}|{client}"

    def allow_locally(self, key: str, rule: RateRule, now_ms: int) -> bool:
        """True when this process's lease covers the request: no await, no store."""
        return self._take_local(key, now_ms - now_ms % rule.bucket_ms)

    async def allow(self, client: str, rule: RateRule, now_ms: int | None = None) -> int:
        """0 when the request may go on, else the seconds until it may be retried."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        return await self.allow_key(self.count_key(client, rule), rule, now_ms)

    async def allow_key(self, key: str, rule: RateRule, now_ms: int) -> int:
        """`allow` for a client whose count key is known."""
        bucket = now_ms - now_ms % rule.bucket_ms
        if self._take_local(key, bucket):
            return 0
        refused_until = self._refused.get(key)
        if refused_until is not None and now_ms < refused_until:
            return _retry_after(refused_until - now_ms)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # one look at the shared count per client at a time
            if self._take_local(key, bucket):
                return 0
            window_start = bucket - (BUCKETS - 1) * rule.bucket_ms
            want = _lease_size(rule)
            granted, _ = await in_store_thread(
                self.counter,
                lambda: self.counter.take_hits(
                    key,
                    bucket,
                    window_start=window_start,
                    want=want,
                    limit=rule.limit,
                    expires=bucket + rule.seconds * 1000,
                ),
            )
        self._locks.pop(key, None)
        await self._prune(now_ms)
        if granted == 0:
            hits = await in_store_thread(
                self.counter, lambda: self.counter.hits_in_window(key, window_start, bucket)
            )
            until = next_grant_at(hits, rule, bucket)
            self._remember(self._refused, key, until)
            return _retry_after(until - now_ms)
        if granted > 1:
            self._remember(self._leases, key, _Lease(bucket, granted - 1))
        return 0

    def _take_local(self, key: str, bucket: int) -> bool:
        lease = self._leases.get(key)
        if lease is None or lease.bucket != bucket or lease.left <= 0:
            return False
        lease.left -= 1
        return True

    def _remember(self, table: OrderedDict[str, V], key: str, value: V) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > MAX_CLIENTS:
            table.popitem(last=False)

    async def _prune(self, now_ms: int) -> None:
        if time.monotonic() - self._pruned < PRUNE_SECONDS:
            return
        self._pruned = time.monotonic()
        with contextlib.suppress(StoreError):
            await in_store_thread(self.counter, self.counter.prune_hits, now_ms)


def next_grant_at(hits: list[tuple[int, int]], rule: RateRule, bucket: int) -> int:
    """When a request refused in `bucket` would be granted: the start of the first bucket
    whose window no longer holds the `(bucket start, hits)` that keep the count at the
    limit, as buckets leave the window oldest first. Pure."""
    window_ms = BUCKETS * rule.bucket_ms
    soonest = bucket + rule.bucket_ms  # refusals are remembered for a bucket at least
    left = sum(count for _, count in hits)
    for start, count in sorted(hits):
        if left < rule.limit:
            break
        left -= count
        soonest = max(soonest, start + window_ms)
    return soonest


def _lease_size(rule: RateRule) -> int:
    """How many hits to take from the shared count at once: a share of a large limit,
    so that most requests are granted by the local lease."""
    if rule.limit < LEASE_FROM:
        return 1
    return max(1, min(MAX_LEASE, rule.limit // LEASE_SHARE))


def _retry_after(milliseconds: int) -> int:
    return max(1, -(-milliseconds // 1000))


class RateLimit:
    """ASGI middleware: 403 with a `message` header past the client's rate limit."""

    def __init__(self, app: ASGIApp, *, limiter: Limiter) -> None:
        self.app = app
        self.limiter = limiter
        self._clients: dict[str, tuple[str, RateRule]] = {}

    def _client(self, client: str, *, keyed: bool) -> tuple[str, RateRule]:
        """The count key and rule of a client, remembered (a bounded table)."""
        known = self._clients.get(client)
        if known is None:
            policy = self.limiter.policy
            rule = policy.keyed if keyed else policy.anonymous
            known = (self.limiter.count_key(client, rule), rule)
            if len(self._clients) >= MAX_CLIENTS:
                self._clients.clear()
            self._clients[client] = known
        return known

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIXES):
            await self.app(scope, receive, send)
            return
        key_name = scope.get(SCOPE_KEY)
        if key_name is not None:
            key, rule = self._client(f"key:{key_name}", keyed=True)
        else:
            address = scope.get("client")
            key, rule = self._client(f"ip:{address[0] if address else 'unknown'}", keyed=False)
        now_ms = int(time.time() * 1000)
        if self.limiter.allow_locally(key, rule, now_ms):
            await self.app(scope, receive, send)
            return
        refusal = await self._refusal(key, rule, now_ms, keyed=key_name is not None)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refusal(
        self, key: str, rule: RateRule, now_ms: int, *, keyed: bool
    ) -> Response | None:
        """The answer refusing a request past the limit (503 while the shared count is
        unreachable); None when it may go on."""
        try:
            wait = await self.limiter.allow_key(key, rule, now_ms)
        except WritesUnavailable as error:  # counts live on a primary that is away
            return nvd_error(error.reason, status=503)
        except StoreError:
            return nvd_error(
                getattr(self.limiter.counter, "unavailable", STORE_UNAVAILABLE), status=503
            )
        if not wait:
            return None
        with_key = " with an API key" if keyed else " without an API key"
        answer = nvd_error(f"Rate limit exceeded: {rule.describe()}{with_key}.", status=403)
        answer.headers["retry-after"] = str(wait)
        return answer


def counter_for(url: str | None, store: ServiceStore) -> HitCounter:
    """The shared count: Redis at `url` when given, else the store."""
    if not url:
        return store
    from assay.nvd.server.redis_counter import RedisCounter

    return RedisCounter(url, buckets=BUCKETS)
