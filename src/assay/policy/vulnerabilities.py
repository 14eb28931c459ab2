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

`assay.audit` evaluates these over scan results; nothing here knows a store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
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


def _yaml_without_duplicates(data: bytes, source: str) -> Any:
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    def mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node)
            if key in result:
                line = key_node.start_mark.line + 1
                raise InputError(f"{source} line {line}", f"duplicate key {key!r}")
            result[key] = loader.construct_object(value_node)
        return result

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(data, Loader=_Loader)  # noqa: S506  # a SafeLoader subclass
    except yaml.YAMLError as error:
        raise InputError(source, f"expected YAML or JSON: {error}") from None


def parse_ignore_file(data: bytes, source: str) -> tuple[IgnoreEntry, ...]:
    """The entries of an ignore file (see the module docstring)."""
    if len(data) > MAX_IGNORE_BYTES:
        raise InputError(source, f"expected at most {MAX_IGNORE_BYTES} bytes, found {len(data)}")
    document = _yaml_without_duplicates(data, source)
    if not isinstance(document, Mapping) or set(document) - {"ignore"}:
        raise InputError(f"{source}: $", "expected an object with one key, 'ignore'")
    return parse_ignore_entries(document.get("ignore") or [], f"{source}: $.ignore")


def parse_ignore_entries(items: object, where: str) -> tuple[IgnoreEntry, ...]:
    """Ignore entries from parsed data (an ignore file's, or a policy's `ignore`)."""
    if not isinstance(items, list):
        raise InputError(where, "expected an array of entries")
    if len(items) > MAX_IGNORE_ENTRIES:
        raise InputError(where, f"expected at most {MAX_IGNORE_ENTRIES} entries")
    entries = []
    for index, item in enumerate(items):
        path = f"{where}[{index}]"
        if not isinstance(item, Mapping):
            raise InputError(path, "expected an object with id, reason and expires")
        unknown = sorted(str(k) for k in item if k not in ("id", "component", "reason", "expires"))
        if unknown:
            raise InputError(
                f"{path}.{unknown[0]}", "unknown field; expected id, component, reason, expires"
            )
        identifier = item.get("id")
        if not isinstance(identifier, str) or not CVE_ID.fullmatch(identifier.upper()):
            raise InputError(
                f"{path}.id", f"expected a CVE id (CVE-YYYY-NNNN), found {identifier!r}"
            )
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(f"{path}.reason", "expected a non-empty reason")
        expires = item.get("expires")
        if isinstance(expires, str):
            try:
                expires = date.fromisoformat(expires)
            except ValueError:
                expires = None
        if not isinstance(expires, date):
            raise InputError(f"{path}.expires", "expected a date (YYYY-MM-DD)")
        component = item.get("component")
        if component is not None and (not isinstance(component, str) or not component):
            raise InputError(f"{path}.component", "expected a non-empty string")
        entries.append(IgnoreEntry(identifier.upper(), reason.strip(), expires, component, path))
    return tuple(entries)


@dataclass(frozen=True, slots=True)
class VulnerabilityRule:
    """A policy's `vulnerabilities:` section."""

    fail_on: tuple[FailRule, ...]
    ignore: tuple[IgnoreEntry, ...] = ()
    max_age_days: float | None = None
    """The oldest a store's last completed sync may be, in days (None: any age)."""


def parse_vulnerability_rule(value: object, where: str) -> VulnerabilityRule:
    """The `vulnerabilities:` section of a policy (`where` is its path, for errors)."""
    if not isinstance(value, Mapping):
        raise InputError(where, "expected an object with failOn, ignore, maxAge")
    unknown = sorted(str(k) for k in value if k not in ("failOn", "ignore", "maxAge"))
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", "unknown field; expected failOn, ignore, maxAge")
    fail_on = value.get("failOn", ["severity>=HIGH"])
    if isinstance(fail_on, str):
        fail_on = [fail_on]
    if not isinstance(fail_on, list) or not fail_on:
        raise InputError(f"{where}.failOn", "expected a non-empty array of rules")
    rules = []
    for index, text in enumerate(fail_on):
        if not isinstance(text, str):
            raise InputError(f"{where}.failOn[{index}]", "expected a rule such as severity>=HIGH")
        rules.append(parse_fail_on(text, f"{where}.failOn[{index}]"))
    max_age = value.get("maxAge")
    if max_age is not None and (
        isinstance(max_age, bool) or not isinstance(max_age, int | float) or max_age <= 0
    ):
        raise InputError(f"{where}.maxAge", f"expected a number of days above 0, found {max_age!r}")
    return VulnerabilityRule(
        tuple(rules),
        parse_ignore_entries(value.get("ignore") or [], f"{where}.ignore"),
        None if max_age is None else float(max_age),
    )
