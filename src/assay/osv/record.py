"""A strict reader of OSV records (https://ossf.github.io/osv-schema/), JSON or YAML.

    record = read_record(data, "PYSEC-2021-335.yaml")

Pure: bytes in, a typed `OsvRecord` out, or an `IngestError` that names the file and
the JSON path of the first problem (`vulns/x.yaml at $.affected[0].ranges[1].events[2]:
...`). Limits: a record of at most `MAX_RECORD_BYTES`, nested at most `MAX_DEPTH` deep;
JSON objects that repeat a key and YAML aliases (the "billion laughs" expansion) are
refused. Fields the schema does not define are kept in the stored record and ignored
here, as the schema asks of consumers.

The stored and served form of a record is `OsvRecord.raw`: the document as JSON
(compact), the same bytes whether it was read from JSON or YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, NamedTuple

import msgspec
import orjson

from assay._json_strict import parse_checked, problem_reason
from assay.errors import IngestError

__all__ = [
    "EVENT_KINDS",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "RANGE_TYPES",
    "Affected",
    "Event",
    "OsvRecord",
    "Package",
    "Range",
    "matching_view",
    "read_record",
    "stored_record",
    "timestamp_key",
]

MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
"""The largest record read (osv.dev's largest, Debian and Ubuntu ones listing thousands
of versions, stay below 4 MiB)."""
MAX_DEPTH: Final = 24
"""The deepest nesting read (the schema's own is 6; `database_specific` adds some)."""

RANGE_TYPES: Final = ("SEMVER", "ECOSYSTEM", "GIT")
EVENT_KINDS: Final = ("introduced", "fixed", "last_affected", "limit")

_TIMESTAMP: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


class _Event(msgspec.Struct):
    introduced: str | None = None
    fixed: str | None = None
    last_affected: str | None = None
    limit: str | None = None


class _Range(msgspec.Struct):
    type: str
    events: list[_Event]
    repo: str | None = None


class _Package(msgspec.Struct):
    ecosystem: str
    name: str
    purl: str | None = None


class _Severity(msgspec.Struct):
    type: str
    score: str


class _Affected(msgspec.Struct):
    package: _Package | None = None
    ranges: list[_Range] = []
    versions: list[str] = []
    severity: list[_Severity] = []
    ecosystem_specific: dict[str, Any] | None = None
    database_specific: dict[str, Any] | None = None


class _Reference(msgspec.Struct):
    type: str
    url: str


class _Record(msgspec.Struct):
    id: str
    modified: str
    schema_version: str | None = None
    published: str | None = None
    withdrawn: str | None = None
    aliases: list[str] = []
    related: list[str] = []
    upstream: list[str] = []
    summary: str | None = None
    details: str | None = None
    severity: list[_Severity] = []
    affected: list[_Affected] = []
    references: list[_Reference] = []
    database_specific: dict[str, Any] | None = None


class _SlimRange(msgspec.Struct):
    type: str
    events: list[dict[str, str]]
    repo: str | None = None


class _SlimAffected(msgspec.Struct):
    package: _Package | None = None
    ranges: list[_SlimRange] = []
    versions: list[str] = []


class _SlimRecord(msgspec.Struct):
    id: str
    modified: str
    withdrawn: str | None = None
    aliases: list[str] = []
    affected: list[_SlimAffected] = []


class Event(NamedTuple):
    """One event of a range: `kind` is one of `EVENT_KINDS` (a tuple: hashed and
    compared in C, as evaluation caches each range's sorted events)."""

    kind: Literal["introduced", "fixed", "last_affected", "limit"]
    value: str


@dataclass(frozen=True, slots=True)
class Range:
    type: str
    """`SEMVER`, `ECOSYSTEM` or `GIT`."""
    events: tuple[Event, ...]
    repo: str | None = None


@dataclass(frozen=True, slots=True)
class Package:
    ecosystem: str
    """As the record writes it (`PyPI`, `Debian:12`, `Alpine:v3.18`)."""
    name: str
    purl: str | None = None


@dataclass(frozen=True, slots=True)
class Severity:
    type: str
    """`CVSS_V2`, `CVSS_V3`, `CVSS_V4`, `Ubuntu`."""
    score: str


@dataclass(frozen=True, slots=True)
class Affected:
    package: Package | None
    ranges: tuple[Range, ...]
    versions: tuple[str, ...]
    severity: tuple[Severity, ...]
    ecosystem_specific: dict[str, Any] | None
    database_specific: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Reference:
    type: str
    url: str


@dataclass(frozen=True, slots=True)
class OsvRecord:
    id: str
    modified: str
    published: str | None
    withdrawn: str | None
    aliases: tuple[str, ...]
    related: tuple[str, ...]
    upstream: tuple[str, ...]
    summary: str | None
    details: str | None
    severity: tuple[Severity, ...]
    affected: tuple[Affected, ...]
    references: tuple[Reference, ...]
    database_specific: dict[str, Any] | None
    raw: bytes
    """The record as compact JSON: what the store keeps and `/v1/vulns/{id}` answers."""

    @property
    def modified_key(self) -> str:
        """`modified` in one fixed form (UTC, microseconds) that orders as text."""
        return timestamp_key(self.modified)

    @property
    def is_withdrawn(self) -> bool:
        return self.withdrawn is not None


def timestamp_key(text: str) -> str:
    """An RFC 3339 time as `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC (orders as text);
    `ValueError` when `text` is not one."""
    found = _TIMESTAMP.fullmatch(text)
    if found is None:
        raise ValueError(f"expected an RFC 3339 time such as 2024-01-02T03:04:05Z, found {text!r}")
    fraction = (found.group(7) or ".0")[1:8].ljust(6, "0")[:6]
    zone = found.group(8).upper()
    if zone in ("Z", "+00:00", "-00:00"):  # (most records: no arithmetic needed)
        return _utc_key(found, fraction, text)
    zone = zone.replace("Z", "+00:00")
    moment = datetime.fromisoformat(
        f"{found.group(1)}-{found.group(2)}-{found.group(3)}T{found.group(4)}:"
        f"{found.group(5)}:{found.group(6)}.{fraction}{zone}"
    )
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utc_key(found: re.Match[str], fraction: str, text: str) -> str:
    """`timestamp_key` of a time already in UTC: its fields checked, then written out."""
    year, month, day, hour, minute, second = found.group(1, 2, 3, 4, 5, 6)
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31 and int(hour) < 24):
        raise ValueError(f"expected an RFC 3339 time, found {text!r}")
    if int(minute) > 59 or int(second) > 60:
        raise ValueError(f"expected an RFC 3339 time, found {text!r}")
    return f"{year}-{month}-{day}T{hour}:{minute}:{second}.{fraction}Z"


def _is_json(data: bytes, source: str) -> bool:
    if source.lower().endswith((".yaml", ".yml")):
        return False
    if source.lower().endswith(".json"):
        return True
    return data.lstrip()[:1] == b"{"


def _parse(data: bytes, source: str) -> Any:
    if len(data) > MAX_RECORD_BYTES:
        raise IngestError(
            source, "", f"expected a record of at most {MAX_RECORD_BYTES} bytes, found {len(data)}"
        )
    if _is_json(data, source):
        try:
            value, problem = parse_checked(data, MAX_DEPTH)
        except (ValueError, RecursionError) as error:
            raise IngestError(source, "", f"expected a JSON object: {error}") from None
        if problem is not None:
            path, kind = problem
            raise IngestError(source, path, problem_reason(kind, MAX_DEPTH))
        return value
    import yaml  # (only for YAML records: pages that read no record never import it)

    from assay.osv._yaml import YamlProblem, load

    try:
        return load(data, MAX_DEPTH)
    except YamlProblem as problem:
        raise IngestError(source, f"line {problem.line}", problem.message) from None
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise IngestError(
            source, "", f"expected a YAML or JSON record: {' '.join(str(error).split())}"
        ) from None


_MSGSPEC_PATH: Final = re.compile(r" - at `(\$[^`]*)`$")


def read_record(data: bytes, source: str) -> OsvRecord:
    """The OSV record in `data` (JSON or YAML, by `source`'s suffix or its first byte)."""
    document = _parse(data, source)
    return record_from_document(document, source)


def record_from_document(document: Any, source: str) -> OsvRecord:
    """The OSV record of an already parsed document (as `read_record` checks it)."""
    if not isinstance(document, dict):
        raise IngestError(source, "$", f"expected an object, found {_kind(document)}")
    try:
        parsed = msgspec.convert(document, _Record, strict=True)
    except msgspec.ValidationError as error:
        raise _invalid(source, error) from None
    try:
        raw = orjson.dumps(document)
    except (TypeError, orjson.JSONEncodeError) as error:
        # YAML may hold values JSON has no form for (dates, non-string keys).
        raise IngestError(source, "$", f"expected JSON values only: {error}") from None
    try:
        return _typed(parsed, raw)
    except _Problem as problem:
        raise IngestError(source, problem.path, problem.message) from None


def _invalid(source: str, error: msgspec.ValidationError) -> IngestError:
    """msgspec's complaint as an `IngestError` at the JSON path it names."""
    text = str(error)
    found = _MSGSPEC_PATH.search(text)
    path = found.group(1) if found else "$"
    return IngestError(source, path, _lower_first(_MSGSPEC_PATH.sub("", text)))


_STORED: Final = msgspec.json.Decoder(_Record)


def stored_record(raw: bytes, source: str = "stored record") -> OsvRecord:
    """A record as a store keeps it (compact JSON that `read_record` made): decoded
    straight into its types, with the same checks."""
    try:
        parsed = _STORED.decode(raw)
    except msgspec.ValidationError as error:
        raise _invalid(source, error) from None
    except msgspec.DecodeError as error:
        raise IngestError(source, "", f"expected a JSON object: {error}") from None
    try:
        return _typed(parsed, raw)
    except _Problem as problem:
        raise IngestError(source, problem.path, problem.message) from None


class _Problem(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


_SLIM: Final = msgspec.json.Decoder(_SlimRecord)


def matching_view(raw: bytes) -> OsvRecord:
    """What evaluation reads of a stored record (id, modified, withdrawn, aliases, and of
    `affected[]` the package, ranges and versions; the rest left empty), decoded in a
    fraction of `stored_record`'s time. For records the store holds: `read_record`
    checked them when they were imported, so nothing is checked again."""
    try:
        parsed = _SLIM.decode(raw)
    except msgspec.DecodeError as error:  # (a damaged store)
        raise IngestError("stored record", "", f"expected an OSV record: {error}") from None
    affected = tuple(
        Affected(
            package=_package(item.package),
            ranges=tuple(
                Range(
                    entry.type,
                    tuple(
                        Event(kind, value)  # type: ignore[arg-type]
                        for event in entry.events
                        for kind, value in event.items()  # (one each: checked on import)
                    ),
                    entry.repo,
                )
                for entry in item.ranges
            ),
            versions=tuple(item.versions),
            severity=(),
            ecosystem_specific=None,
            database_specific=None,
        )
        for item in parsed.affected
    )
    return OsvRecord(
        id=parsed.id,
        modified=parsed.modified,
        published=None,
        withdrawn=parsed.withdrawn,
        aliases=tuple(parsed.aliases),
        related=(),
        upstream=(),
        summary=None,
        details=None,
        severity=(),
        affected=affected,
        references=(),
        database_specific=None,
        raw=raw,
    )


def _typed(parsed: _Record, raw: bytes) -> OsvRecord:
    _check_id_and_times(parsed)
    affected = tuple(_affected(item, f"$.affected[{i}]") for i, item in enumerate(parsed.affected))
    return OsvRecord(
        id=parsed.id,
        modified=parsed.modified,
        published=parsed.published,
        withdrawn=parsed.withdrawn,
        aliases=tuple(parsed.aliases),
        related=tuple(parsed.related),
        upstream=tuple(parsed.upstream),
        summary=parsed.summary,
        details=parsed.details,
        severity=tuple(Severity(s.type, s.score) for s in parsed.severity),
        affected=affected,
        references=tuple(Reference(r.type, r.url) for r in parsed.references),
        database_specific=parsed.database_specific,
        raw=raw,
    )


def _check_id_and_times(parsed: _Record) -> None:
    if not parsed.id.strip() or len(parsed.id) > 256:
        raise _Problem("$.id", f"expected an id of 1 to 256 characters, found {parsed.id!r}")
    for field in ("modified", "published", "withdrawn"):
        value = getattr(parsed, field)
        if value is not None:
            try:
                timestamp_key(value)
            except ValueError as error:
                raise _Problem(f"$.{field}", str(error)) from None


def _package(given: _Package | None) -> Package | None:
    return None if given is None else Package(given.ecosystem, given.name, given.purl)


def _affected(item: _Affected, path: str) -> Affected:
    package = _package(item.package)
    if package is not None and not (package.ecosystem and package.name):
        raise _Problem(f"{path}.package", "expected a non-empty ecosystem and name")
    ranges = [_range(entry, f"{path}.ranges[{index}]") for index, entry in enumerate(item.ranges)]
    if package is None and any(r.type != "GIT" for r in ranges):
        raise _Problem(f"{path}.package", "expected a package for SEMVER and ECOSYSTEM ranges")
    return Affected(
        package=package,
        ranges=tuple(ranges),
        versions=tuple(item.versions),
        severity=tuple(Severity(s.type, s.score) for s in item.severity),
        ecosystem_specific=item.ecosystem_specific,
        database_specific=item.database_specific,
    )


def _range(entry: _Range, path: str) -> Range:
    _check_range(entry, path)
    events = [_event(raw, f"{path}.events[{index}]") for index, raw in enumerate(entry.events)]
    if not any(event.kind == "introduced" for event in events):
        raise _Problem(f"{path}.events", "expected an introduced event")
    return Range(entry.type, tuple(events), entry.repo)


def _check_range(entry: _Range, path: str) -> None:
    """A range's type is known, a GIT range names its repository, and it has events."""
    if entry.type not in RANGE_TYPES:
        raise _Problem(
            f"{path}.type", f"expected one of {', '.join(RANGE_TYPES)}, found {entry.type!r}"
        )
    if entry.type == "GIT" and not entry.repo:
        raise _Problem(f"{path}.repo", "expected the repository URL of a GIT range")
    if not entry.events:
        raise _Problem(f"{path}.events", "expected at least one event")


def _event(raw: _Event, path: str) -> Event:
    """One `events[]` entry: exactly one kind, with a version."""
    given = [(kind, getattr(raw, kind)) for kind in EVENT_KINDS if getattr(raw, kind) is not None]
    if len(given) != 1:
        raise _Problem(
            path, f"expected exactly one of {', '.join(EVENT_KINDS)}, found {len(given)}"
        )
    kind, value = given[0]
    if not value:
        raise _Problem(f"{path}.{kind}", "expected a version, found ''")
    return Event(kind, value)  # type: ignore[arg-type]


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "nothing (an empty document)"
    return type(value).__name__


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
