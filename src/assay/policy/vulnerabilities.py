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
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
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
        if self.field == "severity":
            found = float(vulnerability.severity_rank)
        else:
            score = vulnerability.base_score if self.field == "cvss" else vulnerability.epss_score
            if score is None:
                return False
            found = score
        if self.operator == ">=":
            return found >= self.value
        if self.operator == ">":
            return found > self.value
        return found == self.value


@dataclass(frozen=True, slots=True)
class FailRule:
    text: str
    conditions: tuple[Condition, ...]

    def holds(self, vulnerability: Rated) -> bool:
        return all(condition.holds(vulnerability) for condition in self.conditions)


def parse_fail_on(text: str, where: str = "--fail-on") -> FailRule:
    """One rule (`severity>=HIGH`, `cvss>=9.0`, `kev`, `epss>=0.5`, `source=osv`, or
    several joined by `,`)."""
    conditions: list[Condition] = []
    for part in text.split(","):
        match = _CONDITION.fullmatch(part)
        if match is None:
            raise InputError(
                where,
                "expected severity>=LEVEL, cvss>=SCORE, kev, epss>=PROBABILITY or "
                f"source=NAME (joined by ','), found {part!r}",
            )
        if match.group(4):
            conditions.append(Condition("kev"))
            continue
        if match.group(5):
            name = match.group(5)
            if name not in FINDING_SOURCES:
                raise InputError(
                    where, f"expected a source {'/'.join(FINDING_SOURCES)}, found {name!r}"
                )
            conditions.append(Condition("source", "=", 0.0, name))
            continue
        field, operator, value = match.group(1), match.group(2), match.group(3)
        if field == "severity":
            level = value.upper()
            if level not in SEVERITY_ORDER:
                raise InputError(
                    where, f"expected a severity {'/'.join(SEVERITY_ORDER)}, found {value!r}"
                )
            conditions.append(Condition(field, operator, float(SEVERITY_ORDER[level])))
        elif field == "epss":
            try:
                probability = float(value)
            except ValueError:
                probability = -1.0
            if not 0.0 <= probability <= 1.0:
                raise InputError(where, f"expected an EPSS probability 0-1, found {value!r}")
            conditions.append(Condition(field, operator, probability))
        else:
            try:
                score = float(value)
            except ValueError:
                raise InputError(where, f"expected a CVSS score 0-10, found {value!r}") from None
            if not 0.0 <= score <= 10.0:
                raise InputError(where, f"expected a CVSS score 0-10, found {value!r}")
            conditions.append(Condition(field, operator, score))
    return FailRule(text, tuple(conditions))


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
    if not isinstance(item, Mapping):
        raise InputError(path, "expected an object with id, reason and expires")
    unknown = sorted(str(k) for k in item if k not in ("id", "component", "reason", "expires"))
    if unknown:
        raise InputError(
            f"{path}.{unknown[0]}", "unknown field; expected id, component, reason, expires"
        )
    identifier = item.get("id")
    if not isinstance(identifier, str) or not CVE_ID.fullmatch(identifier.upper()):
        raise InputError(f"{path}.id", f"expected a CVE id (CVE-YYYY-NNNN), found {identifier!r}")
    reason = item.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InputError(f"{path}.reason", "expected a non-empty reason")
    expires = _date(item.get("expires"), f"{path}.expires")
    component = item.get("component")
    if component is not None and (not isinstance(component, str) or not component):
        raise InputError(f"{path}.component", "expected a non-empty string")
    return IgnoreEntry(identifier.upper(), reason.strip(), expires, component, path)


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
    match = _DURATION.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None or int(match.group(1)) == 0:
        raise InputError(where, f"expected a duration such as 1d or 12h, found {value!r}")
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
    match = _DURATION.fullmatch(text[len(SCANNED_LEVEL_PREFIX) :].lower())
    if match is None or int(match.group(1)) == 0:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


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
    names = []
    for index, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}[{index}]", f"expected a signer name, found {name!r}")
        if known and name not in known:
            raise InputError(
                f"{where}[{index}]",
                f"expected the name of one of the policy's signers ({', '.join(sorted(known))}), "
                f"found {name!r}",
            )
        names.append(name)
    return tuple(names)


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
    if not isinstance(value, Mapping):
        raise InputError(where, f"expected an object with {', '.join(_FIELDS)}")
    unknown = sorted(str(k) for k in value if k not in _FIELDS)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", f"unknown field; expected {', '.join(_FIELDS)}")
    # In the order of the file's checks: with several errors, the first is named.
    vex_signers = _vex_signers(value.get("vex"), f"{where}.vex", signers)
    attestations = _attestation_rule(value.get("attestations"), f"{where}.attestations", signers)
    rules = _fail_on_rules(value.get("failOn", ["severity>=HIGH"]), f"{where}.failOn")
    max_age = value.get("maxAge")
    if max_age is not None and (
        isinstance(max_age, bool) or not isinstance(max_age, int | float) or max_age <= 0
    ):
        raise InputError(f"{where}.maxAge", f"expected a number of days above 0, found {max_age!r}")
    return VulnerabilityRule(
        rules,
        parse_ignore_entries(value.get("ignore") or [], f"{where}.ignore"),
        None if max_age is None else float(max_age),
        vex_signers,
        attestations,
    )


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
