"""What the store indexes about one CPE product record: `cpe_facts(obj, where) -> CpeFacts`.

Pure. Checks the fields the CPE API filters on (`cpeNameId`, `cpeName`, `created`,
`lastModified`, `deprecated`, `titles`, `refs`), reporting the JSON path of anything
malformed, and derives the normalized name components and the keyword-search text
(every title, in any language, and every reference link). The record itself is kept
NVD-encoded, byte for byte as it came, `deprecated`/`deprecatedBy` included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import InputError
from assay.nvd import _fields as f
from assay.nvd.jsonenc import encode
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
    lines: list[str] = []
    titles = f.array(obj, "titles", where)
    if len(titles) > MAX_TITLES:
        raise InputError(f"{where}.titles", f"more than {MAX_TITLES} titles")
    for index, title in enumerate(titles):
        item = f.obj_at(title, f"{where}.titles[{index}]", "a title object")
        lines.append(f.string(item, "title", f"{where}.titles[{index}]"))
    refs = f.array(obj, "refs", where)
    if len(refs) > MAX_REFS:
        raise InputError(f"{where}.refs", f"more than {MAX_REFS} references")
    for index, ref in enumerate(refs):
        item = f.obj_at(ref, f"{where}.refs[{index}]", "a reference object")
        lines.append(f.string(item, "ref", f"{where}.refs[{index}]"))
    for key in ("deprecatedBy", "deprecates"):
        for index, link in enumerate(f.array(obj, key, where)):
            f.obj_at(link, f"{where}.{key}[{index}]", "an object with cpeName and cpeNameId")
    record = encode(obj)
    if len(record) > MAX_RECORD_BYTES:
        raise InputError(where, f"record is {len(record)} bytes, more than {MAX_RECORD_BYTES}")
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
