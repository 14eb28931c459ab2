"""Retry, back-off and pacing policy shared by the sync and async clients. Pure.

NVD throttles with 403 (not 429) and sheds load with 502/503/504; compatible services
may send 429 with `Retry-After`. Time-outs, connection errors and truncated bodies are
retried too. The clients ask this module *whether* and *how long*, then sleep themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "parse_retry_after"]

RETRYABLE_STATUSES: Final = frozenset({403, 429, 500, 502, 503, 504})
"""403 is NVD's rate limit; 429 is what other compatible services send; 5xx is load."""


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    seconds: float | None
    try:
        seconds = float(text)
    except ValueError:
        seconds = _seconds_until(text, now or datetime.now(UTC))
    if seconds is None or not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _seconds_until(text: str, now: datetime) -> float | None:
    """Seconds from `now` to an HTTP date (naive means UTC); None when it is none."""
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request.

    The n-th retry (n = 1, 2, ...) waits `backoff * factor**(n-1)` seconds, capped at
    `max_backoff`, or what `Retry-After` asks for when that is longer (capped at
    `max_retry_after`).
    """

    max_retries: int = 3
    backoff: float = 1.0
    factor: float = 2.0
    max_backoff: float = 60.0
    max_retry_after: float = 300.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries: must be at least 0, got {self.max_retries}")
        if self.backoff < 0 or self.max_backoff < 0 or self.max_retry_after < 0:
            raise ValueError("back-off durations must not be negative")

    def should_retry_status(self, status: int) -> bool:
        """Whether an HTTP status is worth another attempt."""
        return status in RETRYABLE_STATUSES

    def can_retry(self, attempt: int) -> bool:
        """Whether attempt number `attempt` (0 = first try) may be followed by a retry."""
        return attempt < self.max_retries

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (0-based) before the next one."""
        computed = min(self.max_backoff, self.backoff * self.factor**attempt)
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return max(computed, min(asked, self.max_retry_after))
        return computed
