"""What the store indexes about one CPE product record: `cpe_facts(obj, where) -> CpeFacts`.

Pure. Checks the fields the CPE API filters on (`cpeNameId`, `cpeName`, `created`,
`lastModified`, `deprecated`, `titles`, `refs`), reporting the JSON path of anything
malformed, and derives the normalized name components and the keyword-search text
(every title, in any language, and every reference link). The record itself is kept
NVD-encoded, byte for byte as it came, `deprecated`/`deprecatedBy` included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from assay.errors import InputError
from assay.nvd import _fields as f
from assay.nvd.versions import version_key

MAX_RECORD_BYTES = 1024 * 1024  # real product records are below 4 KB
MAX_TITLES = 1000
MAX_REFS = 1000


@dataclass(frozen=True, slots=True)
class CpeFacts:
    cpe_name_id: str  # upper-case UUID
    components: tuple[str, ...]  # the 11 normalized components of cpeName
    version_key: bytes | None  # `assay.nvd.versions.version_key` of a real version
    created: str
    last_modified: str
    deprecated: bool
    search_text: str  # titles and reference links, one a line
    record: bytes


def cpe_facts(value: Any, where: str = "$") -> CpeFacts:
    """Check one product object (the value under `cpe`) and derive what the store indexes."""
    obj = f.obj_at(value, where, "a CPE product object")
    cpe_name_id = f.uuid(obj, "cpeNameId", where)
    name = f.cpe_name(obj, "cpeName", where)
    deprecated = obj.get("deprecated")
    if not isinstance(deprecated, bool):
        raise InputError(f"{where}.deprecated", f"expected a boolean, found {f.kind(deprecated)}")
    created = f.timestamp(obj, "created", where)
    last_modified = f.timestamp(obj, "lastModified", where)
    lines = [
        *_texts(obj, where, _TITLES),
        *_texts(obj, where, _REFS),
    ]
    for key in ("deprecatedBy", "deprecates"):
        for index, link in enumerate(f.array(obj, key, where)):
            f.obj_at(link, f"{where}.{key}[{index}]", "an object with cpeName and cpeNameId")
    record = f.record_bytes(obj, where, MAX_RECORD_BYTES)
    return CpeFacts(
        cpe_name_id=cpe_name_id,
        components=name.components,
        version_key=None if name.version in ("*", "-") else version_key(name.version),
        created=created,
        last_modified=last_modified,
        deprecated=deprecated,
        search_text="\n".join(lines),
        record=record,
    )


class _Searched(NamedTuple):
    """A list of objects whose texts the keyword search reads."""

    key: str
    field: str
    most: int
    noun: str  # the items, in the message about too many
    item: str  # one item, in the message about a malformed one


_TITLES = _Searched("titles", "title", MAX_TITLES, "titles", "a title object")
_REFS = _Searched("refs", "ref", MAX_REFS, "references", "a reference object")


def _texts(obj: dict[str, Any], where: str, listed: _Searched) -> list[str]:
    """The text of every object of one searched list (titles, reference links)."""
    texts = []
    key = listed.key
    for index, entry in enumerate(f.bounded_array(obj, key, where, listed.most, listed.noun)):
        path = f"{where}.{key}[{index}]"
        item = f.obj_at(entry, path, listed.item)
        texts.append(f.string(item, listed.field, path))
    return texts
