"""What a scan is asked, read once for `assay scan`, `POST /api/scan` and `/scan`.

    request = parse_scan_request(ScanFields(inputs=(NamedData("bom.json", data),), fail_on=("kev",)))
    outcome = run_scan(request, StoreSource(store))        # assay.audit.run

Each front end only translates what it was given (arguments, a JSON request, a form) into
`ScanFields`, text as typed or posted, and formats the outcome. The rules are here: the
minimum confidence is a number from 0 to 1; sources are some of `SOURCES`; `failOn` rules
and ignore files parse as `assay.policy.vulnerabilities` says; purls are deduplicated;
there is something to scan; and the counts stay within the front end's `ScanLimits`.
A field that breaks a rule raises `RequestFieldError` naming the field by its JSON name
(`minConfidence`, `failOn`, ...); a front end may show it in its own spelling, with the
same reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final, TypeVar

from assay.audit.inputs.purls import MAX_PURLS
from assay.audit.scan import SOURCES
from assay.errors import InputError
from assay.policy.vulnerabilities import (
    FailRule,
    IgnoreEntry,
    parse_fail_on,
    parse_ignore_file,
)

__all__ = [
    "DEFAULT_MAX_AGE_DAYS",
    "FIELDS",
    "NamedData",
    "RequestFieldError",
    "ScanFields",
    "ScanLimits",
    "ScanRequest",
    "parse_scan_request",
]

T = TypeVar("T")

DEFAULT_MAX_AGE_DAYS: Final = 7.0
"""A store whose last completed sync is older gets a warning."""
FIELDS: Final = (
    "inputs",
    "purls",
    "minConfidence",
    "sources",
    "failOn",
    "failOnConditional",
    "ignore",
    "vex",
    "maxAge",
)
"""The fields of a request, by their JSON names (`POST /api/scan`'s JSON body)."""


class RequestFieldError(InputError):
    """A field of a scan request breaks a rule: `field` is its JSON name."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field = field


@dataclass(frozen=True, slots=True)
class NamedData:
    """A file as given: its name (shown in the answer, and it tells lock-file kinds apart)
    and its bytes, or how to read them (a command line reads its files one at a time)."""

    name: str
    content: bytes | Callable[[], bytes]

    def read(self) -> bytes:
        return self.content if isinstance(self.content, bytes) else self.content()


@dataclass(frozen=True, slots=True)
class ScanLimits:
    """How much one request may ask: the command line's defaults; a server's are lower."""

    max_inputs: int = 1000
    max_purls: int = MAX_PURLS
    max_vex: int = 1000
    max_components: int | None = None
    """Components of every input together (a server's cap: a scan costs ~10 ms each)."""


@dataclass(frozen=True, slots=True)
class ScanFields:
    """A request as it arrived: numbers and lists still text, as typed or posted."""

    inputs: Sequence[NamedData] = ()
    purls: Sequence[tuple[str, str]] = ()
    """(purl, where it was given), e.g. `("pkg:pypi/x@1", "purls line 3")`."""
    purl_source: str = "purls"
    """The name the purls' inventory goes by in the answer."""
    min_confidence: str | float | None = None
    sources: str | Sequence[str] | None = None
    """Comma-separated text or a list; None: every source the store holds."""
    fail_on: Sequence[str] = ()
    fail_on_conditional: bool | str = False
    ignore: NamedData | None = None
    vex: Sequence[NamedData] = ()
    max_age: str | float | None = None


@dataclass(frozen=True, slots=True)
class ScanRequest:
    """A scan request that follows every rule (made by `parse_scan_request` only)."""

    inputs: tuple[NamedData, ...]
    purls: tuple[tuple[str, str], ...]
    purl_source: str
    min_confidence: float
    sources: tuple[str, ...] | None
    fail_on: tuple[FailRule, ...]
    fail_on_conditional: bool
    ignores: tuple[IgnoreEntry, ...]
    vex: tuple[NamedData, ...]
    max_age_days: float
    limits: ScanLimits


def _field(name: str, parse: Callable[[], T]) -> T:
    """`parse()`, its `InputError` said of the field `name`."""
    try:
        return parse()
    except RequestFieldError:
        raise
    except InputError as error:
        raise RequestFieldError(name, error.reason) from None


def _number(value: str | float | None, name: str, low: float, high: float, default: float) -> float:
    if value in (None, ""):
        return default
    # A boolean or unparsable value reads as NaN, which no range holds.
    try:
        number = math.nan if isinstance(value, bool) else float(value)
    except ValueError:
        number = math.nan
    if not low <= number <= high:
        expected = f"expected a number from {low:g} to {high:g}"
        raise RequestFieldError(name, f"{expected}, found {value!r}")
    return number


def _sources(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(dict.fromkeys(str(item).strip().lower() for item in items if str(item).strip()))
    expected = f"expected some of {', '.join(SOURCES)}"
    if not names:
        raise RequestFieldError("sources", f"{expected}, found nothing")
    unknown = [name for name in names if name not in SOURCES]
    if unknown:
        raise RequestFieldError("sources", f"{expected}, found {unknown[0]!r}")
    return names


def _flag(value: bool | str, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text in ("", "false", "0", "no", "off"):
        return False
    if text in ("true", "1", "yes", "on"):
        return True
    raise RequestFieldError(name, f"expected true or false, found {value!r}")


def _at_most(count: int, limit: int, name: str, what: str) -> None:
    if count > limit:
        raise RequestFieldError(name, f"expected at most {limit} {what}, found {count}")


def _purls(fields: ScanFields, limits: ScanLimits) -> tuple[tuple[str, str], ...]:
    first: dict[str, tuple[str, str]] = {}
    for text, where in fields.purls:
        first.setdefault(text.strip(), (text.strip(), where))
    _at_most(len(first), limits.max_purls, "purls", "purls")
    return tuple(first.values())


def _fail_on(texts: Sequence[str]) -> tuple[FailRule, ...]:
    return tuple(_field("failOn", partial(parse_fail_on, text, "failOn")) for text in texts)


def _ignores(ignore: NamedData | None) -> tuple[IgnoreEntry, ...]:
    if ignore is None:
        return ()
    return parse_ignore_file(ignore.read(), ignore.name)


def parse_scan_request(fields: ScanFields, limits: ScanLimits | None = None) -> ScanRequest:
    """The request `fields` ask for, every rule checked (`RequestFieldError` otherwise)."""
    limits = limits or ScanLimits()
    if not fields.inputs and not fields.purls:
        raise RequestFieldError("inputs", "nothing to scan: expected input files or purls")
    _at_most(len(fields.inputs), limits.max_inputs, "inputs", "inputs")
    _at_most(len(fields.vex), limits.max_vex, "vex", "VEX documents")
    return ScanRequest(
        inputs=tuple(fields.inputs),
        purls=_purls(fields, limits),
        purl_source=fields.purl_source,
        min_confidence=_number(fields.min_confidence, "minConfidence", 0.0, 1.0, 0.0),
        sources=_sources(fields.sources),
        fail_on=_fail_on(fields.fail_on),
        fail_on_conditional=_flag(fields.fail_on_conditional, "failOnConditional"),
        ignores=_ignores(fields.ignore),
        vex=tuple(fields.vex),
        max_age_days=_number(fields.max_age, "maxAge", 0.0, 36500.0, DEFAULT_MAX_AGE_DAYS),
        limits=limits,
    )


# -- the JSON form of a request (`POST /api/scan`) -------------------------------------


def _strings(value: object, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RequestFieldError(name, f"expected an array of strings, found {_kind(value)}")
    return list(value)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _json_file(value: object, where: str, check_name: Callable[[str, str], str]) -> NamedData:
    """`{"name": ..., "content": text, or the JSON document itself}`."""
    if not isinstance(value, dict):
        raise RequestFieldError(
            where, f"expected an object with name and content, found {_kind(value)}"
        )
    unknown = sorted(set(value) - {"name", "content"})
    if unknown:
        raise RequestFieldError(f"{where}.{unknown[0]}", "unknown field; expected name, content")
    name, content = value.get("name"), value.get("content")
    if not isinstance(name, str):
        raise RequestFieldError(f"{where}.name", f"expected a file name, found {_kind(name)}")
    if isinstance(content, str):
        data = content.encode()
    elif isinstance(content, dict | list):
        import orjson

        data = orjson.dumps(content)
    else:
        raise RequestFieldError(
            f"{where}.content", f"expected the file as text or as JSON, found {_kind(content)}"
        )
    return NamedData(check_name(name, f"{where}.name"), data)


def _json_files(value: object, name: str, check_name: Callable[[str, str], str]) -> list[NamedData]:
    if not isinstance(value, list):
        raise RequestFieldError(name, f"expected an array of files, found {_kind(value)}")
    return [_json_file(item, f"{name}[{index}]", check_name) for index, item in enumerate(value)]


def _json_scalar(value: object, name: str) -> str | float | None:
    if (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int | float) and not isinstance(value, bool))
    ):
        return value
    raise RequestFieldError(name, f"expected a number, found {_kind(value)}")


def fields_from_json(document: object, check_name: Callable[[str, str], str]) -> ScanFields:
    """The fields of a JSON request: an object with any of `FIELDS`; files are
    `{"name", "content"}` objects; `check_name(name, where)` vets a file name."""
    if not isinstance(document, dict):
        raise RequestFieldError("$", f"expected an object with some of {', '.join(FIELDS)}")
    unknown = sorted(set(document) - set(FIELDS))
    if unknown:
        raise RequestFieldError(unknown[0], f"unknown field; expected some of {', '.join(FIELDS)}")
    get = document.get
    conditional = get("failOnConditional", False)
    if not isinstance(conditional, bool):
        raise RequestFieldError(
            "failOnConditional", f"expected true or false, found {_kind(conditional)}"
        )
    sources = get("sources")
    ignore = get("ignore")
    return ScanFields(
        inputs=_json_files(get("inputs", []), "inputs", check_name),
        purls=[(text, f"purls {text}") for text in _strings(get("purls", []), "purls")],
        min_confidence=_json_scalar(get("minConfidence"), "minConfidence"),
        sources=None if sources is None else _strings(sources, "sources"),
        fail_on=_strings(get("failOn", []), "failOn"),
        fail_on_conditional=conditional,
        ignore=None if ignore is None else _json_file(ignore, "ignore", check_name),
        vex=_json_files(get("vex", []), "vex", check_name),
        max_age=_json_scalar(get("maxAge"), "maxAge"),
    )
