"""A labelled corpus of (package, version, record) from real OSV records, and assay's
precision and recall on it, per ecosystem.

For every SEMVER or ECOSYSTEM range of a PyPI, Go or crates.io record, the corpus holds
versions on both sides of every edge: introduced - 1, introduced, fixed - 1, fixed,
last_affected, last_affected + 1 (a release's neighbours: its last number minus or plus
one, the previous minor's `.99` below an `x.y.0`), each labelled affected or not by an
oracle written apart from `assay.osv` (its own SemVer precedence, packaging for PEP 440,
ranges as intervals between consecutive events). assay's answer for each is
`assay.osv.evaluate.record_hit`, the rule `assay scan` and `/v1/query` use.

    measure(records) -> {ecosystem: Score}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from assay.osv.evaluate import record_hit
from assay.osv.record import OsvRecord

ECOSYSTEMS = ("PyPI", "Go", "crates.io")
_SEMVER = re.compile(
    r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?"
)


def _semver_key(text: str) -> tuple[Any, ...] | None:
    """SemVer 2.0 precedence (section 11) as a sortable key; None when not SemVer."""
    found = _SEMVER.fullmatch(text)
    if found is None:
        return None
    major, minor, patch, pre = found.groups()
    if pre is None:
        pre_key: tuple[Any, ...] = ((1,),)  # a release sorts after its pre-releases
    else:
        parts = []
        for part in pre.split("."):
            parts.append((0, int(part), "") if part.isdigit() else (1, 0, part))
        pre_key = ((0,), *parts)
    return (int(major), int(minor), int(patch), pre_key)


def _pep440_key(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _order(ecosystem: str, range_type: str) -> Callable[[str], Any]:
    return _pep440_key if ecosystem == "PyPI" and range_type == "ECOSYSTEM" else _semver_key


def oracle(record_affected: dict[str, Any], ecosystem: str, version: str) -> bool:
    """Whether `version` is affected by one `affected[]` entry (as JSON), by intervals."""
    if version in (record_affected.get("versions") or ()):
        return True
    for entry in record_affected.get("ranges") or ():
        if entry.get("type") not in ("SEMVER", "ECOSYSTEM"):
            continue
        key = _order(ecosystem, entry["type"])
        here = key(version)
        if here is None:
            continue
        edges: list[tuple[Any, str]] = []
        limits = []
        for event in entry.get("events") or ():
            ((kind, value),) = event.items()
            if kind == "limit":
                limits.append(value)
                continue
            at = None if (kind == "introduced" and value == "0") else key(value)
            if at is None and not (kind == "introduced" and value == "0"):
                continue
            edges.append((at, kind))
        edges.sort(key=lambda e: (e[0] is not None, e[0] if e[0] is not None else 0))
        if limits and not any(key(v) is not None and here < key(v) for v in limits):
            continue
        start = None
        opened = False
        for at, kind in edges:
            if kind == "introduced":
                if not opened:
                    start, opened = at, True
                continue
            if not opened:
                continue
            low_ok = start is None or start <= here
            if kind == "fixed" and low_ok and here < at:
                return True
            if kind == "last_affected" and low_ok and here <= at:
                return True
            opened = False
        if opened and (start is None or start <= here):
            return True
    return False


def _neighbours(ecosystem: str, value: str) -> list[str]:
    if ecosystem == "PyPI":
        parsed = _pep440_key(value)
        if parsed is None or parsed.pre or parsed.dev or parsed.post or parsed.local:
            return []
        release = list(parsed.release)
    else:
        found = _SEMVER.fullmatch(value)
        if found is None or found.group(4):
            return []
        release = [int(found.group(i)) for i in (1, 2, 3)]
    around = []
    above = [*release[:-1], release[-1] + 1]
    around.append(".".join(map(str, above)))
    if release[-1] > 0:
        around.append(".".join(map(str, [*release[:-1], release[-1] - 1])))
    elif len(release) > 1 and release[-2] > 0:
        around.append(".".join(map(str, [*release[:-2], release[-2] - 1, 99])))
    return around


@dataclass(frozen=True, slots=True)
class Case:
    ecosystem: str
    name: str
    version: str
    record: OsvRecord
    affected: bool


@dataclass(slots=True)
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def cases(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def corpus(records: Iterable[tuple[OsvRecord, dict[str, Any]]]) -> list[Case]:
    """The labelled cases of the records (each given typed and as JSON)."""
    cases: list[Case] = []
    for record, document in records:
        if record.withdrawn is not None:
            continue
        for entry in document.get("affected") or ():
            package = entry.get("package") or {}
            ecosystem, name = package.get("ecosystem"), package.get("name")
            if ecosystem not in ECOSYSTEMS or not name:
                continue
            versions: dict[str, None] = {}
            for entry_range in entry.get("ranges") or ():
                if entry_range.get("type") == "GIT":
                    continue
                for event in entry_range.get("events") or ():
                    for value in event.values():
                        if value in ("0", "*"):
                            continue
                        versions[value] = None
                        versions.update(dict.fromkeys(_neighbours(ecosystem, value)))
            # A version is affected when any entry naming the package says so (the
            # schema's IsVulnerable), as some records split one package's ranges.
            same = [
                e
                for e in document.get("affected") or ()
                if (e.get("package") or {}).get("ecosystem") == ecosystem
                and (e.get("package") or {}).get("name") == name
            ]
            for version in versions:
                label = any(oracle(e, ecosystem, version) for e in same)
                cases.append(Case(ecosystem, name, version, record, label))
    return cases


def measure(cases: Iterable[Case]) -> dict[str, Score]:
    """assay's precision and recall on the cases, per ecosystem."""
    scores: dict[str, Score] = {}
    for case in cases:
        score = scores.setdefault(case.ecosystem, Score())
        found = record_hit(case.record, case.ecosystem, case.name, case.version) is not None
        if found and case.affected:
            score.tp += 1
        elif found:
            score.fp += 1
            score.misses.append(f"FP {case.record.id} {case.name}@{case.version}")
        elif case.affected:
            score.fn += 1
            score.misses.append(f"FN {case.record.id} {case.name}@{case.version}")
        else:
            score.tn += 1
    return scores
