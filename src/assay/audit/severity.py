"""One order for a finding's severity, whatever sources rate it (pure).

A vulnerability may be rated by NVD's analysts, by the CNA that published the CVE, by an
ADP (CISA's Vulnrichment), and by OSV records (a CVSS vector in `severity[]`, or a word
in `database_specific.severity` as GitHub's advisories give it). Every page and output
takes the same rating, the first of:

1. NVD's own (`Primary`) CVSS;
2. the CNA's CVSS (NVD's `Secondary` entries, or the CVE record's CNA container);
3. an ADP's CVSS (CISA-ADP);
4. an OSV record's CVSS vector (`severity[]`, then `affected[].severity[]`);
5. an OSV record's severity word (`database_specific.severity`,
   `affected[].ecosystem_specific.severity`, `affected[].database_specific.severity`).

Within one of them, the newest CVSS version first (4.0, 3.1, 3.0, 2.0), then the order
given. docs/scan.md ("Severity") says the same for users.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from assay.audit.model import Cvss

__all__ = [
    "CISA_ADP",
    "RATING_SOURCES",
    "Rating",
    "choose_severity",
    "cvss3_base_score",
    "nvd_rater",
    "severity_of_score",
    "severity_word",
]

RATING_SOURCES: Final = ("nvd", "cna", "adp", "osv", "osv-word")
"""Who rates, in the order `choose_severity` prefers them."""
CISA_ADP: Final = "134c704f-9b21-4f2e-91b3-4a467353bcc0"
"""The source identifier NVD and CVE records give CISA's ADP container."""
_VERSION_ORDER: Final = {"4.0": 0, "3.1": 1, "3.0": 2, "2.0": 3}
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
    source: str
    """One of `RATING_SOURCES`."""
    severity: str | None
    """NONE, LOW, MEDIUM, HIGH or CRITICAL."""
    cvss: Cvss | None = None


def choose_severity(ratings: Iterable[Rating]) -> Rating | None:
    """The rating every output shows (the module docstring's order); `None` when none
    of `ratings` gives a severity or a CVSS score."""
    best: tuple[int, int, int] | None = None
    chosen: Rating | None = None
    for position, rating in enumerate(ratings):
        if (rating.severity is None and rating.cvss is None) or rating.source not in RATING_SOURCES:
            continue
        version = _VERSION_ORDER.get(rating.cvss.version, 9) if rating.cvss else 10
        key = (RATING_SOURCES.index(rating.source), version, position)
        if best is None or key < best:
            best, chosen = key, rating
    return chosen


def nvd_rater(entry_type: object, source: object) -> str:
    """Who rated an entry of an NVD record's `metrics`: NVD itself (`Primary`), CISA's
    ADP, or else the CNA."""
    if entry_type == "Primary":
        return "nvd"
    return "adp" if source == CISA_ADP else "cna"


def severity_word(text: object) -> str | None:
    """A severity word as a rating's severity (GitHub's MODERATE is MEDIUM)."""
    return _WORDS.get(text.strip().upper()) if isinstance(text, str) else None


def severity_of_score(score: float) -> str:
    """CVSS v3/v4 qualitative rating of a base score."""
    if score == 0:
        return "NONE"
    if score < 4.0:
        return "LOW"
    if score < 7.0:
        return "MEDIUM"
    if score < 9.0:
        return "HIGH"
    return "CRITICAL"


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


def cvss3_base_score(vector: str) -> float | None:
    """The base score of a CVSS v3.0/v3.1 vector (FIRST's specification, section 7);
    `None` when `vector` is not one."""
    parts = vector.strip().split("/")
    if not parts or parts[0] not in ("CVSS:3.0", "CVSS:3.1"):
        return None
    metrics: dict[str, str] = {}
    for part in parts[1:]:
        name, _, value = part.partition(":")
        metrics[name] = value
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
