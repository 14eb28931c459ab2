"""When a scan fails: `--fail-on` rules, and the ignore file that excuses findings.

Pure. A rule is one or more conditions joined by `,` (all must hold):
`severity>=HIGH` (also `>` and `=`; NONE < LOW < MEDIUM < HIGH < CRITICAL), `cvss>=9.0`
(also `>`), `kev` (listed in CISA's Known Exploited Vulnerabilities). Several rules
fail the scan when any one holds. Only findings that are neither ignored nor
conditional count: a conditional finding depends on a platform the input does not list.

The ignore file (YAML or JSON; duplicate keys are an error):

    ignore:
      - id: CVE-2021-44228
        component: pkg:maven/org.apache.logging.log4j/log4j-core   # optional
        reason: JNDI lookups are disabled in this build
        expires: 2026-12-31

`component`, when given, is a component's ref, name, `name@version`, purl (with or
without its version) or one of its CPE names. An entry applies up to and including its
`expires` day (UTC); after that it stops applying and the verdict lists it as expired.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from assay.audit.model import SEVERITY_ORDER, ComponentResult, ScanResult, Vulnerability
from assay.errors import InputError

__all__ = [
    "Condition",
    "FailRule",
    "IgnoreEntry",
    "Verdict",
    "evaluate",
    "parse_fail_on",
    "parse_ignore_entries",
    "parse_ignore_file",
]

MAX_IGNORE_BYTES: Final = 1024 * 1024
MAX_IGNORE_ENTRIES: Final = 10_000
CVE_ID: Final = re.compile(r"CVE-\d{4}-\d{4,}")
_CONDITION: Final = re.compile(
    r"\s*(severity|cvss)\s*(>=|>|=)\s*([A-Za-z]+|\d+(?:\.\d+)?)\s*|\s*(kev)\s*"
)


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    """`severity`, `cvss` or `kev`."""
    operator: str = ">="
    value: float = 0.0
    """The severity's rank (`SEVERITY_ORDER`) or the CVSS base score."""

    def holds(self, vulnerability: Vulnerability) -> bool:
        if self.field == "kev":
            return vulnerability.kev
        if self.field == "severity":
            found = float(vulnerability.severity_rank)
        else:
            if vulnerability.cvss is None:
                return False
            found = vulnerability.cvss.base_score
        if self.operator == ">=":
            return found >= self.value
        if self.operator == ">":
            return found > self.value
        return found == self.value


@dataclass(frozen=True, slots=True)
class FailRule:
    text: str
    conditions: tuple[Condition, ...]

    def holds(self, vulnerability: Vulnerability) -> bool:
        return all(condition.holds(vulnerability) for condition in self.conditions)


def parse_fail_on(text: str, where: str = "--fail-on") -> FailRule:
    """One rule (`severity>=HIGH`, `cvss>=9.0`, `kev`, or several joined by `,`)."""
    conditions: list[Condition] = []
    for part in text.split(","):
        match = _CONDITION.fullmatch(part)
        if match is None:
            raise InputError(
                where,
                f"expected severity>=LEVEL, cvss>=SCORE or kev (joined by ','), found {part!r}",
            )
        if match.group(4):
            conditions.append(Condition("kev"))
            continue
        field, operator, value = match.group(1), match.group(2), match.group(3)
        if field == "severity":
            level = value.upper()
            if level not in SEVERITY_ORDER:
                raise InputError(
                    where, f"expected a severity {'/'.join(SEVERITY_ORDER)}, found {value!r}"
                )
            conditions.append(Condition(field, operator, float(SEVERITY_ORDER[level])))
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

    def covers(self, component: ComponentResult, vulnerability: Vulnerability) -> bool:
        if vulnerability.id != self.id:
            return False
        if self.component is None:
            return True
        c = component.component
        names = {c.ref, c.name, f"{c.name}@{c.version}", *component.identification.cpes}
        if c.purl:
            names.add(c.purl)
            names.add(c.purl.split("@", 1)[0])
        return self.component in names

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
class Finding:
    component: ComponentResult
    vulnerability: Vulnerability
    ignored_by: IgnoreEntry | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.component.component.ref,
            "id": self.vulnerability.id,
            **({"ignoredBy": self.ignored_by.to_dict()} if self.ignored_by else {}),
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """A scan judged: which findings fail it, which are ignored, which excuses expired."""

    failing: tuple[Finding, ...]
    ignored: tuple[Finding, ...]
    expired: tuple[IgnoreEntry, ...]
    rules: tuple[FailRule, ...]

    @property
    def passed(self) -> bool:
        return not self.failing

    def to_dict(self) -> dict[str, Any]:
        return {
            "failOn": [rule.text for rule in self.rules],
            "passed": self.passed,
            "failing": [f.to_dict() for f in self.failing],
            "ignored": [f.to_dict() for f in self.ignored],
            "expiredIgnores": [e.to_dict() for e in self.expired],
        }


def evaluate(
    result: ScanResult,
    rules: Sequence[FailRule],
    ignores: Sequence[IgnoreEntry],
    *,
    today: date,
) -> Verdict:
    """Judge a scan: a non-ignored, non-conditional finding meeting any rule fails it."""
    active = [entry for entry in ignores if entry.expires >= today]
    expired = tuple(entry for entry in ignores if entry.expires < today)
    failing: list[Finding] = []
    ignored: list[Finding] = []
    for component, vulnerability in result.findings:
        entry = next((e for e in active if e.covers(component, vulnerability)), None)
        if entry is not None:
            ignored.append(Finding(component, vulnerability, entry))
            continue
        if vulnerability.conditional:
            continue
        if any(rule.holds(vulnerability) for rule in rules):
            failing.append(Finding(component, vulnerability))
    return Verdict(tuple(failing), tuple(ignored), expired, tuple(rules))
