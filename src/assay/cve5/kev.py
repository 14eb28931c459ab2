"""CISA's Known Exploited Vulnerabilities catalogue (the JSON feed), read strictly (pure).

catalogue = read_catalogue(data, "known_exploited_vulnerabilities.json")
catalogue.version, catalogue.entries[0].cve_id, catalogue.entries[0].due_date
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from assay import _json_strict
from assay.cve5.record import CVE_ID, strict_json
from assay.errors import IngestError

__all__ = [
    "MAX_CATALOGUE_BYTES",
    "KevCatalogue",
    "KevEntry",
    "KevError",
    "entry_from_value",
    "read_catalogue",
]

MAX_CATALOGUE_BYTES: Final = 64 * 1024 * 1024
"""The catalogue is ~1.5 MB for ~1,400 entries; it grows by a few hundred a year."""
MAX_DEPTH: Final = 8
_DATE_FIELDS: Final = ("dateAdded", "dueDate")
_REQUIRED: Final = ("cveID", "vendorProject", "product", "dateAdded")
_NAMES: Final = (
    ("cve_id", "cveID"),
    ("vendor_project", "vendorProject"),
    ("product", "product"),
    ("name", "vulnerabilityName"),
    ("date_added", "dateAdded"),
    ("due_date", "dueDate"),
    ("ransomware", "knownRansomwareCampaignUse"),
    ("required_action", "requiredAction"),
    ("short_description", "shortDescription"),
    ("notes", "notes"),
)
"""Each text field of an entry and its name in CISA's feed (`cwes` follows them)."""


class KevError(IngestError):
    """The catalogue, or one of its entries, is not what CISA publishes."""


@dataclass(frozen=True, slots=True)
class KevEntry:
    cve_id: str
    vendor_project: str
    product: str
    name: str
    date_added: str
    due_date: str | None
    ransomware: str | None
    """`knownRansomwareCampaignUse`: `Known` or `Unknown`."""
    required_action: str | None
    short_description: str | None
    notes: str | None
    cwes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The entry in CISA's words and order."""
        return {**{key: getattr(self, attr) for attr, key in _NAMES}, "cwes": list(self.cwes)}


@dataclass(frozen=True, slots=True)
class KevCatalogue:
    version: str
    released: str | None
    entries: tuple[KevEntry, ...]


def _check_strings(value: dict[str, Any], path: str, source: str) -> None:
    """Every field but `cwes` is a string or null; the required ones are there."""
    for key, item in value.items():
        if key != "cwes" and not isinstance(item, str | None):
            raise KevError(
                source,
                _json_strict.member(path, key),
                f"expected a string, found {_json_strict.type_name(item)}",
            )
    for key in _REQUIRED:
        if not value.get(key):
            raise KevError(source, _json_strict.member(path, key), "required, found nothing")


def _check_dates(value: dict[str, Any], path: str, source: str) -> None:
    """The dates given are dates (YYYY-MM-DD)."""
    for key in _DATE_FIELDS:
        date = value.get(key)
        if date is not None and not _is_date(date):
            raise KevError(source, f"{path}.{key}", f"expected a date YYYY-MM-DD, found {date!r}")


def _check_formats(value: dict[str, Any], path: str, source: str) -> tuple[str, ...]:
    """The CVE id and the dates are in their forms; the CWE ids, as given."""
    if not CVE_ID.fullmatch(value["cveID"]):
        raise KevError(source, f"{path}.cveID", f"expected CVE-YYYY-NNNN, found {value['cveID']!r}")
    _check_dates(value, path, source)
    cwes = value.get("cwes") or []
    if not isinstance(cwes, list) or not all(isinstance(cwe, str) for cwe in cwes):
        raise KevError(source, f"{path}.cwes", "expected an array of strings")
    return tuple(cwes)


def _entry(value: Any, path: str, source: str) -> KevEntry:
    if not isinstance(value, dict):
        raise KevError(source, path, f"expected an object, found {_json_strict.type_name(value)}")
    _check_strings(value, path, source)
    cwes = _check_formats(value, path, source)
    given: dict[str, Any] = {attr: value.get(key) for attr, key in _NAMES}
    given["name"] = given["name"] or ""  # (the required ones are there: checked above)
    return KevEntry(**given, cwes=cwes)


def entry_from_value(value: Any, source: str) -> KevEntry:
    """One entry from parsed JSON (as `KevEntry.to_dict` writes it, or CISA does)."""
    return _entry(value, "$", source)


def _is_date(text: str) -> bool:
    return len(text) == 10 and text[4] == "-" and text[7] == "-" and text.replace("-", "").isdigit()


def read_catalogue(data: bytes, source: str) -> KevCatalogue:
    """The catalogue in `data`, or `KevError` naming `source` and the JSON path."""
    value = strict_json(data, source, KevError, max_bytes=MAX_CATALOGUE_BYTES, max_depth=MAX_DEPTH)
    if not isinstance(value, dict) or not isinstance(value.get("vulnerabilities"), list):
        raise KevError(source, "$.vulnerabilities", "expected the catalogue's array of entries")
    version = value.get("catalogVersion")
    if not isinstance(version, str) or not version:
        raise KevError(source, "$.catalogVersion", "expected the catalogue's version")
    released = value.get("dateReleased")
    entries = tuple(
        _entry(item, f"$.vulnerabilities[{index}]", source)
        for index, item in enumerate(value["vulnerabilities"])
    )
    return KevCatalogue(version, released if isinstance(released, str) else None, entries)
