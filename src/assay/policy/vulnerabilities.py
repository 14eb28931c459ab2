"""The vulnerability rules of scans and policies: `--fail-on` rules and ignore entries.

Pure. A rule is one or more conditions joined by `,` (all must hold):
`severity>=HIGH` (also `>` and `=`; NONE < LOW < MEDIUM < HIGH < CRITICAL), `cvss>=9.0`
(also `>`), `kev` (listed in CISA's Known Exploited Vulnerabilities), `epss>=0.5` (also
`>` and `=`: FIRST's EPSS probability, 0 to 1; a finding without a score does not
match), `source=osv` (the finding comes from that source: `nvd`, `osv`, `cve5`,
`cisa-adp`). Several rules fail when any one holds.

An ignore entry excuses one CVE (`id`), optionally for one component (`component`: a
ref, name, `name@version`, purl with or without version, or CPE name), with a `reason`
and an `expires` date: it applies up to and including that day (UTC). Ignore files
(YAML or JSON, duplicate keys refused) hold a list of them under `ignore`.

A policy's `vulnerabilities:` section (`VulnerabilityRule`, docs/verification.md):

    vulnerabilities:
      failOn: ["severity>=HIGH", "kev"]
      ignore:
        - {id: CVE-2021-44228, reason: JNDI disabled, expires: 2026-12-31}
      maxAge: 7            # days since the store's last completed sync
      vex:
        signers: [vendor]  # only VEX signed by these policy signers counts
      attestations:        # a signed vulns attestation instead of a scan
        signers: [scanner]
        maxAge: 1d         # by its scanFinishedOn (s, m, h, d, w; a bare number is days)

`assay.audit` evaluates these over scan results; nothing here knows a store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from operator import eq, ge, gt
from typing import Any, Final, Protocol

from assay.errors import InputError

SEVERITY_ORDER: Final = {"NONE": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}


class Rated(Protocol):
    """What a rule reads of a finding."""

    @property
    def severity_rank(self) -> int: ...

    @property
    def base_score(self) -> float | None: ...

    @property
    def kev(self) -> bool: ...

    @property
    def epss_score(self) -> float | None: ...

    @property
    def source_names(self) -> tuple[str, ...]: ...


MAX_IGNORE_BYTES: Final = 1024 * 1024
MAX_IGNORE_ENTRIES: Final = 10_000
CVE_ID: Final = re.compile(r"CVE-\d{4}-\d{4,}")
_CONDITION: Final = re.compile(
    r"\s*(severity|cvss|epss)\s*(>=|>|=)\s*([A-Za-z]+|\d+(?:\.\d+)?)\s*|\s*(kev)\s*"
    r"|\s*source\s*=\s*([a-z0-9-]+)\s*"
)
FINDING_SOURCES: Final = ("nvd", "osv", "cve5", "cisa-adp")
"""What `source=...` names (a finding's `sources[].source`)."""


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    """`severity`, `cvss`, `kev`, `epss` or `source`."""
    operator: str = ">="
    value: float = 0.0
    """The severity's rank (`SEVERITY_ORDER`), the CVSS base score or the EPSS score."""
    source: str = ""
    """For `source`: one of `FINDING_SOURCES`."""

    def holds(self, vulnerability: Rated) -> bool:
        if self.field == "kev":
            return vulnerability.kev
        if self.field == "source":
            return self.source in vulnerability.source_names
        found = self._measure(vulnerability)
        return found is not None and _COMPARISONS[self.operator](found, self.value)

    def _measure(self, vulnerability: Rated) -> float | None:
        """The severity's rank, the CVSS base score or the EPSS score (None: unscored)."""
        if self.field == "severity":
            return float(vulnerability.severity_rank)
        return vulnerability.base_score if self.field == "cvss" else vulnerability.epss_score


_COMPARISONS: Final[dict[str, Callable[[float, float], bool]]] = {">=": ge, ">": gt, "=": eq}


@dataclass(frozen=True, slots=True)
class FailRule:
    text: str
    conditions: tuple[Condition, ...]

    def holds(self, vulnerability: Rated) -> bool:
        return all(condition.holds(vulnerability) for condition in self.conditions)


def parse_fail_on(text: str, where: str = "--fail-on") -> FailRule:
    """One rule (`severity>=HIGH`, `cvss>=9.0`, `kev`, `epss>=0.5`, `source=osv`, or
    several joined by `,`)."""
    return FailRule(text, tuple(_condition(part, where) for part in text.split(",")))


def _condition(part: str, where: str) -> Condition:
    match = _CONDITION.fullmatch(part)
    if match is None:
        raise InputError(
            where,
            "expected severity>=LEVEL, cvss>=SCORE, kev, epss>=PROBABILITY or "
            f"source=NAME (joined by ','), found {part!r}",
        )
    if match.group(4):
        return Condition("kev")
    if match.group(5):
        return Condition("source", "=", 0.0, _finding_source(match.group(5), where))
    field, operator, value = match.group(1), match.group(2), match.group(3)
    return Condition(field, operator, _THRESHOLDS[field](value, where))


def _finding_source(name: str, where: str) -> str:
    if name not in FINDING_SOURCES:
        raise InputError(where, f"expected a source {'/'.join(FINDING_SOURCES)}, found {name!r}")
    return name


def _severity_rank(value: str, where: str) -> float:
    level = value.upper()
    if level not in SEVERITY_ORDER:
        raise InputError(where, f"expected a severity {'/'.join(SEVERITY_ORDER)}, found {value!r}")
    return float(SEVERITY_ORDER[level])


def _score(value: str, top: float) -> float | None:
    """A number from 0 to `top`, or None."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0.0 <= number <= top else None


def _probability(value: str, where: str) -> float:
    probability = _score(value, 1.0)
    if probability is None:
        raise InputError(where, f"expected an EPSS probability 0-1, found {value!r}")
    return probability


def _cvss_score(value: str, where: str) -> float:
    score = _score(value, 10.0)
    if score is None:
        raise InputError(where, f"expected a CVSS score 0-10, found {value!r}")
    return score


_THRESHOLDS: Final[dict[str, Callable[[str, str], float]]] = {
    "severity": _severity_rank,
    "epss": _probability,
    "cvss": _cvss_score,
}
"""How each compared field reads its threshold."""


@dataclass(frozen=True, slots=True)
class IgnoreEntry:
    id: str
    reason: str
    expires: date
    component: str | None = None
    where: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "component": self.component,
            "reason": self.reason,
            "expires": self.expires.isoformat(),
        }


def parse_ignore_file(data: bytes, source: str) -> tuple[IgnoreEntry, ...]:
    """The entries of an ignore file (see the module docstring)."""
    if len(data) > MAX_IGNORE_BYTES:
        raise InputError(source, f"expected at most {MAX_IGNORE_BYTES} bytes, found {len(data)}")
    from assay import _yaml_strict

    document = _yaml_strict.load(data, source)  # no aliases, bounded depth, keys once
    if not isinstance(document, Mapping) or set(document) - {"ignore"}:
        raise InputError(f"{source}: $", "expected an object with one key, 'ignore'")
    return parse_ignore_entries(document.get("ignore") or [], f"{source}: $.ignore")


def parse_ignore_entries(items: object, where: str) -> tuple[IgnoreEntry, ...]:
    """Ignore entries from parsed data (an ignore file's, or a policy's `ignore`)."""
    if not isinstance(items, list):
        raise InputError(where, "expected an array of entries")
    if len(items) > MAX_IGNORE_ENTRIES:
        raise InputError(where, f"expected at most {MAX_IGNORE_ENTRIES} entries")
    return tuple(_ignore_entry(item, f"{where}[{index}]") for index, item in enumerate(items))


def _ignore_entry(item: object, path: str) -> IgnoreEntry:
    entry = _entry_mapping(item, path)
    identifier = _text(entry.get("id"))
    if not CVE_ID.fullmatch(identifier.upper()):
        raise InputError(
            f"{path}.id", f"expected a CVE id (CVE-YYYY-NNNN), found {entry.get('id')!r}"
        )
    reason = _text(entry.get("reason")).strip()
    if not reason:
        raise InputError(f"{path}.reason", "expected a non-empty reason")
    expires = _date(entry.get("expires"), f"{path}.expires")
    component = entry.get("component")
    if component is not None and not _text(component):
        raise InputError(f"{path}.component", "expected a non-empty string")
    return IgnoreEntry(identifier.upper(), reason, expires, component, path)


def _entry_mapping(item: object, path: str) -> Mapping[str, Any]:
    """An ignore entry's object, with only the fields an entry has."""
    if not isinstance(item, Mapping):
        raise InputError(path, "expected an object with id, reason and expires")
    unknown = sorted(str(k) for k in item if k not in ("id", "component", "reason", "expires"))
    if unknown:
        raise InputError(
            f"{path}.{unknown[0]}", "unknown field; expected id, component, reason, expires"
        )
    return item


def _text(value: object) -> str:
    """A string value, or "" for anything else (read as missing)."""
    return value if isinstance(value, str) else ""


def _date(value: object, where: str) -> date:
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value)
        except ValueError:
            value = None
    if not isinstance(value, date):
        raise InputError(where, "expected a date (YYYY-MM-DD)")
    return value


SCANNED_LEVEL_PREFIX: Final = "ASSAY_VULN_SCANNED_"
"""`verifiedLevels` value of a vulnerability scan at most a given age at `timeVerified`:
`ASSAY_VULN_SCANNED_1D`, `…_12H` (`scanned_level`, `parse_scanned_level`)."""
DEFAULT_SCAN_AGE: Final = timedelta(days=1)
_DURATION: Final = re.compile(r"(\d+)([smhdw])")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_FIELDS: Final = ("failOn", "ignore", "maxAge", "vex", "attestations")


def parse_duration(value: object, where: str) -> timedelta:
    """`30m`, `12h`, `1d`, `2w` (or a number of days) as a positive time span."""
    if isinstance(value, bool):
        raise InputError(where, f"expected a duration such as 1d or 12h, found {value!r}")
    if isinstance(value, int | float):
        if value <= 0:
            raise InputError(where, f"expected a duration above 0, found {value!r}")
        return timedelta(days=float(value))
    span = _duration(value.strip()) if isinstance(value, str) else None
    if span is None:
        raise InputError(where, f"expected a duration such as 1d or 12h, found {value!r}")
    return span


def _duration(text: str) -> timedelta | None:
    """`<count><unit>` (unit s/m/h/d/w, count above 0) as a time span, else None."""
    match = _DURATION.fullmatch(text)
    if match is None or int(match.group(1)) == 0:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


def scanned_level(age: timedelta) -> str:
    """The level name of a scan at most `age` old: the largest whole unit (`1D`, `36H`)."""
    seconds = int(age.total_seconds())
    for unit, size in (("W", 604800), ("D", 86400), ("H", 3600), ("M", 60)):
        if seconds % size == 0:
            return f"{SCANNED_LEVEL_PREFIX}{seconds // size}{unit}"
    return f"{SCANNED_LEVEL_PREFIX}{seconds}S"


def parse_scanned_level(text: str) -> timedelta | None:
    """The age an `ASSAY_VULN_SCANNED_…` level names (None for any other value)."""
    if not text.startswith(SCANNED_LEVEL_PREFIX):
        return None
    return _duration(text[len(SCANNED_LEVEL_PREFIX) :].lower())


@dataclass(frozen=True, slots=True)
class AttestationRule:
    """`attestations:`: accept a signed vulnerability scan of the subject instead of
    scanning, signed by one of `signers` and finished at most `max_age` ago."""

    signers: tuple[str, ...]
    max_age: timedelta = DEFAULT_SCAN_AGE

    @property
    def level(self) -> str:
        return scanned_level(self.max_age)


@dataclass(frozen=True, slots=True)
class VulnerabilityRule:
    """A policy's `vulnerabilities:` section."""

    fail_on: tuple[FailRule, ...]
    ignore: tuple[IgnoreEntry, ...] = ()
    max_age_days: float | None = None
    """The oldest a store's last completed sync may be, in days (None: any age)."""
    vex_signers: tuple[str, ...] = ()
    """`vex.signers`: only VEX signed by these policy signers counts (empty: any VEX
    given counts, signed or not)."""
    attestations: AttestationRule | None = None


def _names(value: object, where: str, known: Collection[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise InputError(where, "expected a non-empty array of signer names")
    return tuple(_name(name, f"{where}[{index}]", known) for index, name in enumerate(value))


def _name(name: object, where: str, known: Collection[str]) -> str:
    """A signer name, one of the policy's `known` signers when it has any."""
    if not isinstance(name, str) or not name:
        raise InputError(where, f"expected a signer name, found {name!r}")
    if known and name not in known:
        raise InputError(
            where,
            f"expected the name of one of the policy's signers ({', '.join(sorted(known))}), "
            f"found {name!r}",
        )
    return name


def _section(value: object, where: str, allowed: tuple[str, ...]) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise InputError(where, f"expected an object with {', '.join(allowed)}")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", f"unknown field; expected {', '.join(allowed)}")
    return value


def evidence_signer_names(value: object) -> frozenset[object]:
    """The names `vex.signers` and `attestations.signers` give in a raw `vulnerabilities:`
    section (unchecked: the section is checked when parsed). A policy signer named there
    signs VEX or scans and may vouch for no builder."""
    names: set[object] = set()
    if isinstance(value, Mapping):
        for section in ("vex", "attestations"):
            part = value.get(section)
            listed = part.get("signers") if isinstance(part, Mapping) else None
            if isinstance(listed, list):
                names.update(n for n in listed if isinstance(n, str))
    return frozenset(names)


def parse_vulnerability_rule(
    value: object, where: str, signers: Collection[str] = ()
) -> VulnerabilityRule:
    """The `vulnerabilities:` section of a policy (`where` is its path, for errors);
    `signers` are the names of the policy's signers, which `vex` and `attestations` name."""
    value = _section(value, where, _FIELDS)
    # In the order of the file's checks: with several errors, the first is named.
    vex_signers = _vex_signers(value.get("vex"), f"{where}.vex", signers)
    attestations = _attestation_rule(value.get("attestations"), f"{where}.attestations", signers)
    rules = _fail_on_rules(value.get("failOn", ["severity>=HIGH"]), f"{where}.failOn")
    max_age = _days(value.get("maxAge"), f"{where}.maxAge")
    return VulnerabilityRule(
        rules,
        parse_ignore_entries(value.get("ignore") or [], f"{where}.ignore"),
        max_age,
        vex_signers,
        attestations,
    )


def _days(value: object, where: str) -> float | None:
    """A number of days above 0 (None when unset)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InputError(where, f"expected a number of days above 0, found {value!r}")
    return float(value)


def _vex_signers(value: object, where: str, signers: Collection[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    vex = _section(value, where, ("signers",))
    return _names(vex.get("signers"), f"{where}.signers", signers)


def _attestation_rule(
    value: object, where: str, signers: Collection[str]
) -> AttestationRule | None:
    if value is None:
        return None
    section = _section(value, where, ("signers", "maxAge"))
    max_age = section.get("maxAge")
    return AttestationRule(
        _names(section.get("signers"), f"{where}.signers", signers),
        DEFAULT_SCAN_AGE if max_age is None else parse_duration(max_age, f"{where}.maxAge"),
    )


def _fail_on_rules(fail_on: object, where: str) -> tuple[FailRule, ...]:
    if isinstance(fail_on, str):
        fail_on = [fail_on]
    if not isinstance(fail_on, list) or not fail_on:
        raise InputError(where, "expected a non-empty array of rules")
    rules = []
    for index, text in enumerate(fail_on):
        if not isinstance(text, str):
            raise InputError(f"{where}[{index}]", "expected a rule such as severity>=HIGH")
        rules.append(parse_fail_on(text, f"{where}[{index}]"))
    return tuple(rules)
