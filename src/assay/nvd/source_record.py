"""What the store indexes about one NVD source (CVE assigner): `source_facts(obj, where)`.

Pure. A source record (an item of the Source API's `sources`, which NVD does not wrap)
has no id of its own: it is keyed by its first `sourceIdentifier` (NVD lists the
contact address or the CNA's UUID first, and an identifier names one source), found by
any of its identifiers, filtered on `lastModified` and ordered by `created`. The record
itself is kept NVD-encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import InputError
from assay.nvd import _fields as f

MAX_RECORD_BYTES = 1024 * 1024
MAX_IDENTIFIERS = 1000


@dataclass(frozen=True, slots=True)
class SourceFacts:
    source_key: str  # the first sourceIdentifier
    identifiers: tuple[str, ...]
    created: str
    last_modified: str
    record: bytes


def source_facts(value: Any, where: str = "$") -> SourceFacts:
    """Check one source object and derive what the store indexes."""
    obj = f.obj_at(value, where, "a source object")
    identifiers = _identifiers(obj, where)
    created = f.timestamp(obj, "created", where)
    last_modified = f.timestamp(obj, "lastModified", where)
    f.optional(f.string, obj, "name", where)
    f.optional(f.string, obj, "contactEmail", where)
    for level in ("v2AcceptanceLevel", "v3AcceptanceLevel", "cweAcceptanceLevel"):
        f.optional(_acceptance_level, obj, level, where)
    record = f.record_bytes(obj, where, MAX_RECORD_BYTES)
    return SourceFacts(
        source_key=identifiers[0],
        identifiers=tuple(dict.fromkeys(identifiers)),
        created=created,
        last_modified=last_modified,
        record=record,
    )


def _identifiers(obj: dict[str, Any], where: str) -> list[str]:
    """`sourceIdentifiers`: 1 to `MAX_IDENTIFIERS` non-empty strings."""
    identifiers = f.array(obj, "sourceIdentifiers", where)
    if not identifiers:
        raise InputError(f"{where}.sourceIdentifiers", "expected at least one identifier")
    if len(identifiers) > MAX_IDENTIFIERS:
        raise InputError(f"{where}.sourceIdentifiers", f"more than {MAX_IDENTIFIERS}")
    for index, identifier in enumerate(identifiers):
        if not isinstance(identifier, str) or not identifier:
            raise InputError(
                f"{where}.sourceIdentifiers[{index}]",
                f"expected a non-empty string, found {f.kind(identifier)}",
            )
    return identifiers


def _acceptance_level(obj: dict[str, Any], key: str, where: str) -> None:
    path = f"{where}.{key}"
    accept = f.obj_at(obj[key], path, "an acceptance level object")
    f.string(accept, "description", path)
    f.timestamp(accept, "lastModified", path)
