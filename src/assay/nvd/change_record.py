"""What the store indexes about one CVE change record: `change_facts(obj, where)`.

Pure. A change (the value under `change`) is keyed by `cveChangeId`; the history API
filters on `cveId`, `eventName` and `created`, and orders by `created`. Event names are
kept as they came (NVD adds new ones), and indexed in the compared form of
`assay.nvd.history_query.event_key`. The record itself is kept NVD-encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import InputError
from assay.nvd import _fields as f
from assay.nvd.cve_record import CVE_ID
from assay.nvd.history_query import event_key

MAX_RECORD_BYTES = 16 * 1024 * 1024  # a configuration rewrite can list thousands of CPEs
MAX_DETAILS = 100_000


@dataclass(frozen=True, slots=True)
class ChangeFacts:
    cve_change_id: str  # upper-case UUID
    cve_id: str
    event_key: str
    created: str
    record: bytes


def change_facts(value: Any, where: str = "$") -> ChangeFacts:
    """Check one change object and derive what the store indexes."""
    obj = f.obj_at(value, where, "a CVE change object")
    cve_id = f.string(obj, "cveId", where)
    if not CVE_ID.fullmatch(cve_id):
        raise InputError(f"{where}.cveId", f"expected a CVE id (CVE-YYYY-NNNN), found {cve_id!r}")
    event_name = f.string(obj, "eventName", where)
    cve_change_id = f.uuid(obj, "cveChangeId", where)
    f.string(obj, "sourceIdentifier", where)
    created = f.timestamp(obj, "created", where)
    for index, detail in enumerate(f.bounded_array(obj, "details", where, MAX_DETAILS, "details")):
        path = f"{where}.details[{index}]"
        f.string(f.obj_at(detail, path, "a change detail object"), "type", path)
    record = f.record_bytes(obj, where, MAX_RECORD_BYTES)
    return ChangeFacts(
        cve_change_id=cve_change_id,
        cve_id=cve_id,
        event_key=event_key(event_name),
        created=created,
        record=record,
    )
