"""What `assay nvd sync` keeps in the store per operation, read and written here only.

Two forms, each under its own meta key (`Operation.checkpoint_key`, `.cursor_key`):

* `Checkpoint` (`sync.<operation>`): the mirror of an upstream read by date windows
  (NVD itself, or another assay with `--by-date`). `docs/sync.md` describes its phases.
* `CursorState` (`sync.<operation>.generation`): the mirror of another assay read by its
  change cursor (`sinceGeneration`).

`sync_status(get_meta, operation)` sums either up for the pages, `/metrics` and
`assay scan`'s freshness check. Pure: the store is reached only through `get_meta`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, Literal

import orjson

from assay.errors import InputError
from assay.nvd.dates import format_nvd_timestamp, parse_record_timestamp
from assay.nvd.operations import Operation, OperationName

__all__ = [
    "CHECKPOINT_VERSION",
    "Checkpoint",
    "CheckpointError",
    "CursorState",
    "Position",
    "SyncStatus",
    "Window",
    "same_upstream",
    "sync_status",
    "utc_text",
]

CHECKPOINT_VERSION: Final = 1
Window = tuple[datetime, datetime]


class CheckpointError(InputError):
    """A stored checkpoint cannot be read (written by a newer assay, or damaged)."""


def utc_text(moment: datetime) -> str:
    """A moment as stored: UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    return format_nvd_timestamp(moment) + "Z"


def same_upstream(a: str, b: str) -> bool:
    """Whether two upstream base URLs name the same service (trailing `/` ignored)."""
    return a.rstrip("/") == b.rstrip("/")


def _moment(value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise CheckpointError(where, f"expected a UTC timestamp, found {value!r}")
    try:
        return parse_record_timestamp(value)
    except InputError:
        raise CheckpointError(where, f"expected a UTC timestamp, found {value!r}") from None


def _count(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointError(where, f"expected an integer >= 0, found {value!r}")
    return value


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise CheckpointError(
            where, f"expected a JSON object, found invalid JSON: {error}"
        ) from None
    if not isinstance(value, dict):
        raise CheckpointError(where, f"expected a JSON object, found {text[:80]!r}")
    return value


def _window(value: object, where: str) -> Window | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise CheckpointError(where, f"expected [start, end] or null, found {value!r}")
    return (_moment(value[0], f"{where}[0]"), _moment(value[1], f"{where}[1]"))


@dataclass(frozen=True, slots=True)
class Position:
    """Where the next page of a listing starts, and the `totalResults` last seen."""

    next_index: int = 0
    total: int | None = None

    @property
    def done(self) -> bool:
        """Whether the listing has been read to its end."""
        return self.total is not None and self.next_index >= self.total


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """An operation's mirror state, as committed to the store after each page."""

    upstream: str
    phase: Literal["full", "incremental"]
    since: datetime
    """Full load: when it started (upstream clock). Incremental: complete up to here."""
    window: Window | None = None
    """Incremental: the window being read, if one is under way."""
    next_index: int = 0
    """The `startIndex` of the next page of the full listing or of `window`."""
    total: int | None = None
    """The `totalResults` last seen for the listing under way."""

    @property
    def position(self) -> Position:
        """Where the listing under way resumes."""
        return Position(self.next_index, self.total)

    @property
    def finished(self) -> bool:
        """Whether no listing is under way (the last run read everything it meant to)."""
        return self.phase == "incremental" and self.window is None

    def at(self, position: Position) -> Checkpoint:
        """This checkpoint, moved to `position` in the same listing."""
        return replace(self, next_index=position.next_index, total=position.total)

    def to_json(self) -> str:
        """The stored form (JSON text, timestamps as UTC `...Z`)."""
        value: dict[str, Any] = {
            "version": CHECKPOINT_VERSION,
            "upstream": self.upstream,
            "phase": self.phase,
            "since": utc_text(self.since),
            "window": None if self.window is None else [utc_text(end) for end in self.window],
            "nextIndex": self.next_index,
            "total": self.total,
        }
        return orjson.dumps(value).decode()

    @classmethod
    def from_json(cls, text: str, where: str) -> Checkpoint:
        """Read a stored checkpoint; `where` names it in errors (the meta key)."""
        value = _json_object(text, where)
        version = value.get("version")
        if version != CHECKPOINT_VERSION:
            raise CheckpointError(
                f"{where}.version",
                f"expected checkpoint version {CHECKPOINT_VERSION}, found {version!r} "
                "(written by another assay version?)",
            )
        upstream = value.get("upstream")
        if not isinstance(upstream, str) or not upstream:
            raise CheckpointError(f"{where}.upstream", f"expected a URL, found {upstream!r}")
        phase = value.get("phase")
        if phase not in ("full", "incremental"):
            raise CheckpointError(
                f"{where}.phase", f"expected 'full' or 'incremental', found {phase!r}"
            )
        total = value.get("total")
        return cls(
            upstream=upstream,
            phase=phase,
            since=_moment(value.get("since"), f"{where}.since"),
            window=_window(value.get("window"), f"{where}.window"),
            next_index=_count(value.get("nextIndex"), f"{where}.nextIndex"),
            total=None if total is None else _count(total, f"{where}.total"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CursorState:
    """An operation mirrored from another assay by its change cursor.

    `since` is the upstream generation the last exact pass started at (None before the
    first), `reached` the upstream time of that pass; `passing` the pass under way:
    `{"start": generation, "next": startIndex, "total": totalResults | None}`."""

    upstream: str
    since: int | None = None
    reached: datetime | None = None
    passing: dict[str, Any] | None = None

    def to_json(self) -> str:
        value = {
            "upstream": self.upstream,
            "since": self.since,
            "pass": self.passing,
            "time": None if self.reached is None else utc_text(self.reached),
        }
        return orjson.dumps(value).decode()

    @classmethod
    def from_json(cls, text: str | None) -> CursorState | None:
        """The stored state, or None for anything not of its shape (a fresh pass)."""
        value = _loose_object(text)
        if value is None or not isinstance(value.get("upstream"), str):
            return None
        since = value.get("since")
        if since is not None and not _is_count(since):
            return None
        passing = value.get("pass")
        return cls(
            upstream=value["upstream"],
            since=since,
            reached=_loose_moment(value.get("time")),
            passing=passing if _is_pass(passing) else None,
        )


def _loose_object(text: str | None) -> dict[str, Any] | None:
    """`text` as a JSON object, or None for anything else."""
    try:
        value = orjson.loads(text) if text is not None else None
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _loose_moment(value: object) -> datetime | None:
    """A stored UTC timestamp, or None for anything else."""
    try:
        return None if value is None else _moment(value, "time")
    except CheckpointError:
        return None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_pass(value: object) -> bool:
    return (
        isinstance(value, dict)
        and _is_count(value.get("start"))
        and _is_count(value.get("next"))
        and (value.get("total") is None or _is_count(value.get("total")))
    )


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """How far the mirror of one operation got, whichever way it reads its upstream."""

    operation: OperationName
    upstream: str
    phase: Literal["full", "incremental", "cursor"]
    since: datetime | None
    """Full: when the load started. Incremental and cursor: complete up to this
    upstream time (None for a cursor pass that never finished)."""
    finished: bool
    """No listing or pass is under way: the last run read everything it meant to."""

    @property
    def complete_to(self) -> datetime | None:
        """The upstream time up to which the mirror holds everything (None: not yet)."""
        return None if self.phase == "full" else self.since


def sync_status(get_meta: Callable[[str], str | None], operation: Operation) -> SyncStatus | None:
    """The status of `operation`'s mirror from the store's meta values (None: never
    synced, or a checkpoint this version cannot read)."""
    text = get_meta(operation.checkpoint_key)
    if text:
        try:
            checkpoint = Checkpoint.from_json(text, operation.checkpoint_key)
        except CheckpointError:
            checkpoint = None
        if checkpoint is not None:
            return SyncStatus(
                operation.name,
                checkpoint.upstream,
                checkpoint.phase,
                checkpoint.since,
                checkpoint.finished,
            )
    cursor = CursorState.from_json(get_meta(operation.cursor_key))
    if cursor is None or (cursor.since is None and cursor.passing is None):
        return None
    return SyncStatus(
        operation.name, cursor.upstream, "cursor", cursor.reached, cursor.passing is None
    )
