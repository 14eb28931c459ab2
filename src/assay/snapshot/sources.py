"""The members of the sources a store holds beside NVD's: OSV, CVE 5 (with CISA's ADP
container inside each record), KEV and EPSS.

    osv/osv.jsonl            an OSV record per line, as `/v1/vulns/{id}` serves it
    cve5/cve.jsonl           a CVE JSON 5 record per line (compact)
    cisa/kev.jsonl           a KEV entry per line, as CISA's catalogue lists it
    cisa/kev-removed.jsonl   {"cveID"} of each entry CISA took out (deltas only)
    first/epss.jsonl         {"cve", "epss", "percentile", "date", "modelVersion"}

Records are read with the store's change cursor of these tables (`source_changes`: every
row, or those last written after a generation) and written back through the store's
own writes with the same rules as an import (an older record never replaces a newer one),
each record checked by the reader its source's import uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Final, Protocol, cast

import orjson

from assay.cve5.epss import EpssScore, EpssScores
from assay.cve5.kev import KevEntry, entry_from_value
from assay.cve5.record import CveRecord
from assay.cve5.record import read_record as read_cve5
from assay.errors import InputError
from assay.nvd.storage import UpsertCounts
from assay.osv.record import OsvRecord
from assay.osv.record import read_record as read_osv
from assay.snapshot.format import SnapshotError

PAGE: Final = 5000
"""Rows read per call of the change cursor, and records written per batch."""


class SourceStore(Protocol):
    """What a snapshot reads and writes of these sources (every backend's store)."""

    def source_changes(
        self, table: str, since: int | None, after: str, limit: int
    ) -> list[tuple[Any, ...]]: ...

    def upsert_osv(
        self, batch: Sequence[OsvRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts: ...

    def upsert_cve5(
        self, batch: Sequence[CveRecord], *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts: ...

    def change_kev(
        self,
        entries: Sequence[KevEntry],
        removed: Sequence[str],
        *,
        meta: Mapping[str, str] | None = None,
    ) -> tuple[UpsertCounts, int]: ...

    def upsert_epss(
        self, scores: EpssScores, *, meta: Mapping[str, str] | None = None
    ) -> UpsertCounts: ...


Encoder = Callable[[tuple[Any, ...]], bytes | None]
"""A change row -> its line, or None when the row belongs to no line of this member."""
Applier = Callable[[SourceStore, Iterator[bytes], str], UpsertCounts]
"""(store, the member's lines, where) -> what the writes counted."""


@dataclass(frozen=True, slots=True)
class SourceKind:
    name: str
    member: str
    table: str
    encode: Encoder
    apply_lines: Applier

    def records(self, store: object, since: int | None) -> Iterator[bytes]:
        """Every line of this member: all rows, or those written after `since`."""
        source = cast(SourceStore, store)
        after = ""
        while True:
            rows = source.source_changes(self.table, since, after, PAGE)
            for row in rows:
                line = self.encode(row)
                if line is not None:
                    yield line
            if len(rows) < PAGE:
                return
            after = str(rows[-1][0])

    def apply(self, store: object, lines: Iterator[bytes], where: str) -> UpsertCounts:
        """Write the member's records (the caller holds the store's transaction)."""
        try:
            return self.apply_lines(cast(SourceStore, store), lines, where)
        except (InputError, ValueError) as error:
            # An ingest error names the record (its JSON path); nothing is applied.
            raise SnapshotError(
                where, f"a record was refused, so nothing was applied: {error}"
            ) from None


def _compact(raw: bytes) -> bytes:
    """A record as one line (CVE 5 files are kept as published, often indented)."""
    return orjson.dumps(orjson.loads(raw)) if b"\n" in raw or b"\r" in raw else raw


def _record_line(row: tuple[Any, ...]) -> bytes | None:
    return None if row[1] is None else _compact(bytes(row[1]))


def _kev_removed_line(row: tuple[Any, ...]) -> bytes | None:
    return orjson.dumps({"cveID": str(row[0])}) if row[1] is None else None


def _epss_line(row: tuple[Any, ...]) -> bytes | None:
    if row[1] is None:
        return None
    return orjson.dumps(
        {
            "cve": str(row[0]),
            "epss": float(row[1]),
            "percentile": float(row[2]),
            "date": str(row[3]),
            "modelVersion": str(row[4]),
        }
    )


def _numbered(lines: Iterator[bytes], where: str) -> Iterator[tuple[bytes, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield line.rstrip(b"\r\n"), f"{where}: line {number}"


def _batched(items: Iterator[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= PAGE:
            yield batch
            batch = []
    if batch:
        yield batch


def _upserting(read: Callable[[bytes, str], Any], upsert: str) -> Applier:
    """An applier that reads each line with `read` and writes batches with the store's
    method `upsert`."""

    def apply(store: SourceStore, lines: Iterator[bytes], where: str) -> UpsertCounts:
        counts = UpsertCounts()
        write = getattr(store, upsert)
        for batch in _batched(read(line, at) for line, at in _numbered(lines, where)):
            counts += write(batch)
        return counts

    return apply


def _json_object(line: bytes, where: str) -> dict[str, Any]:
    from assay.snapshot.format import strict_json

    value = strict_json(line, where)
    if not isinstance(value, dict):
        raise SnapshotError(where, "expected a JSON object")
    return value


def _apply_kev(store: SourceStore, lines: Iterator[bytes], where: str) -> UpsertCounts:
    entries = [entry_from_value(_json_object(line, at), at) for line, at in _numbered(lines, where)]
    counts, _ = store.change_kev(entries, [])
    return counts


def _apply_kev_removed(store: SourceStore, lines: Iterator[bytes], where: str) -> UpsertCounts:
    removed = []
    for line, at in _numbered(lines, where):
        cve_id = _json_object(line, at).get("cveID")
        if not isinstance(cve_id, str):
            raise SnapshotError(f"{at}: $.cveID", "expected a CVE id")
        removed.append(cve_id)
    _, gone = store.change_kev([], removed)
    return UpsertCounts(updated=gone)


def _epss_row(line: bytes, where: str) -> tuple[str, str, EpssScore]:
    value = _json_object(line, where)
    cve, score, percentile = value.get("cve"), value.get("epss"), value.get("percentile")
    day, model = value.get("date"), value.get("modelVersion")
    if not isinstance(cve, str) or not isinstance(day, str) or not isinstance(model, str):
        raise SnapshotError(where, "expected cve, date and modelVersion as strings")
    numbers = (score, percentile)
    if not all(isinstance(n, float | int) and not isinstance(n, bool) for n in numbers):
        raise SnapshotError(where, "expected epss and percentile as numbers")
    return day, model, EpssScore(cve, float(cast(float, score)), float(cast(float, percentile)))


def _apply_epss(store: SourceStore, lines: Iterator[bytes], where: str) -> UpsertCounts:
    counts = UpsertCounts()
    rows = sorted((_epss_row(line, at) for line, at in _numbered(lines, where)), key=_day_model)
    for (day, model), group in groupby(rows, key=_day_model):
        counts += store.upsert_epss(EpssScores(model, day, tuple(row[2] for row in group)))
    return counts


def _day_model(row: tuple[str, str, EpssScore]) -> tuple[str, str]:
    return row[0], row[1]


SOURCE_KINDS: Final = (
    SourceKind("osv", "osv/osv.jsonl", "osv", _record_line, _upserting(read_osv, "upsert_osv")),
    SourceKind(
        "cve5", "cve5/cve.jsonl", "cve5", _record_line, _upserting(read_cve5, "upsert_cve5")
    ),
    SourceKind("kev", "cisa/kev.jsonl", "kev", _record_line, _apply_kev),
    SourceKind(
        "kev-removed", "cisa/kev-removed.jsonl", "kev", _kev_removed_line, _apply_kev_removed
    ),
    SourceKind("epss", "first/epss.jsonl", "epss", _epss_line, _apply_epss),
)
SOURCE_BY_MEMBER: Final = {kind.member: kind for kind in SOURCE_KINDS}
