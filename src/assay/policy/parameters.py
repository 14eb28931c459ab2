"""Policy parameters: a policy that declares `parameters:` takes values for them
(`assay verify --param repository=github.com/ORG/REPO`), so that one shipped policy serves
every repository instead of a copied YAML per repository.

    parameters:
      repository:
        default: github.com/slsa-framework/example-package
        pattern: "github\\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
      tag: {pattern: "v?[0-9A-Za-z._-]+"}
    source:
      repository: ${repository}
      tag: ${tag}

Every `${name}` in a string of the document is replaced by the parameter's value before
the policy is read, so the values are validated as the fields they land in are. A value
must match the parameter's `pattern` (a whole match) when it declares one. A field whose
whole value is `${name}` is left out when the parameter has no value (no default, none
given); a `${name}` inside a longer string needs a value. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from assay.errors import InputError

__all__ = ["MAX_PARAMETERS", "apply_parameters", "parse_assignments"]

MAX_PARAMETERS: Final = 32
_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_PLACEHOLDER: Final = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]{0,63})\}")
_FIELDS: Final = frozenset({"default", "pattern", "description"})
_ABSENT: Final = object()


def parse_assignments(items: list[str], where: str) -> dict[str, str]:
    """`NAME=VALUE` items (`--param`) as a mapping; a name given twice is an error."""
    values: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not _NAME.fullmatch(name):
            raise InputError(where, f"expected NAME=VALUE, found {item[:80]!r}")
        if name in values:
            raise InputError(where, f"expected each parameter once, found {name!r} twice")
        values[name] = value
    return values


def apply_parameters(
    document: Any, given: Mapping[str, str], source: str
) -> tuple[Any, dict[str, str]]:
    """The document with its `parameters:` section removed and every placeholder
    replaced, and the values applied (`InputError` naming the JSON path)."""
    declared_raw = document.pop("parameters", None) if isinstance(document, dict) else None
    declared = _declared(declared_raw, source)
    _refuse_unknown(given, declared, source)
    values = _values(declared, given, source)
    if not declared:
        return document, values
    return _substitute(document, values, declared, source, "$"), values


def _refuse_unknown(
    given: Mapping[str, str], declared: Mapping[str, dict[str, str]], source: str
) -> None:
    unknown = sorted(set(given) - set(declared))
    if unknown:
        takes = ", ".join(sorted(declared)) or "no parameters"
        raise InputError(
            f"{source}: $.parameters", f"{unknown[0]!r} is not a parameter of it (it takes {takes})"
        )


def _values(
    declared: Mapping[str, dict[str, str]], given: Mapping[str, str], source: str
) -> dict[str, str]:
    """Each parameter's value, given or its default, matching its pattern (a parameter
    without either is left out)."""
    values: dict[str, str] = {}
    for name, spec in declared.items():
        value = given.get(name, spec.get("default"))
        if value is None:
            continue
        pattern = spec.get("pattern")
        if pattern is not None and not re.fullmatch(pattern, value):
            raise InputError(
                f"{source}: $.parameters.{name}",
                f"expected a value matching {pattern}, found {value[:80]!r}",
            )
        values[name] = value
    return values


def _declared(value: object, source: str) -> dict[str, dict[str, str]]:
    if value is None:
        return {}
    where = f"{source}: $.parameters"
    if not isinstance(value, dict) or len(value) > MAX_PARAMETERS:
        raise InputError(where, f"expected a mapping of at most {MAX_PARAMETERS} parameters")
    return {name: _spec(name, spec, f"{where}.{name}") for name, spec in value.items()}


def _spec(name: object, given: object, at: str) -> dict[str, str]:
    """One declared parameter's spec: a valid name, known string fields, a valid pattern."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(at, "expected a parameter name (letters, digits, _)")
    spec = {} if given is None else given
    if not isinstance(spec, dict) or set(spec) - _FIELDS:
        raise InputError(at, f"expected a mapping of {', '.join(sorted(_FIELDS))}")
    if not all(isinstance(v, str) for v in spec.values()):
        raise InputError(at, "expected string values")
    if "pattern" in spec:
        _check_pattern(spec["pattern"], f"{at}.pattern")
    return spec


def _check_pattern(pattern: str, at: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise InputError(at, f"expected a regular expression: {error}") from None


def _substitute(
    value: Any, values: Mapping[str, str], declared: Mapping[str, Any], source: str, path: str
) -> Any:
    if isinstance(value, dict):
        entries = [(key, item, f"{path}.{key}") for key, item in value.items()]
        return dict(_substitute_each(entries, values, declared, source))
    if isinstance(value, list):
        entries = [(index, item, f"{path}[{index}]") for index, item in enumerate(value)]
        return [item for _, item in _substitute_each(entries, values, declared, source)]
    if not isinstance(value, str) or "${" not in value:
        return value
    return _substitute_text(value, values, declared, f"{source}: {path}")


def _substitute_each(
    entries: list[tuple[Any, Any, str]],
    values: Mapping[str, str],
    declared: Mapping[str, Any],
    source: str,
) -> list[tuple[Any, Any]]:
    """(key, value) of each (key, value, JSON path) entry with its placeholders replaced,
    in order; an entry that is an absent parameter's lone placeholder is left out."""
    replaced = [(key, _substitute(item, values, declared, source, at)) for key, item, at in entries]
    return [(key, item) for key, item in replaced if item is not _ABSENT]


def _substitute_text(
    value: str, values: Mapping[str, str], declared: Mapping[str, Any], where: str
) -> Any:
    """A string's placeholders replaced; `_ABSENT` when it is one placeholder of a
    parameter declared without a default and not given (the key is then left out)."""
    whole = _PLACEHOLDER.fullmatch(value)
    if whole is not None and whole.group(1) in declared and whole.group(1) not in values:
        return _ABSENT

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in declared:
            raise InputError(where, f"${{{name}}} names no declared parameter")
        if name not in values:
            raise InputError(where, f"needs a value for parameter {name!r}: it has no default")
        return values[name]

    return _PLACEHOLDER.sub(replace, value)
