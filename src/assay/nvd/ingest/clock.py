"""Records from the future: refused wherever records enter a store (import and sync).

A store keeps the record with the latest `lastModified` (an older one never replaces a
newer one), and a mirror's checkpoint follows the upstream's clock. A record stamped
`9999-12-31` would therefore never be replaced, and a checkpoint taken from such a clock
would end every later incremental read before it starts. A record whose `published`,
`lastModified` or `created` is later than this machine's clock plus `FUTURE_MARGIN` is
refused, naming its id and JSON path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from assay.errors import InputError
from assay.nvd.dates import comparable_text

__all__ = ["FUTURE_MARGIN", "latest_allowed", "not_from_the_future", "record_id"]

FUTURE_MARGIN: Final = timedelta(hours=1)
"""How far past this machine's clock a timestamp may be (clock skew between machines).
Shorter than the mirror's default overlap (2 hours), so that a checkpoint taken at the
latest allowed time is still re-read from before this machine's clock on the next run."""

_TIMESTAMPS: Final = (
    ("published", "published"),
    ("created", "created"),
    ("last_modified", "lastModified"),
    ("cpe_last_modified", "cpeLastModified"),
)
"""The facts' timestamps (attribute, JSON key) that order records in a store."""

_IDS: Final = ("cve_id", "cve_change_id", "cpe_name_id", "match_criteria_id", "source_key")


def record_id(facts: Any) -> str | None:
    """The id a checked record is known by (CVE id, change id, CPE name id, ...)."""
    for attribute in _IDS:
        value = getattr(facts, attribute, None)
        if value:
            return str(value)
    return None


_latest: tuple[float, str] = (float("-inf"), "")


def latest_allowed() -> str:
    """This machine's clock plus `FUTURE_MARGIN`, in the stores' comparable form
    (recomputed at most once a second: it is asked for every record)."""
    global _latest  # noqa: PLW0603 - a one-value cache of the clock
    checked, text = _latest
    now = time.monotonic()
    if now - checked >= 1.0:
        text = comparable_text(datetime.now(UTC) + FUTURE_MARGIN)
        _latest = (now, text)
    return text


def not_from_the_future(facts: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """`facts`, refusing a record with a timestamp later than `latest_allowed()`."""

    def checked(value: Any, where: str) -> Any:
        found = facts(value, where)
        latest = latest_allowed()
        for attribute, key in _TIMESTAMPS:
            stamp = getattr(found, attribute, None)
            if isinstance(stamp, str) and stamp > latest:
                name = record_id(found) or "record"
                raise InputError(
                    f"{where}.{key}",
                    f"{name}: {stamp} is later than this machine's clock plus "
                    f"{_hours(FUTURE_MARGIN)} ({latest}); a record from the future would "
                    "never be replaced",
                )
        return found

    return checked


def _hours(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours:g} hour" + ("" if hours == 1 else "s")
