"""CPE 2.3 names, match criteria, and the matching rules behind the NVD filters.

Pure. Chosen semantics (spec `nvd-api-behaviour.md` §6.1-§6.3, §4.1, §5.1); NVD does not
publish its algorithms, so each rule below is a decision, cited by the compatibility doc.

Parsing (`parse_cpe`):
* The text must start with `cpe:2.3:` (any case). The rest is split on colons that are
  not escaped by a backslash; `\\:` and every other `\\x` escape stay inside a component.
  A backslash at the very end is an error.
* At most 11 components; with `partial=True` missing trailing components are `*`
  (`cpe:2.3:a:microsoft:access` is `cpe:2.3:a:microsoft:access:*:*:*:*:*:*:*:*`), with
  `partial=False` all 11 are required. An empty component is `*` (NVD answers
  `…:access:::` like the padded form).
* `part` must be `a`, `o`, `h` or `*`. Other components are not checked further.
* Components are normalized: lower-cased, and escapes made canonical: every ASCII
  character other than letters, digits, `.`, `_` and `-` is escaped, nothing else is
  (`xerces-c++` and `xerces-c\\+\\+` are the same name, and `\\.` is `.`). `*` alone is
  ANY and `-` alone is NA; an escaped `\\-` or `\\*` stays a literal value. A `*` or `?`
  *inside* a value is a literal character, not a wildcard.
* Two names are equal when their normalized components are; `formatted()` gives the
  13-field normalized string, and `parse_cpe(c.formatted(), partial=False) == c`.

Version ranges (`CriteriaRange`): a `cpeMatch` criteria plus its optional
`versionStart{Including,Excluding}` / `versionEnd{Including,Excluding}` bounds, ordered by
`assay.nvd.versions.compare_versions`. Bounds only apply when the criteria's version is
`*`; a criteria with a literal version is that version alone.

`name_matches` (the CVE API's `cpeName`, §6.2), per component:
* not the version: criteria `*` or name `*` matches, otherwise the values must be equal
  (so criteria `-` matches only `-`, or a name `*`);
* version: a literal criteria version must equal the name's (or the name is `*`);
  criteria `*` without bounds matches any version; criteria `*` with bounds matches a
  name version inside them, and also a name version `*` or `-` (the name does not
  exclude the range).

`virtual_matches` (the CVE API's `virtualMatchString` + `versionStart/End`, §6.3):
* every component of the match string other than `*` must equal the criteria's: a
  criteria `*` does not satisfy a specific requested value;
* the version is handled as a range: a literal version `v` in the match string asks for
  `[v, v]`, `versionStart`/`versionEnd` (value, inclusive) narrow it further, and the
  criteria must overlap that range. A literal criteria version overlaps when it lies
  inside; criteria `*` overlaps when its own bounds (if any) intersect the range, so `*`
  without bounds overlaps every range; criteria `-` overlaps no range. Versions are
  treated as dense: `(1.0, 1.1)` is not empty. A requested version `-` matches only `-`.

`matches_match_string` (the CPE API's `cpeMatchString`, §4.1, and cpematch's
`matchStringSearch`, §5.1): each pattern component `*` matches anything, otherwise it
must equal the candidate's (a candidate `*` does not satisfy a specific value).

`criteria_expands_to` (a criteria's `matches` list when none is stored): criteria `*`
matches any value of the dictionary name, other values must be equal; a literal
criteria version must equal the name's; criteria `*` with bounds matches only names
whose version is a real version inside them (not `*` or `-`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, NamedTuple

from assay.errors import InputError
from assay.nvd.versions import version_key

__all__ = [
    "ANY",
    "COMPONENT_COUNT",
    "COMPONENT_NAMES",
    "NA",
    "PREFIX",
    "VERSION_INDEX",
    "Cpe",
    "CriteriaRange",
    "InvalidCpe",
    "criteria_expands_to",
    "matches_match_string",
    "name_matches",
    "parse_cpe",
    "virtual_matches",
]

PREFIX = "cpe:2.3:"
ANY = "*"
NA = "-"
COMPONENT_NAMES = (
    "part",
    "vendor",
    "product",
    "version",
    "update",
    "edition",
    "language",
    "sw_edition",
    "target_sw",
    "target_hw",
    "other",
)
COMPONENT_COUNT = len(COMPONENT_NAMES)
VERSION_INDEX = 3
PARTS = frozenset({"a", "o", "h", ANY})

_NON_VERSION = tuple(i for i in range(COMPONENT_COUNT) if i != VERSION_INDEX)
_SIMPLE = re.compile(r"[a-z0-9._\-*:]*")
_FIELD = re.compile(r"(?:[^\\:]|\\.)*", re.DOTALL)
_PLAIN = re.compile(r"[a-z0-9._\-]+")
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
# ASCII characters that are quoted in the canonical form: all but letters, digits, . _ -
_QUOTED = re.compile(r"[\x00-\x2c\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]")

Bound = tuple[bytes, bool]  # (version key, inclusive)


class InvalidCpe(InputError):
    """A CPE name, match string or criteria is malformed; the reason says what is wrong."""

    def __init__(self, reason: str, *, text: str = "", where: str = "") -> None:
        super().__init__(where, reason)
        self.text = text


class Cpe(NamedTuple):
    """A CPE 2.3 name with its 11 normalized components (build it with `parse_cpe`)."""

    part: str
    vendor: str
    product: str
    version: str
    update: str
    edition: str
    language: str
    sw_edition: str
    target_sw: str
    target_hw: str
    other: str

    @property
    def components(self) -> tuple[str, ...]:
        """The 11 components, in order."""
        return tuple(self)

    def formatted(self) -> str:
        """The 13-field normalized formatted string (`cpe:2.3:…`)."""
        return PREFIX + ":".join(self)


def _shown(text: str) -> str:
    # Reasons end up in an HTTP header: ASCII, printable, bounded.
    safe = "".join(ch if " " <= ch <= "~" else "?" for ch in text[:60])
    return "'" + safe + ("...'" if len(text) > 60 else "'")


def _normalize(raw: str) -> str:
    """One lower-cased component in canonical form (see module docstring)."""
    if _PLAIN.fullmatch(raw):
        return raw
    if not raw or raw == ANY:
        return ANY
    value = _UNESCAPE.sub(r"\1", raw) if "\\" in raw else raw
    if value == NA:
        return "\\-"  # an escaped hyphen is a literal, not NA
    return _QUOTED.sub(r"\\\g<0>", value)


def _split(text: str, lowered: str) -> list[str]:
    components: list[str] = []
    position, length = len(PREFIX), len(lowered)
    while True:
        end = _FIELD.match(lowered, position).end()  # type: ignore[union-attr]  # matches ""
        components.append(lowered[position:end])
        if end == length:
            break
        if lowered[end] != ":":  # only a lone backslash at the end stops the pattern
            raise InvalidCpe("a CPE name must not end with a lone backslash", text=text)
        position = end + 1
    if len(components) > COMPONENT_COUNT:
        raise InvalidCpe(_too_many(len(components)), text=text)
    return components


def _too_many(count: int) -> str:
    return (
        f"a CPE 2.3 name has at most {COMPONENT_COUNT} components after 'cpe:2.3:', found {count}"
    )


@lru_cache(maxsize=65536)
def _parse(text: str, partial: bool) -> Cpe:
    lowered = text.lower()
    if not lowered.startswith(PREFIX):
        raise InvalidCpe(
            f"a CPE 2.3 name must start with 'cpe:2.3:', found {_shown(text)}", text=text
        )
    rest = lowered[len(PREFIX) :]
    if _SIMPLE.fullmatch(rest):
        # The common case (no escapes, no punctuation): a plain split will do.
        raw = rest.split(":")
        if len(raw) > COMPONENT_COUNT:
            raise InvalidCpe(_too_many(len(raw)), text=text)
    else:
        raw = _split(text, lowered)
    if len(raw) < COMPONENT_COUNT:
        if not partial:
            raise InvalidCpe(
                f"a CPE 2.3 name needs all {COMPONENT_COUNT} components after 'cpe:2.3:', "
                f"found {len(raw)}",
                text=text,
            )
        raw.extend([ANY] * (COMPONENT_COUNT - len(raw)))
    cpe = Cpe(*map(_normalize, raw))
    if cpe.part not in PARTS:
        raise InvalidCpe(
            f"the part component must be a, o, h or *, found {_shown(cpe.part)}", text=text
        )
    return cpe


def parse_cpe(text: str, *, partial: bool) -> Cpe:
    """Parse a CPE 2.3 formatted string; `partial` allows fewer than 11 components."""
    return _parse(text, partial)


# A criteria's bounds in NVD JSON, in the order of `CriteriaRange`'s fields.
_BOUND_KEYS: Final = (
    "versionStartIncluding",
    "versionStartExcluding",
    "versionEndIncluding",
    "versionEndExcluding",
)


@dataclass(frozen=True, slots=True)
class CriteriaRange:
    """A `cpeMatch` criteria (or match-criteria record) and its optional version bounds."""

    criteria: Cpe
    version_start_including: str | None = None
    version_start_excluding: str | None = None
    version_end_including: str | None = None
    version_end_excluding: str | None = None
    # Precomputed for the per-request hot path: bounds as version keys, and the
    # (index, value) of every component other than the version that is not `*`.
    _low: Bound | None = field(init=False, repr=False, compare=False)
    _high: Bound | None = field(init=False, repr=False, compare=False)
    _fixed: tuple[tuple[int, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        low = _bound(self.version_start_including, self.version_start_excluding, "versionStart")
        high = _bound(self.version_end_including, self.version_end_excluding, "versionEnd")
        if self.criteria.version != ANY:
            # A literal version is that version alone (NVD never bounds one).
            literal = (version_key(self.criteria.version), True)
            low = high = None if self.criteria.version == NA else literal
        object.__setattr__(self, "_low", low)
        object.__setattr__(self, "_high", high)
        fixed = tuple((i, self.criteria[i]) for i in _NON_VERSION if self.criteria[i] != ANY)
        object.__setattr__(self, "_fixed", fixed)

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> CriteriaRange:
        """Build from a `cpeMatch` item or a cpematch `matchString` record (NVD JSON)."""
        text = obj.get("criteria")
        if not isinstance(text, str):
            raise InvalidCpe("expected a CPE 2.3 string", where="criteria")
        bounds: list[str | None] = []
        for name in _BOUND_KEYS:
            value = obj.get(name)
            if value is not None and (not isinstance(value, str) or not value):
                raise InvalidCpe("expected a non-empty version string", where=name)
            bounds.append(value)
        try:
            cpe = parse_cpe(text, partial=False)
        except InvalidCpe as error:
            raise InvalidCpe(error.reason, text=text, where="criteria") from None
        return cls(cpe, *bounds)

    @property
    def start(self) -> tuple[str, bool] | None:
        """The lower bound as (version, inclusive), or None."""
        return _either(self.version_start_including, self.version_start_excluding)

    @property
    def end(self) -> tuple[str, bool] | None:
        """The upper bound as (version, inclusive), or None."""
        return _either(self.version_end_including, self.version_end_excluding)

    @property
    def has_bounds(self) -> bool:
        """True when the criteria version is `*` and at least one bound is set."""
        return self.criteria.version == ANY and (self._low is not None or self._high is not None)

    def contains_version(self, version: str) -> bool:
        """Whether a concrete `version` lies within this criteria's version constraint."""
        if self.criteria.version == NA:
            return False
        return _within(version_key(version), self._low, self._high)


def _within(key: bytes, low: Bound | None, high: Bound | None) -> bool:
    if low is not None and (key < low[0] or (key == low[0] and not low[1])):
        return False
    return high is None or key < high[0] or (key == high[0] and high[1])


def _bound(including: str | None, excluding: str | None, name: str) -> Bound | None:
    if including is not None and excluding is not None:
        raise InvalidCpe(f"{name}Including and {name}Excluding cannot both be set", where=name)
    given = _either(including, excluding)
    return None if given is None else (version_key(given[0]), given[1])


def _either(including: str | None, excluding: str | None) -> tuple[str, bool] | None:
    """An including/excluding pair as (version, inclusive); None when neither is set."""
    if including is not None:
        return including, True
    if excluding is not None:
        return excluding, False
    return None


def _tighter(a: Bound | None, b: Bound | None, *, lower: bool) -> Bound | None:
    """The tighter of two lower (`lower`) or upper bounds; None is no bound."""
    if a is None or b is None:
        return b if a is None else a
    if a[0] != b[0]:
        return a if (a[0] > b[0]) == lower else b
    return a if not a[1] else b  # same version: exclusive is tighter


def _nonempty(low: Bound | None, high: Bound | None) -> bool:
    if low is None or high is None:
        return True
    return low[0] < high[0] or (low[0] == high[0] and low[1] and high[1])


def name_matches(name: Cpe, criteria: CriteriaRange) -> bool:
    """Whether a CPE name hits a criteria, as for the CVE API's `cpeName` (§6.2)."""
    # Criteria `*` or name `*` matches; otherwise equal (normalized, so case-insensitive).
    for i, wanted in criteria._fixed:
        value = name[i]
        if value != wanted and value != ANY:  # noqa: PLR1714  # faster than `not in`
            return False
    wanted, version = criteria.criteria.version, name.version
    if wanted != ANY:
        return version in (wanted, ANY)
    low, high = criteria._low, criteria._high
    if (low is None and high is None) or version in (ANY, NA):
        return True
    return _within(version_key(version), low, high)


def virtual_matches(
    match: Cpe,
    criteria: CriteriaRange,
    *,
    start: tuple[str, bool] | None,
    end: tuple[str, bool] | None,
) -> bool:
    """Whether a criteria answers a `virtualMatchString` (+ versionStart/End, §6.3).

    `start` and `end` are (version, inclusive) or None.
    """
    target = criteria.criteria
    for i in _NON_VERSION:
        wanted = match[i]
        if wanted not in (ANY, target[i]):
            return False
    requested = match.version
    if requested == NA:
        return target.version == NA and start is None and end is None
    low, high = _requested_range(requested, start, end)
    if low is None and high is None:
        return True
    if target.version == NA:
        return False
    return _nonempty(
        _tighter(low, criteria._low, lower=True),
        _tighter(high, criteria._high, lower=False),
    )


def _requested_range(
    requested: str, start: tuple[str, bool] | None, end: tuple[str, bool] | None
) -> tuple[Bound | None, Bound | None]:
    """The versions a `virtualMatchString` asks for: its own version (unless `*`),
    narrowed by `versionStart`/`versionEnd`."""
    low = None if start is None else (version_key(start[0]), start[1])
    high = None if end is None else (version_key(end[0]), end[1])
    if requested == ANY:
        return low, high
    literal = (version_key(requested), True)
    return _tighter(low, literal, lower=True), _tighter(high, literal, lower=False)


def matches_match_string(pattern: Cpe, candidate: Cpe) -> bool:
    """Dictionary-style match (`cpeMatchString`, `matchStringSearch`): pattern `*` is ANY."""
    return all(wanted in (ANY, value) for wanted, value in zip(pattern, candidate, strict=True))


def criteria_expands_to(criteria: CriteriaRange, name: Cpe) -> bool:
    """Whether a dictionary CPE name belongs to a criteria's `matches` list."""
    for i, wanted in criteria._fixed:
        if name[i] != wanted:
            return False
    wanted, version = criteria.criteria.version, name.version
    if wanted != ANY:
        return version == wanted
    if not criteria.has_bounds:
        return True
    return version not in (ANY, NA) and criteria.contains_version(version)
