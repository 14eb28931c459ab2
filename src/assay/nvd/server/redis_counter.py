"""The shared request count in Redis (`--rate-limit-store redis://...`).

The same count as the store's `rate_hit` table: one key per client and time bucket,
holding the grants of that bucket and expiring with the window. A Lua script reads the
window's buckets and adds the grant in one atomic step.
"""

from __future__ import annotations

from typing import Any

from assay.errors import StoreError

TAKE = """
local used = 0
for _, value in ipairs(redis.call('MGET', unpack(KEYS))) do
  if value then used = used + tonumber(value) end
end
local granted = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used)
if granted < 0 then granted = 0 end
if granted > 0 then
  local current = KEYS[#KEYS]
  redis.call('INCRBY', current, granted)
  redis.call('PEXPIRE', current, tonumber(ARGV[3]))
end
return {granted, used + granted}
"""
PREFIX = "assay:rate:"
TIMEOUT_SECONDS = 5.0


class RedisCounter:
    unavailable = "The rate-limit counter (Redis) is unavailable"

    def __init__(self, url: str, *, buckets: int) -> None:
        self._buckets = buckets  # a window's time buckets (`ratelimit.BUCKETS`)
        try:
            import redis
        except ImportError as error:
            raise StoreError(
                "--rate-limit-store redis://... needs the redis client: pip install 'assay[redis]'"
            ) from error
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        try:
            self._client: Any = redis.Redis.from_url(
                url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
            )
        except ValueError as error:
            raise StoreError(f"--rate-limit-store: {error}") from error
        self._take = self._client.register_script(TAKE)

    def take_hits(
        self, client: str, bucket: int, *, window_start: int, want: int, limit: int, expires: int
    ) -> tuple[int, int]:
        keys = [
            f"{PREFIX}{client}:{start}" for start in _starts(window_start, bucket, self._buckets)
        ]
        try:
            granted, used = self._take(keys=keys, args=[want, limit, max(1, expires - bucket)])
        except self._errors as error:
            raise StoreError(f"counting requests in Redis failed: {error}") from error
        return int(granted), int(used)

    def hits_in_window(self, client: str, window_start: int, bucket: int) -> list[tuple[int, int]]:
        """(bucket, hits) of `client` from `window_start` to `bucket`, oldest first."""
        starts = _starts(window_start, bucket, self._buckets)
        try:
            values = self._client.mget([f"{PREFIX}{client}:{start}" for start in starts])
        except self._errors as error:
            raise StoreError(f"counting requests in Redis failed: {error}") from error
        return [(start, int(value)) for start, value in zip(starts, values, strict=True) if value]

    def prune_hits(self, now: int) -> None:
        """Nothing to do: every bucket's key expires with its window."""

    def ping(self) -> None:
        try:
            self._client.ping()
        except self._errors as error:
            raise StoreError(f"cannot reach Redis for the rate limit: {error}") from error


def _starts(window_start: int, bucket: int, buckets: int) -> list[int]:
    # The window's bucket starts: `buckets` of them, evenly spaced up to `bucket`.
    step = max(1, (bucket - window_start) // (buckets - 1))
    return list(range(window_start, bucket + 1, step))
