"""Which CVSS rating gives a vulnerability its severity: one order, for every output.

Pure. A CVE may be rated by NVD (its own, `Primary`, ratings), by the CNA that published
it (in the CVE record, and copied by NVD as a `Secondary` rating), by an ADP (CISA's
Vulnrichment), and by OSV advisories. `choose_severity` takes the first, in this order:

1. NVD's primary rating, CVSS 4.0, then 3.1, then 3.0;
2. the CNA's rating (in NVD's record, or in the CVE 5 record), same versions;
3. an ADP's rating (CISA-ADP), same versions;
4. an OSV advisory's rating;
5. a CVSS 2.0 rating, in the same order of sources (records from before 2016).

The scan (`assay scan`, `/api/scan`, SARIF, VDR) and the CVE page both read severity
through this module, so they agree (CVE-2025-4565: NVD rates it 5.3 MEDIUM under 3.1, the
CNA 8.2 HIGH under 4.0; NVD's own rating comes first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CISA_ADP_ORG_ID",
    "ORIGINS",
    "Rating",
    "choose_severity",
    "nvd_rating",
    "nvd_ratings",
    "severity_of_score",
]

ORIGINS: Final = ("nvd", "cna", "adp", "osv")
"""Where a rating was published, first preferred."""
CISA_ADP_ORG_ID: Final = "134c704f-9b21-4f2e-91b3-4a467353bcc0"
_VERSIONS: Final = ("4.0", "3.1", "3.0")
_NVD_METRICS: Final = (
    ("cvssMetricV40", "4.0"),
    ("cvssMetricV31", "3.1"),
    ("cvssMetricV30", "3.0"),
    ("cvssMetricV2", "2.0"),
)


@dataclass(frozen=True, slots=True)
class Rating:
    """One CVSS rating of a vulnerability, and where it comes from."""

    origin: str
    """One of `ORIGINS`."""
    version: str
    """`4.0`, `3.1`, `3.0` or `2.0`."""
    base_score: float
    severity: str | None
    """As the rating gives it (upper case), else from the score (`severity_of_score`)."""
    vector: str
    source: str = ""
    """Who rated it: NVD's `source` (an e-mail or an org UUID), a CNA's short name."""

    @property
    def rank(self) -> tuple[int, int, int]:
        legacy = self.version not in _VERSIONS
        version = _VERSIONS.index(self.version) if not legacy else len(_VERSIONS)
        return (int(legacy), ORIGINS.index(self.origin), version)


def severity_of_score(score: float, version: str) -> str:
    """CVSS's qualitative rating of a base score (2.0 has no NONE or CRITICAL)."""
    if version == "2.0":
        return "LOW" if score < 4.0 else "MEDIUM" if score < 7.0 else "HIGH"
    if score == 0:
        return "NONE"
    if score < 4.0:
        return "LOW"
    if score < 7.0:
        return "MEDIUM"
    return "HIGH" if score < 9.0 else "CRITICAL"


def choose_severity(ratings: Iterable[Rating]) -> Rating | None:
    """The rating that gives the severity (see the module docstring), or None."""
    return min(ratings, key=lambda rating: rating.rank, default=None)


def nvd_ratings(record: Mapping[str, Any]) -> list[Rating]:
    """The ratings of an NVD API 2.0 `cve` object: `Primary` ones are NVD's, `Secondary`
    ones the CNA's (or CISA-ADP's, by its org id)."""
    metrics = record.get("metrics")
    found: list[Rating] = []
    if not isinstance(metrics, Mapping):
        return found
    for key, version in _NVD_METRICS:
        entries = metrics.get(key)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("cvssData"), Mapping):
                continue
            data = entry["cvssData"]
            score, vector = data.get("baseScore"), data.get("vectorString")
            if not isinstance(score, int | float) or not isinstance(vector, str):
                continue
            source = entry.get("source") if isinstance(entry.get("source"), str) else ""
            severity = data.get("baseSeverity") or entry.get("baseSeverity")
            found.append(
                nvd_rating(
                    entry.get("type"),
                    str(source),
                    version=version,
                    score=float(score),
                    vector=vector,
                    severity=severity if isinstance(severity, str) else None,
                )
            )
    return found


def nvd_rating(
    kind: object, source: str, *, version: str, score: float, vector: str, severity: str | None
) -> Rating:
    """One rating of an NVD record's `metrics` (`kind`: its `type`, Primary or Secondary)."""
    origin = "nvd" if kind == "Primary" else "adp" if source == CISA_ADP_ORG_ID else "cna"
    level = severity.upper() if severity else severity_of_score(score, version)
    return Rating(origin, version, score, level, vector, source)
