"""Field checks shared by the record modules (CVE, product, match-criteria, change, source).

Pure. Each check names the JSON path of what it rejects and says what it expected and
what it found, like `assay.nvd.cve_record`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from assay.errors import InputError
from assay.nvd.cpe import Cpe, parse_cpe
from assay.nvd.dates import normalize_record_timestamp
from assay.nvd.jsonenc import encode

T = TypeVar("T")

UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def kind(value: object) -> str:
    """How a JSON value is named in messages."""
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), f"a {type(value).__name__}"
    )


def obj_at(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(where, f"expected {what}, found {kind(value)}")
    return value


def string(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}.{key}", f"expected a non-empty string, found {kind(value)}")
    return value


def uuid(obj: dict[str, Any], key: str, where: str) -> str:
    """A UUID field, upper-cased (NVD emits them upper-case)."""
    value = string(obj, key, where)
    if not UUID.fullmatch(value):
        raise InputError(f"{where}.{key}", f"expected a UUID, found {value[:80]!r}")
    return value.upper()


def timestamp(obj: dict[str, Any], key: str, where: str) -> str:
    """A record timestamp in the store's comparable form."""
    text = string(obj, key, where)
    try:
        return normalize_record_timestamp(text)
    except InputError:
        raise InputError(
            f"{where}.{key}",
            f"expected a timestamp like 2023-05-04T19:40:31.363, found {text[:80]!r}",
        ) from None


def optional(
    check: Callable[[dict[str, Any], str, str], T], obj: dict[str, Any], key: str, where: str
) -> T | None:
    """`check` of a field that may be absent or null (None then)."""
    if obj.get(key) is None:
        return None
    return check(obj, key, where)


def cpe_name(obj: dict[str, Any], key: str, where: str) -> Cpe:
    """A complete CPE 2.3 name (all 11 components)."""
    text = string(obj, key, where)
    try:
        return parse_cpe(text, partial=False)
    except InputError as error:
        raise InputError(f"{where}.{key}", error.reason) from None


def array(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    """An optional array (absent or null reads as empty)."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}.{key}", f"expected an array, found {kind(value)}")
    return value


def bounded_array(obj: dict[str, Any], key: str, where: str, most: int, noun: str) -> list[Any]:
    """`array`, refused when it holds more than `most` items (`noun` names them)."""
    items = array(obj, key, where)
    if len(items) > most:
        raise InputError(f"{where}.{key}", f"more than {most} {noun}")
    return items


def record_bytes(obj: dict[str, Any], where: str, most: int) -> bytes:
    """The record NVD-encoded, as the store keeps it; refused past `most` bytes."""
    record = encode(obj)
    if len(record) > most:
        raise InputError(where, f"record is {len(record)} bytes, more than {most}")
    return record
