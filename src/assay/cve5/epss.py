"""FIRST's EPSS daily scores (the CSV of epss.cyentia.com), read strictly (pure).

    #model_version:v2023.03.01,score_date:2025-02-20T00:00:00+0000
    cve,epss,percentile
    CVE-1999-0001,0.00383,0.73075

`read_scores(data, source)` takes the file as published, gzip-compressed or plain.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

from assay.cve5.record import CVE_ID
from assay.errors import IngestError

__all__ = ["MAX_EPSS_BYTES", "EpssError", "EpssScore", "EpssScores", "read_scores"]

MAX_EPSS_BYTES: Final = 256 * 1024 * 1024
"""Decompressed (the file is ~12 MB for ~300,000 CVEs)."""
_HEADER: Final = ("cve", "epss", "percentile")


class EpssError(IngestError):
    """The file, or one of its lines, is not FIRST's EPSS CSV."""


@dataclass(frozen=True, slots=True)
class EpssScore:
    cve_id: str
    score: float
    percentile: float


@dataclass(frozen=True, slots=True)
class EpssScores:
    model_version: str
    score_date: str
    """The day scored (`YYYY-MM-DD`)."""
    scores: tuple[EpssScore, ...]


def _decompressed(data: bytes, source: str) -> bytes:
    if data[:2] != b"\x1f\x8b":
        if len(data) > MAX_EPSS_BYTES:
            raise EpssError(source, "", f"expected at most {MAX_EPSS_BYTES} bytes, found more")
        return data
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, MAX_EPSS_BYTES + 1)
    except zlib.error as error:
        raise EpssError(source, "", f"expected gzip data: {error}") from None
    if len(out) > MAX_EPSS_BYTES:
        raise EpssError(source, "", f"expected at most {MAX_EPSS_BYTES} bytes once inflated")
    if not inflater.eof:
        raise EpssError(source, "", "expected a complete gzip stream, found it cut short")
    return out


def _fraction(text: str, source: str, where: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise EpssError(source, where, f"expected {name} as a number 0-1, found {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise EpssError(source, where, f"expected {name} as a number 0-1, found {text!r}")
    return value


def _lines(data: bytes, source: str) -> list[str]:
    text = _decompressed(data, source)
    try:
        return text.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise EpssError(source, "", f"expected UTF-8 text: {error}") from None


def _meta_line(line: str, source: str) -> tuple[str, str]:
    """The model version and the score date (as written) of the `#...` line."""
    meta = {
        key.strip(): value.strip()
        for key, _, value in (part.partition(":") for part in line[1:].split(","))
    }
    model, score_date = meta.get("model_version"), meta.get("score_date", "")
    if not model or len(score_date) < 10:
        raise EpssError(source, "line 1", f"expected model_version and score_date, found {line!r}")
    return model, score_date


def _model_and_date(lines: list[str], source: str) -> tuple[str, str]:
    """The first line's `#model_version:...,score_date:...`, and the header after it."""
    if not lines or not lines[0].startswith("#"):
        raise EpssError(
            source, "line 1", "expected '#model_version:...,score_date:...' (FIRST's EPSS CSV)"
        )
    model, score_date = _meta_line(lines[0], source)
    if len(lines) < 2 or tuple(c.strip() for c in lines[1].split(",")) != _HEADER:
        raise EpssError(source, "line 2", "expected the header 'cve,epss,percentile'")
    return model, score_date[:10]


def _score(line: str, source: str, where: str) -> EpssScore:
    fields = line.split(",")
    if len(fields) != 3:
        raise EpssError(source, where, f"expected cve,epss,percentile, found {line[:80]!r}")
    cve = fields[0].strip()
    if not CVE_ID.fullmatch(cve):
        raise EpssError(source, where, f"expected a CVE id, found {cve[:40]!r}")
    return EpssScore(
        cve,
        _fraction(fields[1], source, where, "epss"),
        _fraction(fields[2], source, where, "percentile"),
    )


def read_scores(data: bytes, source: str) -> EpssScores:
    """Every score of the file, or `EpssError` naming `source` and the line."""
    lines = _lines(data, source)
    model, score_date = _model_and_date(lines, source)
    scores = tuple(
        _score(line, source, f"line {number}")
        for number, line in enumerate(lines[2:], start=3)
        if line.strip()
    )
    return EpssScores(model, score_date, scores)
