"""What the store indexes about one match-criteria record: `match_facts(obj, where)`.

Pure. A match-criteria record (the value under `matchString`) is a `cpeMatch` criteria
with its version bounds, its dates and status, and `matches`: NVD's expansion of the
criteria into dictionary CPE names. The criteria is normalized exactly as the criteria of
CVE configurations are (`assay.nvd.cve_record.criteria_from_json`), and every expansion
name is parsed, so the CVE API's `cpeName` filter can use the expansion where it is stored.
The record itself is kept NVD-encoded, byte for byte as it came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.nvd import _fields as f
from assay.nvd.cve_record import Criteria, criteria_from_json

MAX_RECORD_BYTES = 16 * 1024 * 1024  # the widest real criteria expand to ~20,000 names
MAX_MATCHES = 200_000


@dataclass(frozen=True, slots=True)
class MatchName:
    """One entry of a criteria's `matches` list."""

    cpe_name_id: str  # upper-case UUID
    components: tuple[str, ...]  # the 11 normalized components of cpeName


@dataclass(frozen=True, slots=True)
class MatchFacts:
    match_criteria_id: str  # upper-case UUID
    criteria: Criteria
    created: str
    last_modified: str
    cpe_last_modified: str | None
    status: str
    names: tuple[MatchName, ...]
    record: bytes


def match_facts(value: Any, where: str = "$") -> MatchFacts:
    """Check one match-criteria object and derive what the store indexes."""
    obj = f.obj_at(value, where, "a match-criteria object")
    match_criteria_id = f.uuid(obj, "matchCriteriaId", where)
    criteria = criteria_from_json(obj, where)
    created = f.timestamp(obj, "created", where)
    last_modified = f.timestamp(obj, "lastModified", where)
    cpe_last_modified = f.optional(f.timestamp, obj, "cpeLastModified", where)
    status = f.string(obj, "status", where)
    names: list[MatchName] = []
    for index, entry in enumerate(f.bounded_array(obj, "matches", where, MAX_MATCHES, "names")):
        path = f"{where}.matches[{index}]"
        item = f.obj_at(entry, path, "an object with cpeName and cpeNameId")
        names.append(
            MatchName(f.uuid(item, "cpeNameId", path), f.cpe_name(item, "cpeName", path).components)
        )
    record = f.record_bytes(obj, where, MAX_RECORD_BYTES)
    return MatchFacts(
        match_criteria_id=match_criteria_id,
        criteria=criteria,
        created=created,
        last_modified=last_modified,
        cpe_last_modified=cpe_last_modified,
        status=status,
        names=tuple(names),
        record=record,
    )
