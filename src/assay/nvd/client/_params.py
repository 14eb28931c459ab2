"""Turn the client's snake_case keyword arguments into an NVD API 2.0 query. Pure.

`build_query(operation, params)` checks every rule the reference client checks before
sending (and the newer ones of the NVD documentation), normalises values, and returns
the query as an ordered mapping of wire names to values, `None` meaning a bare flag.
`encode_query(query)` renders it the way the real service accepts today: flags as bare
names, datetimes as `YYYY-MM-DDTHH:MM:SS.mmm+00:00` in UTC with `+` sent as `%2B`,
spaces as `%20`.

Nothing here performs I/O or imports an HTTP library: the sync and async clients share it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from enum import Enum
from typing import Final, TypedDict
from urllib.parse import quote

from assay.errors import InputError, QueryError
from assay.nvd.cpe import ANY, Cpe, parse_cpe
from assay.nvd.operations import (
    CVE_HISTORY_EVENT_NAMES,
    CVE_TAGS,
    OPERATIONS,
    OperationName,
    Parameter,
    ParameterKind,
)

__all__ = [
    "CVE_HISTORY_EVENT_NAMES",
    "CVE_TAGS",
    "MAX_DATE_RANGE",
    "MAX_RESULTS_PER_PAGE",
    "CpeMatchFilters",
    "CpeMatchParams",
    "CpesFilters",
    "CpesParams",
    "CveHistoryFilters",
    "CveHistoryParams",
    "CvesFilters",
    "CvesParams",
    "DateLike",
    "InvalidQuery",
    "Operation",
    "Query",
    "SourcesFilters",
    "SourcesParams",
    "build_query",
    "encode_query",
    "format_datetime",
    "parameter_names",
    "split_window",
]

Operation = OperationName
"""The NVD API 2.0 operations, named after their path segment (`assay.nvd.operations`)."""

Query = dict[str, str | None]
"""Wire name → value, in sending order; `None` is a flag sent as a bare name."""

DateLike = datetime | date | str
"""A `datetime` (naive means UTC), a `date` (midnight UTC) or ISO 8601 text."""

MAX_RESULTS_PER_PAGE: Final[Mapping[Operation, int]] = {
    name: operation.max_page for name, operation in OPERATIONS.items()
}
"""Largest `resultsPerPage` the service accepts, per operation (also its default)."""

MAX_DATE_RANGE: Final = timedelta(days=120)
"""Longest window a start/end date pair may span."""

MAX_CVE_IDS: Final = 100
"""Most CVE identifiers one `cveIds` list may hold."""

_CVE_ID = re.compile(r"CVE-\d{4}-\d{4,}", re.ASCII)
_CWE_ID = re.compile(r"CWE-\d+", re.ASCII)
_CWE_SPECIAL = {"nvd-cwe-other": "NVD-CWE-Other", "nvd-cwe-noinfo": "NVD-CWE-noinfo"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


class InvalidQuery(QueryError, ValueError):
    """Arguments that NVD would refuse; raised before anything is sent.

    A `ValueError` (as the reference client raises) and an `assay.errors.QueryError`.
    `parameter` is the first offending wire name, `parameters` every offending
    snake_case argument.
    """

    def __init__(self, parameters: Sequence[str], message: str) -> None:
        self.parameters = tuple(parameters)
        wire = _WIRE.get(self.parameters[0], self.parameters[0])
        # The message already names every parameter (snake_case and wire name).
        InputError.__init__(self, "", message)
        self.where = wire
        self.parameter = wire


# --- typed keyword arguments (for Unpack[...] in the clients) -----------------------------

EnumLike = str | Enum


class _Paging(TypedDict, total=False):
    """Paging, taken by every operation (`get_all_*` and the iterators page by themselves)."""

    results_per_page: int
    start_index: int


class _ChangeCursor(TypedDict, total=False):
    """assay's extension, taken by every operation: another assay's change cursor."""

    since_generation: int


class _LastModified(TypedDict, total=False):
    """The `lastModified` window, given together."""

    last_mod_start_date: DateLike
    last_mod_end_date: DateLike


class CvesFilters(_LastModified, _ChangeCursor, total=False):
    """Filters of `get_cves` (every page): the reference client's names plus newer ones."""

    cpe_name: str
    cve_id: str
    cve_ids: str | Sequence[str]
    cve_tag: EnumLike
    cvss_v2_metrics: str
    cvss_v2_severity: EnumLike
    cvss_v3_metrics: str
    cvss_v3_severity: EnumLike
    cvss_v4_metrics: str
    cvss_v4_severity: EnumLike
    cwe_id: str
    has_cert_alerts: bool
    has_cert_notes: bool
    has_kev: bool
    has_oval: bool
    is_vulnerable: bool
    keyword_exact_match: bool
    keyword_search: str
    kev_start_date: DateLike
    kev_end_date: DateLike
    no_rejected: bool
    pub_start_date: DateLike
    pub_end_date: DateLike
    source_identifier: str
    version_end: str
    version_end_type: EnumLike
    version_start: str
    version_start_type: EnumLike
    virtual_match_string: str


class CveHistoryFilters(_ChangeCursor, total=False):
    """Filters of `get_cve_history`."""

    change_start_date: DateLike
    change_end_date: DateLike
    cve_id: str
    cve_ids: str | Sequence[str]  # assay's extension
    event_name: EnumLike


class CpesFilters(_LastModified, _ChangeCursor, total=False):
    """Filters of `get_cpes`."""

    cpe_name_id: str
    cpe_match_string: str
    keyword_exact_match: bool
    keyword_search: str
    match_criteria_id: str


class CpeMatchFilters(_LastModified, _ChangeCursor, total=False):
    """Filters of `get_cpe_match`."""

    cve_id: str
    match_criteria_id: str
    match_string_search: str


class SourcesFilters(_LastModified, _ChangeCursor, total=False):
    """Filters of `get_sources`."""

    source_identifier: str


# One page's arguments: the filters plus paging (`get_*`, `iter_*`).


class CvesParams(CvesFilters, _Paging, total=False):
    """`get_cves` arguments: filters plus paging."""


class CveHistoryParams(CveHistoryFilters, _Paging, total=False):
    """`get_cve_history` arguments: filters plus paging."""


class CpesParams(CpesFilters, _Paging, total=False):
    """`get_cpes` arguments: filters plus paging."""


class CpeMatchParams(CpeMatchFilters, _Paging, total=False):
    """`get_cpe_match` arguments: filters plus paging."""


class SourcesParams(SourcesFilters, _Paging, total=False):
    """`get_sources` arguments: filters plus paging."""


# --- parameter table ---------------------------------------------------------------------

_TABLE: Final[Mapping[Operation, tuple[Parameter, ...]]] = {
    name: operation.parameters for name, operation in OPERATIONS.items()
}

_WIRE: Final = {p.name: p.wire for params in _TABLE.values() for p in params}
_KNOWN: Final = {name: frozenset(p.name for p in params) for name, params in _TABLE.items()}
_NAMES: Final = {wire: name for name, wire in _WIRE.items()}

_DATE_PAIRS: Final[Mapping[Operation, tuple[tuple[str, str], ...]]] = {
    name: tuple((_NAMES[start], _NAMES[end]) for start, end in operation.date_pairs)
    for name, operation in OPERATIONS.items()
}


def parameter_names(operation: Operation, *, paging: bool = True) -> tuple[str, ...]:
    """The snake_case arguments `operation` accepts, in sending order."""
    names = tuple(p.name for p in _TABLE[operation])
    return names if paging else tuple(n for n in names if n not in _PAGING_NAMES)


_PAGING_NAMES: Final = frozenset({"results_per_page", "start_index"})


# --- values ------------------------------------------------------------------------------


def _fail(names: Sequence[str], message: str) -> InvalidQuery:
    return InvalidQuery(names, message)


def _label(name: str) -> str:
    return f"{name} ({_WIRE.get(name, name)})"


def to_utc(value: object, name: str) -> datetime:
    """A `datetime`, `date` or ISO 8601 text as an aware UTC datetime."""
    parsed = _as_datetime(value, name)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _as_datetime(value: object, name: str) -> datetime:
    """`value` as a datetime, naive unless it carries an offset."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        raise _fail(
            [name],
            f"{_label(name)}: expected a datetime, date or ISO 8601 text, "
            f"got {type(value).__name__}",
        )
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        raise _fail(
            [name], f"{_label(name)}: expected ISO 8601 date/time text, got {value!r}"
        ) from None


def format_datetime(value: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm+00:00` in UTC (naive means UTC), the form NVD accepts."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}+00:00"


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise _fail([name], f"{_label(name)}: expected text, got {type(value).__name__}")
    if not value.strip():
        raise _fail([name], f"{_label(name)}: must not be empty")
    return value


def _enum(value: object, name: str, choices: tuple[str, ...]) -> str:
    raw = value.value if isinstance(value, Enum) else value
    text = _text(raw, name)
    folded = text.strip().casefold()
    for choice in choices:
        if choice.casefold() == folded:
            return choice
    raise _fail([name], f"{_label(name)}: expected one of {', '.join(choices)}; got {text!r}")


def _cve(value: object, name: str) -> str:
    text = _text(value, name).strip().upper()
    if not _CVE_ID.fullmatch(text):
        raise _fail([name], f"{_label(name)}: expected CVE-YYYY-NNNN (4+ digits), got {value!r}")
    return text


def _cpe(value: object, name: str, *, complete: bool, product: bool = False) -> Cpe:
    """Parse a CPE argument with the rules the assay server applies (`assay.nvd.cpe`)."""
    text = _text(value, name).strip()
    try:
        cpe = parse_cpe(text, partial=not complete)
    except InputError as error:
        raise _fail([name], f"{_label(name)}: {error.reason}") from None
    if product:  # NVD: part, vendor, product and version are REQUIRED in a cpeName
        for component in ("part", "vendor", "product", "version"):
            if getattr(cpe, component) == ANY:
                raise _fail(
                    [name], f"{_label(name)}: the {component} component must not be *: {text!r}"
                )
    return cpe


def _flag(param: Parameter, value: object) -> str | None:
    if not isinstance(value, bool):
        raise _fail([param.name], f"{_label(param.name)}: expected True or False, got {value!r}")
    return None


def _int(param: Parameter, value: object) -> str:
    name = param.name
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail([name], f"{_label(name)}: expected an integer, got {value!r}")
    if value < 0:
        raise _fail([name], f"{_label(name)}: must be at least 0, got {value}")
    return str(value)


def _cve_list(param: Parameter, value: object) -> str:
    name = param.name
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, Sequence) or isinstance(items, bytes):
        raise _fail([name], f"{_label(name)}: expected CVE ids (text or a list), got {value!r}")
    ids = [_cve(item, name) for item in items]
    if not ids:
        raise _fail([name], f"{_label(name)}: must hold at least one CVE id")
    if len(ids) > MAX_CVE_IDS:
        raise _fail([name], f"{_label(name)}: at most {MAX_CVE_IDS} CVE ids, got {len(ids)}")
    return ",".join(ids)


def _cwe(param: Parameter, value: object) -> str:
    text = _text(value, param.name).strip()
    if text.casefold() in _CWE_SPECIAL:
        return _CWE_SPECIAL[text.casefold()]
    if not _CWE_ID.fullmatch(text.upper()):
        raise _fail(
            [param.name],
            f"{_label(param.name)}: expected CWE-N, NVD-CWE-Other or NVD-CWE-noinfo, got {text!r}",
        )
    return text.upper()


def _uuid(param: Parameter, value: object) -> str:
    text = _text(value, param.name).strip()
    if not _UUID.fullmatch(text):
        raise _fail([param.name], f"{_label(param.name)}: expected a UUID, got {text!r}")
    return text.upper()


def _cpe_text(param: Parameter, value: object) -> str:
    _cpe(value, param.name, complete=param.kind == "cpe13", product=param.name == "cpe_name")
    return _text(value, param.name).strip()


# How each kind of argument becomes its wire value (`None`: a bare flag).
_VALUES: Final[Mapping[ParameterKind, Callable[[Parameter, object], str | None]]] = {
    "flag": _flag,
    "int": _int,
    "date": lambda param, value: format_datetime(to_utc(value, param.name)),
    "cve": lambda param, value: _cve(value, param.name),
    "cve_list": _cve_list,
    "cwe": _cwe,
    "uuid": _uuid,
    "enum": lambda param, value: _enum(value, param.name, param.choices),
    "cpe": _cpe_text,
    "cpe13": _cpe_text,
    "text": lambda param, value: _text(value, param.name),
}


def _value(param: Parameter, value: object) -> str | None:
    """Normalise one argument; the result is the wire value (`None` for a bare flag)."""
    return _VALUES[param.kind](param, value)


# --- the query ---------------------------------------------------------------------------


def build_query(operation: Operation, params: Mapping[str, object]) -> Query:
    """Check and translate snake_case arguments into the wire query of `operation`.

    `None` and `False` mean "not given". Raises `TypeError` for a name the operation does
    not take, and `InvalidQuery` (a `ValueError`) for anything NVD would refuse.
    """
    table = _TABLE[operation]
    _refuse_unknown(operation, params)
    given = {k: v for k, v in params.items() if v is not None and v is not False}
    values = {p.name: _value(p, given[p.name]) for p in table if p.name in given}
    _check_rules(operation, given, values)
    return {_WIRE[name]: value for name, value in values.items()}


def _refuse_unknown(operation: Operation, params: Mapping[str, object]) -> None:
    """A name `operation` does not take is a `TypeError`, as for any Python call."""
    known = _KNOWN[operation]
    for name in params:
        if name not in known:
            raise TypeError(f"{operation}: unexpected keyword argument {name!r}")


def _check_rules(
    operation: Operation, given: Mapping[str, object], values: Mapping[str, str | None]
) -> None:
    limit = MAX_RESULTS_PER_PAGE[operation]
    per_page = given.get("results_per_page")
    if isinstance(per_page, int) and per_page > limit:
        raise _fail(
            ["results_per_page"],
            f"{_label('results_per_page')}: must be between 0 and {limit} for {operation}, "
            f"got {per_page}",
        )
    for start, end in _DATE_PAIRS[operation]:
        _check_dates(given, start, end)
    if operation == "cves":
        _check_cves_rules(given, values)
    if operation in ("cves", "cpes"):
        _requires(given, "keyword_exact_match", "keyword_search")


def _check_dates(given: Mapping[str, object], start: str, end: str) -> None:
    """A start/end pair: both or neither, in order, at most `MAX_DATE_RANGE` apart."""
    if (start in given) != (end in given):
        missing, present = (end, start) if start in given else (start, end)
        raise _fail(
            [start, end],
            f"{_label(start)} and {_label(end)} must be given together; "
            f"{present} was given without {missing}",
        )
    if start not in given:
        return
    begin, finish = to_utc(given[start], start), to_utc(given[end], end)
    if finish < begin:
        raise _fail([start, end], f"{_label(end)} is before {_label(start)}: {finish} < {begin}")
    if finish - begin > MAX_DATE_RANGE:
        raise _fail(
            [start, end],
            f"{_label(start)} to {_label(end)} spans {finish - begin}; "
            f"NVD allows at most {MAX_DATE_RANGE.days} days",
        )


def _exclusive(given: Mapping[str, object], *names: str) -> None:
    present = [n for n in names if n in given]
    if len(present) > 1:
        raise _fail(present, f"{' and '.join(_label(n) for n in present)} cannot be combined")


def _requires(given: Mapping[str, object], name: str, needed: str) -> None:
    if name in given and needed not in given:
        raise _fail([name, needed], f"{_label(name)} requires {_label(needed)}")


# (name, what it needs) for the CVE API's arguments that are meaningless alone.
_CVES_NEEDS: Final = (
    ("version_start", "version_start_type"),
    ("version_start_type", "version_start"),
    ("version_end", "version_end_type"),
    ("version_end_type", "version_end"),
    ("version_start", "virtual_match_string"),
    ("version_end", "virtual_match_string"),
)


def _check_cves_rules(given: Mapping[str, object], values: Mapping[str, str | None]) -> None:
    _exclusive(given, "cvss_v2_metrics", "cvss_v3_metrics", "cvss_v4_metrics")
    _exclusive(given, "cvss_v2_severity", "cvss_v3_severity", "cvss_v4_severity")
    _requires(given, "is_vulnerable", "cpe_name")
    _exclusive(given, "is_vulnerable", "virtual_match_string")
    for name, needed in _CVES_NEEDS:
        _requires(given, name, needed)
    vms = values.get("virtual_match_string")
    ranged = "version_start" in given or "version_end" in given
    if (
        vms is not None
        and ranged
        and _cpe(vms, "virtual_match_string", complete=False).version != ANY
    ):
        raise _fail(
            ["virtual_match_string", "version_start", "version_end"],
            f"{_label('virtual_match_string')} must not name a version when "
            f"version_start/version_end give a range, got {vms!r}",
        )


def split_window(
    start: DateLike, end: DateLike, *, max_range: timedelta = MAX_DATE_RANGE
) -> list[tuple[datetime, datetime]]:
    """Consecutive UTC windows of at most `max_range` covering `start`..`end`.

    Each window ends where the next begins (NVD compares both ends inclusively, so a
    record stamped exactly on a boundary appears in two windows; upserts absorb that).
    """
    begin, finish = to_utc(start, "start"), to_utc(end, "end")
    if finish < begin:
        raise ValueError(f"end {finish.isoformat()} is before start {begin.isoformat()}")
    if max_range <= timedelta(0):
        raise ValueError(f"max_range must be positive, got {max_range}")
    windows = []
    while True:
        stop = min(begin + max_range, finish)
        windows.append((begin, stop))
        if stop >= finish:
            return windows
        begin = stop


def encode_query(query: Mapping[str, str | None]) -> str:
    """The query string: flags bare, values percent-encoded (`+` → `%2B`, space → `%20`)."""
    return "&".join(
        name if value is None else f"{name}={quote(value, safe=':')}"
        for name, value in query.items()
    )
