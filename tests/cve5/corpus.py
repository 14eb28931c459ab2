"""A labelled corpus from the real CVE 5 records: components at versions on both sides of
every range edge, each labelled with what the range says (not with what assay computes).

For every `versions[]` range of an `affected[]` entry (CISA-ADP's CPEs; the CNA's, where
no ADP entry speaks of the same product):

    at `version` (the lower edge, when it is a version)   affected
    at `lessThan`                                         not affected
    at `lessThanOrEqual`                                  affected

A component is a CPE name (the entry's CPE vendor and product, else the CNA's vendor and
product) at that version; a case is (component, CVE, label). Precision and recall are
counted per case: a finding of the CVE for the component is a positive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.cve5.index import affected_keys, cpe_vendor_product
from assay.cve5.record import Affected, CveRecord, read_record

OPEN = {"", "0", "*", "-", "n/a", "unspecified", "all"}


@dataclass(frozen=True, slots=True)
class Case:
    source: str  # cisa-adp / cve5
    cve_id: str
    cpe: str
    version: str
    affected: bool


def _word(text: str) -> str:
    return "_".join(text.lower().split()).replace(":", "_")


def _names(affected: Affected) -> list[tuple[str, str]]:
    found = [vp for vp in map(cpe_vendor_product, affected.cpes) if vp is not None]
    if (
        not found
        and affected.vendor
        and affected.product
        and "n/a" not in (affected.vendor, affected.product)
    ):
        found = [(_word(affected.vendor), _word(affected.product))]
    return sorted(name for name in set(found) if all(_NAME.fullmatch(part) for part in name))


_NAME = re.compile(r"[a-z0-9._-]+")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~-]*")


def _plain(version: str | None) -> bool:
    """A version a component can have (not free text, a wildcard or a purl)."""
    return (
        bool(version)
        and version not in OPEN
        and bool(_VERSION.fullmatch(version or ""))
        and not (version or "").endswith(".x")
    )


def _cases(record: CveRecord, source: str, affected: Affected) -> Iterable[Case]:
    for name in _names(affected):
        cpe = f"cpe:2.3:a:{name[0]}:{name[1]}"
        for entry in affected.versions:
            if not entry.is_range or entry.changes or entry.status != "affected":
                continue
            if (entry.version_type or "").lower() in ("git", "original_commit_for_fix"):
                continue
            if _plain(entry.version):
                yield Case(source, record.cve_id, cpe, entry.version, True)
            if _plain(entry.less_than) and len(affected.versions) == 1:
                yield Case(
                    source,
                    record.cve_id,
                    cpe,
                    entry.less_than or "",
                    affected.default_status == "affected",
                )
            if _plain(entry.less_than_or_equal):
                yield Case(source, record.cve_id, cpe, entry.less_than_or_equal or "", True)


def corpus(paths: Iterable[Path]) -> list[Case]:
    """The cases of the records at `paths` (see the module docstring)."""
    cases: list[Case] = []
    for path in paths:
        record = read_record(path.read_bytes(), str(path))
        adp_keys = {key for c in record.adp for a in c.affected for key in affected_keys(a)}
        for container in record.adp:
            for affected in container.affected:
                cases.extend(_cases(record, "cisa-adp", affected))
        for affected in record.cna.affected:
            if not affected_keys(affected) & adp_keys:
                cases.extend(_cases(record, "cve5", affected))
    # A component at one version is one case per CVE; a version both edges of two ranges
    # of one CVE (an upper edge that is the next range's lower edge) says affected.
    merged: dict[tuple[str, str, str, str], Case] = {}
    for case in cases:
        key = (case.source, case.cve_id, case.cpe, case.version)
        known = merged.get(key)
        if known is None or (case.affected and not known.affected):
            merged[key] = case
    return sorted(merged.values(), key=lambda c: (c.source, c.cve_id, c.cpe, c.version))


def measure(cases: list[Case], found: set[tuple[str, str, str]]) -> dict[str, dict[str, float]]:
    """Precision and recall per source; `found`: (cpe, version, CVE) of each finding."""
    table: dict[str, dict[str, float]] = {}
    for source in sorted({c.source for c in cases}):
        mine = [c for c in cases if c.source == source]
        hit = [c for c in mine if (c.cpe, c.version, c.cve_id) in found]
        tp = sum(c.affected for c in hit)
        fp = len(hit) - tp
        fn = sum(c.affected for c in mine) - tp
        table[source] = {
            "cases": len(mine),
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
        }
    return table
