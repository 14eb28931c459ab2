"""A CVE 5 record's `affected[]` entries written as NVD configurations (pure).

`assay serve --enrich` adds them to the records NVD has not analysed, as
`assayConfigurations`: NVD's configuration shape (`nodes[].cpeMatch[]` with `criteria`,
`vulnerable` and `versionStart…`/`versionEnd…` bounds), each node naming where it comes
from (`source`: `cisa-adp`, or `cve5` for the CNA's and other ADPs' entries; `rule`: the
JSON path of the `affected[]` entry; without those two members a configuration is valid
under NVD's schema). Each criteria gets a `matchCriteriaId` of its own, a UUID derived
from the CVE, the rule and the criteria (never one of NVD's). An entry becomes a node when it names a product
as a CPE (`cpes`, or the CNA's vendor and product as CPE words); each `affected` version
becomes a criteria: a range keeps its edges (`version` → `versionStartIncluding` unless
open, `lessThan` → `versionEndExcluding`, `lessThanOrEqual` → `versionEndIncluding`), a
single version becomes the criteria's version; an entry with no versions whose
`defaultStatus` is `affected` is every version. Ranges with `changes` end at the first
change to `unaffected`. CISA-ADP's entries are used when there are any, the CNA's
otherwise (as `assay scan` does).
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Final

from assay.cve5.index import cpe_vendor_product
from assay.cve5.ranges import (
    OPEN_LOWER,
    UNORDERED_TYPES,
    bare_version,
    constraints_of,
    is_bound,
    lower_bound,
)
from assay.cve5.record import Affected, Container, CveRecord, VersionEntry

__all__ = ["CISA_ADP", "configurations"]

CISA_ADP: Final = "134c704f-9b21-4f2e-91b3-4a467353bcc0"
_WORD: Final = re.compile(r"[A-Za-z0-9._-]+")
_NAMESPACE: Final = uuid.UUID("5d0c5c1e-8f0a-4b7e-9a55-61737361792e")
"""The namespace of the criteria ids assay makes (`_criteria_id`)."""


def _names(affected: Affected) -> list[tuple[str, str, str]]:
    """(part, vendor, product) of each CPE the entry names: its `cpes`, else its vendor
    and product as CPE words."""
    found = _cpe_names(affected.cpes)
    if not found and affected.vendor and affected.product:
        found = _word_name(affected.vendor, affected.product)
    return list(dict.fromkeys(found))


def _cpe_names(cpes: tuple[str, ...]) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for cpe in cpes:
        pair = cpe_vendor_product(cpe)
        if pair is not None:
            part = cpe[8] if cpe.startswith("cpe:2.3:") and len(cpe) > 8 else "a"
            found.append((part, *pair))
    return found


def _word_name(vendor_text: str, product_text: str) -> list[tuple[str, str, str]]:
    """The CNA's vendor and product as an application's CPE words, if they are words."""
    vendor = "_".join(vendor_text.lower().split())
    product = "_".join(product_text.lower().split())
    if _WORD.fullmatch(vendor) and _WORD.fullmatch(product) and "n/a" not in (vendor, product):
        return [("a", vendor, product)]
    return []


def _criteria(name: tuple[str, str, str], version: str = "*") -> str:
    part, vendor, product = name
    return f"cpe:2.3:{part}:{vendor}:{product}:{version}:*:*:*:*:*:*:*"


_CONSTRAINT_KEYS: Final = {
    ">=": "versionStartIncluding",
    ">": "versionStartExcluding",
    "<": "versionEndExcluding",
    "<=": "versionEndIncluding",
}


def _single_bounds(entry: VersionEntry) -> dict[str, str] | None:
    """A single version (or constraints in its place) as criteria bounds."""
    constraints = constraints_of(entry.version)
    if constraints is None:
        version = bare_version(entry.version)
        return {"version": version} if _WORD.fullmatch(version) else None
    given = {_CONSTRAINT_KEYS[op]: bound for op, bound in constraints if op in _CONSTRAINT_KEYS}
    return given or None


def _lower_bound(entry: VersionEntry) -> dict[str, str]:
    """A range's start, unless it is open (`0`, `*`, ...)."""
    lower = lower_bound(entry.version)
    if lower is None or lower.lower() in OPEN_LOWER:
        return {}
    return {"versionStartIncluding": lower}


def _upper_bound(entry: VersionEntry) -> dict[str, str]:
    """A range's end: the first `unaffected` change, else `lessThan`, else `lessThanOrEqual`."""
    fixed = next((at for at, status in entry.changes if status == "unaffected"), None)
    if fixed is not None:
        return {"versionEndExcluding": bare_version(fixed)}
    ends = (
        ("versionEndExcluding", entry.less_than),
        ("versionEndIncluding", entry.less_than_or_equal),
    )
    return next(({key: bare_version(end)} for key, end in ends if is_bound(end)), {})


def _bounds(entry: VersionEntry) -> dict[str, str] | None:
    """The criteria bounds of one `affected` version entry, None when not expressible."""
    if entry.status != "affected" or (entry.version_type or "").lower() in UNORDERED_TYPES:
        return None
    if not entry.is_range:
        return _single_bounds(entry)
    return {**_lower_bound(entry), **_upper_bound(entry)}


def _criteria_id(cve_id: str, rule: str, match: dict[str, Any]) -> str:
    """A stable id in the `matchCriteriaId` form (an upper-case UUID), from what the
    criteria says and where it comes from: never one of NVD's."""
    text = "|".join([cve_id, rule, *(f"{k}={v}" for k, v in sorted(match.items()))])
    return str(uuid.uuid5(_NAMESPACE, text)).upper()


def _matches(name: tuple[str, str, str], affected: Affected) -> list[dict[str, Any]]:
    """The criteria of one named product: every version when the entry lists none and
    says `affected`, else one per expressible version entry."""
    if not affected.versions and affected.default_status == "affected":
        return [{"vulnerable": True, "criteria": _criteria(name)}]
    matches: list[dict[str, Any]] = []
    for entry in affected.versions:
        bounds = _bounds(entry)
        if bounds is None:
            continue
        version = bounds.pop("version", "*")
        match: dict[str, Any] = {"vulnerable": True, "criteria": _criteria(name, version)}
        match.update(bounds)
        if match not in matches:
            matches.append(match)
    return matches


def _node(cve_id: str, container: Container, affected: Affected) -> dict[str, Any] | None:
    matches = [match for name in _names(affected) for match in _matches(name, affected)]
    for match in matches:
        match["matchCriteriaId"] = _criteria_id(cve_id, affected.path, match)
    if not matches:
        return None
    source = "cisa-adp" if container.org_id == CISA_ADP else "cve5"
    return {
        "operator": "OR",
        "negate": False,
        "cpeMatch": matches,
        "source": source,
        "rule": affected.path,
    }


def configurations(record: CveRecord) -> list[dict[str, Any]]:
    """The record's `affected[]` entries as NVD configurations (see the module docstring):
    one configuration per node; empty when no entry names a product as a CPE."""
    for containers in (record.adp, (record.cna,)):
        nodes = [
            node
            for container in containers
            for affected in container.affected
            if (node := _node(record.cve_id, container, affected)) is not None
        ]
        if nodes:
            return [{"nodes": [node]} for node in nodes]
    return []
