"""Mirroring CVE 5 records (cvelistV5's release archives), the KEV catalogue and EPSS.

cvelistV5 publishes, on its GitHub releases (`{upstream}/{tag}/{asset}`):

    cve_{DAY}_0000Z/{DAY}_all_CVEs_at_midnight.zip.zip     every record at midnight (UTC)
    cve_{DAY}_{HH}00Z/{DAY}_delta_CVEs_at_{HH}00Z.zip      what changed since that midnight
    cve_{DAY}_at_end_of_day/{DAY}_delta_CVEs_at_end_of_day.zip   the whole day's changes

A first sync loads the newest baseline (today's, else yesterday's); every sync then
loads, for each day from the checkpoint's on, the newest delta of that day it has not
loaded (a delta holds every change since midnight, so the newest one is enough): the day's
end-of-day delta for a day that is over, else the latest hourly one. The checkpoint
(`meta` `sync.cve5`: the day and the hour reached) is written with the last batch of each
archive, so a sync stopped at any moment starts again with the archive it was loading;
records are replaced only by newer ones, so loading one twice changes nothing.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Final, Protocol

from assay._bounded import copy_bounded
from assay.cve5 import DEFAULT_CVELIST_URL, DEFAULT_EPSS_URL, DEFAULT_KEV_URL
from assay.cve5.importer import Cve5Importer, Cve5ImportReport, _Writer
from assay.errors import ClientError, StoreError

__all__ = [
    "CHECKPOINT",
    "DEFAULT_CVELIST_URL",
    "DEFAULT_EPSS_URL",
    "DEFAULT_KEV_URL",
    "CveSyncReport",
    "download",
    "sync_cvelist",
]

CHECKPOINT: Final = "sync.cve5"
MAX_ARCHIVE_BYTES: Final = 4 * 1024**3
TIMEOUT: Final = 60.0
END_OF_DAY: Final = "end_of_day"


def download(url: str, into: Path, limit: int) -> bool:
    """Fetch `url` into the file `into`, at most `limit` bytes: False on 404 (an archive
    not published), `ClientError` for anything else that goes wrong."""
    import httpx

    try:
        with (
            httpx.stream("GET", url, timeout=TIMEOUT, follow_redirects=True) as response,
            into.open("wb") as out,
        ):
            if response.status_code == 404:
                return False
            if response.status_code != 200:
                raise ClientError(f"GET {url}: HTTP {response.status_code}")
            if not copy_bounded(response.iter_bytes(1 << 20), out, limit):
                raise ClientError(f"GET {url}: expected at most {limit} bytes, found more")
    except httpx.HTTPError as error:
        raise ClientError(f"GET {url}: {error}") from None
    return True


def fetch_bytes(url: str, limit: int) -> bytes:
    """The body of `url` (at most `limit` bytes), or `ClientError` (404 included)."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "body"
        if not download(url, target, limit):
            raise ClientError(f"GET {url}: HTTP 404")
        return target.read_bytes()


@dataclass(slots=True)
class CveSyncReport:
    archives: list[str] = field(default_factory=list)
    """The archives loaded, in order (their asset names)."""
    imported: Cve5ImportReport = field(default_factory=Cve5ImportReport)
    checkpoint: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            **self.imported.to_dict(),
            "archives": list(self.archives),
            "checkpoint": dict(self.checkpoint),
        }


class _Store(_Writer, Protocol):
    def get_meta(self, key: str) -> str | None: ...


def _merge(total: Cve5ImportReport, part: Cve5ImportReport) -> None:
    total.added += part.added
    total.updated += part.updated
    total.unchanged += part.unchanged
    total.rejected += part.rejected
    total.skipped += part.skipped
    total.files += part.files
    total.failed_files += part.failed_files
    total.problems.extend(part.problems)


def _hours(after: str | None, until: int) -> list[str]:
    """The hourly delta names of a day newer than `after`, newest first."""
    start = 0 if after in (None, "") else int(after[:2])
    return [f"{hour:02d}00Z" for hour in range(until, start, -1)]


def _checkpoint(saved: str | None) -> dict[str, str]:
    """The stored checkpoint ({"day": "YYYY-MM-DD", "hour": "HH00Z" | "end_of_day"})."""
    if not saved:
        return {}
    try:
        value = json.loads(saved)
        date.fromisoformat(value["day"])
        if not isinstance(value["hour"], str):
            raise TypeError(value["hour"])
    except (ValueError, KeyError, TypeError) as error:
        raise StoreError(
            f"the store's {CHECKPOINT} checkpoint is not one assay wrote ({saved[:80]!r}: "
            f"{error}); remove it to sync from a baseline again"
        ) from None
    return {"day": value["day"], "hour": value["hour"]}


_Load = Callable[[str, str, dict[str, str]], bool]
"""Load one archive (URL, asset name, the checkpoint it reaches); False when absent."""


def _baseline(load: _Load, base: str, now: datetime) -> None:
    """Load today's midnight baseline, else yesterday's."""
    for day in (now.date(), now.date() - timedelta(days=1)):
        asset = f"{day.isoformat()}_all_CVEs_at_midnight.zip.zip"
        reached = {"day": day.isoformat(), "hour": "0000Z"}
        if load(f"{base}/cve_{day.isoformat()}_0000Z/{asset}", asset, reached):
            return
    raise ClientError(
        f"{base}: no baseline archive (..._all_CVEs_at_midnight.zip.zip) for "
        f"{now.date().isoformat()} or the day before"
    )


def _day_candidates(day: date, reached: str | None, now: datetime) -> Sequence[str]:
    """The hours of a day's deltas to try, newest first (the end of day's first, for a
    day that is over)."""
    candidates: Sequence[str] = _hours(reached, now.hour if day == now.date() else 23)
    return [END_OF_DAY, *candidates] if day < now.date() else candidates


def _day_delta(load: _Load, base: str, day: date, reached: str | None, now: datetime) -> None:
    """The day's newest delta not yet loaded (none when none is published yet)."""
    text = day.isoformat()
    for hour in _day_candidates(day, reached, now):
        tag = f"cve_{text}_at_end_of_day" if hour == END_OF_DAY else f"cve_{text}_{hour}"
        asset = f"{text}_delta_CVEs_at_{hour}.zip"
        if load(f"{base}/{tag}/{asset}", asset, {"day": text, "hour": hour}):
            return


def _deltas(load: _Load, base: str, checkpoint: dict[str, str], now: datetime) -> None:
    """Load each day's newest delta not yet loaded, from the checkpoint's day to today."""
    day = date.fromisoformat(checkpoint["day"])
    while day <= now.date():
        reached = checkpoint.get("hour") if checkpoint.get("day") == day.isoformat() else None
        if reached != END_OF_DAY:
            _day_delta(load, base, day, reached, now)
        day += timedelta(days=1)


def sync_cvelist(
    store: _Store,
    upstream: str = DEFAULT_CVELIST_URL,
    *,
    now: datetime | None = None,
    on_archive: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> CveSyncReport:
    """Bring the store up to the newest archives of `upstream` (see the module docstring)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    base = upstream.rstrip("/")
    report = CveSyncReport()
    checkpoint = _checkpoint(store.get_meta(CHECKPOINT))

    def load(url: str, asset: str, reached: dict[str, str]) -> bool:
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / asset
            if not download(url, target, MAX_ARCHIVE_BYTES):
                return False
            if on_archive is not None:
                on_archive(asset)
            meta: Mapping[str, str] = {CHECKPOINT: json.dumps(reached, sort_keys=True)}
            with Cve5Importer(store, on_problem=on_problem, meta=meta) as importer:
                importer.import_path(target)
            _merge(report.imported, importer.report)
            if importer.report.failed_files:
                raise ClientError(
                    f"GET {url}: not a usable archive ({'; '.join(importer.report.problems)})"
                )
        report.archives.append(asset)
        checkpoint.clear()
        checkpoint.update(reached)
        return True

    if not checkpoint:
        _baseline(load, base, now)
    _deltas(load, base, checkpoint, now)
    report.checkpoint = dict(checkpoint)
    return report
