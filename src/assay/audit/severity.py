"""Which rating gives a vulnerability its severity: one order, for every page and output.

Pure. A vulnerability may be rated by NVD's analysts (NVD's `Primary` ratings), by the CNA
that published the CVE (in the CVE record, and copied by NVD as a `Secondary` rating), by
an ADP (CISA's Vulnrichment), and by OSV records (a CVSS vector in `severity[]`, or a word
in `database_specific.severity` as GitHub's advisories give it). `choose_severity` takes
the first, in this order:

1. NVD's own rating, CVSS 4.0, then 3.1, then 3.0;
2. the CNA's rating (NVD's `Secondary` entries, or the CVE record's CNA container);
3. an ADP's rating (CISA-ADP);
4. an OSV record's CVSS vector (`severity[]`, then `affected[].severity[]`);
5. an OSV record's severity word (`database_specific.severity`, ...);
6. a CVSS 2.0 rating, in the same order of sources (records from before 2016).

Within one of them, the order given. The scan (`assay scan`, `/api/scan`, SARIF, VDR) and
the CVE page both read severity through this module, so they agree (CVE-2025-4565: NVD
rates it 5.3 MEDIUM under 3.1, the CNA 8.2 HIGH under 4.0; NVD's own rating comes first).
docs/scan.md ("Severity") says the same for users.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from assay.audit.model import Cvss, Vulnerability, list_of, string_of

__all__ = [
    "CISA_ADP_ORG_ID",
    "NVD_METRICS",
    "RATING_SOURCES",
    "Rating",
    "choose_severity",
    "cvss3_base_score",
    "nvd_rating",
    "nvd_ratings",
    "severity_of_score",
    "severity_word",
    "with_rating",
]

RATING_SOURCES: Final = ("nvd", "cna", "adp", "osv", "osv-word")
"""Who rates, in the order `choose_severity` prefers them."""
CISA_ADP_ORG_ID: Final = "134c704f-9b21-4f2e-91b3-4a467353bcc0"
"""The source identifier NVD and CVE records give CISA's ADP container."""
_VERSIONS: Final = ("4.0", "3.1", "3.0")
NVD_METRICS: Final = (
    ("cvssMetricV40", "4.0"),
    ("cvssMetricV31", "3.1"),
    ("cvssMetricV30", "3.0"),
    ("cvssMetricV2", "2.0"),
)
"""An NVD record's `metrics` keys and their CVSS versions."""
_WORDS: Final = {
    "NONE": "NONE",
    "LOW": "LOW",
    "MODERATE": "MEDIUM",
    "MEDIUM": "MEDIUM",
    "HIGH": "HIGH",
    "IMPORTANT": "HIGH",
    "CRITICAL": "CRITICAL",
}


@dataclass(frozen=True, slots=True)
class Rating:
    """One rating of a vulnerability, and who gave it."""

    source: str
    """One of `RATING_SOURCES`."""
    severity: str | None
    """NONE, LOW, MEDIUM, HIGH or CRITICAL."""
    cvss: Cvss | None = None
    rater: str = ""
    """Who rated it, as the record names them: NVD's `source` (an e-mail or an org UUID),
    a CNA's short name."""

    @property
    def rank(self) -> tuple[int, int, int]:
        version = self.cvss.version if self.cvss is not None else None
        legacy = version == "2.0"
        order = _VERSIONS.index(version) if version in _VERSIONS else len(_VERSIONS)
        return (int(legacy), RATING_SOURCES.index(self.source), order)


def choose_severity(ratings: Iterable[Rating]) -> Rating | None:
    """The rating every output shows (the module docstring's order), the first given on a
    tie; `None` when none of `ratings` gives a severity or a CVSS score."""
    usable = (
        r
        for r in ratings
        if (r.severity is not None or r.cvss is not None) and r.source in RATING_SOURCES
    )
    return min(usable, key=lambda rating: rating.rank, default=None)


def with_rating(finding: Vulnerability, rating: Rating | None) -> Vulnerability:
    """`finding` with `rating`'s severity, CVSS and source (none of them when unrated)."""
    if rating is None:
        return replace(finding, severity=None, cvss=None, rated_by=None)
    return replace(finding, severity=rating.severity, cvss=rating.cvss, rated_by=rating.source)


_BANDS: Final[tuple[tuple[float, str], ...]] = (
    (4.0, "LOW"),
    (7.0, "MEDIUM"),
    (9.0, "HIGH"),
    (math.inf, "CRITICAL"),
)
"""CVSS 3.x and 4.0's ratings: each up to (below) its bound; 0 is NONE."""
_V2_BANDS: Final[tuple[tuple[float, str], ...]] = (
    (4.0, "LOW"),
    (7.0, "MEDIUM"),
    (math.inf, "HIGH"),
)
"""CVSS 2.0's ratings (it has no NONE or CRITICAL)."""


def severity_of_score(score: float, version: str = "3.1") -> str:
    """CVSS's qualitative rating of a base score (2.0 has no NONE or CRITICAL)."""
    if version == "2.0":
        bands = _V2_BANDS
    elif score == 0:
        return "NONE"
    else:
        bands = _BANDS
    return next((level for below, level in bands if score < below), bands[-1][1])


def severity_word(text: object) -> str | None:
    """A severity word as a rating's severity (GitHub's MODERATE is MEDIUM)."""
    return _WORDS.get(text.strip().upper()) if isinstance(text, str) else None


def nvd_ratings(record: Mapping[str, Any]) -> list[Rating]:
    """The ratings of an NVD API 2.0 `cve` object: `Primary` ones are NVD's, `Secondary`
    ones the CNA's (or CISA-ADP's, by its org id)."""
    metrics = record.get("metrics")
    found: list[Rating] = []
    if not isinstance(metrics, Mapping):
        return found
    for key, version in NVD_METRICS:
        entries = metrics.get(key)
        for entry in list_of(entries):
            rating = _nvd_metric_rating(entry, version)
            if rating is not None:
                found.append(rating)
    return found


def _nvd_metric_rating(entry: object, version: str) -> Rating | None:
    """One entry of a `metrics` list as a rating; `None` when it has no score and vector."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("cvssData"), Mapping):
        return None
    data = entry["cvssData"]
    score, vector = data.get("baseScore"), data.get("vectorString")
    if not isinstance(score, int | float) or not isinstance(vector, str):
        return None
    source = string_of(entry.get("source")) or ""
    severity = data.get("baseSeverity") or entry.get("baseSeverity")
    return nvd_rating(
        entry.get("type"),
        str(source),
        version=version,
        score=float(score),
        vector=vector,
        severity=string_of(severity),
    )


def nvd_rating(
    kind: object, source: str, *, version: str, score: float, vector: str, severity: str | None
) -> Rating:
    """One rating of an NVD record's `metrics` (`kind`: its `type`, Primary or Secondary)."""
    origin = "nvd" if kind == "Primary" else "adp" if source == CISA_ADP_ORG_ID else "cna"
    level = severity.upper() if severity else severity_of_score(score, version)
    return Rating(origin, level, Cvss(version, score, vector), source)


_AV: Final = {"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}
_AC: Final = {"L": 0.77, "H": 0.44}
_UI: Final = {"N": 0.85, "R": 0.62}
_CIA: Final = {"H": 0.56, "L": 0.22, "N": 0.0}
_PR: Final = {("N", False): 0.85, ("L", False): 0.62, ("H", False): 0.27,
              ("N", True): 0.85, ("L", True): 0.68, ("H", True): 0.5}  # fmt: skip


def _round_up(value: float) -> float:
    # CVSS v3.1's Roundup: the smallest one-decimal number at or above `value`, computed
    # on integers so that floating point never rounds 4.0000001 up to 4.1.
    whole = round(value * 100_000)
    if whole % 10_000 == 0:
        return whole / 100_000.0
    return (math.floor(whole / 10_000) + 1) / 10.0


def _cvss3_metrics(vector: str) -> dict[str, str] | None:
    """A CVSS v3.0/v3.1 vector's metrics by name (the last of a repeated one); None when
    it is not such a vector."""
    parts = vector.strip().split("/")
    if parts[0] not in ("CVSS:3.0", "CVSS:3.1"):  # (split always gives a first part)
        return None
    return {name: value for name, _, value in (part.partition(":") for part in parts[1:])}


def cvss3_base_score(vector: str) -> float | None:
    """The base score of a CVSS v3.0/v3.1 vector (FIRST's specification, section 7);
    `None` when `vector` is not one."""
    metrics = _cvss3_metrics(vector)
    if metrics is None:
        return None
    try:
        changed = metrics["S"] == "C"
        if metrics["S"] not in ("U", "C"):
            return None
        base = 1 - (1 - _CIA[metrics["C"]]) * (1 - _CIA[metrics["I"]]) * (1 - _CIA[metrics["A"]])
        exploitability = (
            8.22
            * _AV[metrics["AV"]]
            * _AC[metrics["AC"]]
            * _PR[(metrics["PR"], changed)]
            * _UI[metrics["UI"]]
        )
    except KeyError:
        return None
    impact = 7.52 * (base - 0.029) - 3.25 * (base - 0.02) ** 15 if changed else 6.42 * base
    if impact <= 0:
        return 0.0
    total = 1.08 * (impact + exploitability) if changed else impact + exploitability
    return _round_up(min(total, 10.0))
