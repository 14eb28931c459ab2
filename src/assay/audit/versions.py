"""Version ordering by ecosystem, for placing a component's version in a CVE's ranges.

Pure. A purl names the ecosystem, and its own ordering decides where the ecosystem has
one NVD's does not follow (`1.0rc1` is before `1.0` for PEP 440 and semver, after it in
NVD's ordering; `1.0-SNAPSHOT` is before `1.0` for Maven):

| purl type | ordering | library |
| --- | --- | --- |
| pypi | PEP 440 | packaging |
| npm, cargo | semver 2.0 | univers (`SemverVersion`) |
| maven | Maven ComparableVersion | univers (`MavenVersion`) |
| nuget | NuGet | univers |
| gem | RubyGems | univers |
| golang | Go module versions (semver with a `v`) | univers |
| composer | Composer | univers |
| deb, rpm | Debian, RPM | univers |

Anything else, and any version an ecosystem's parser refuses (a range bound written in
NVD's own style, say), falls back to NVD's ordering (`assay.nvd.versions`) for that
comparison: it never fails a scan.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

from assay.nvd.versions import compare_versions

__all__ = ["ECOSYSTEMS", "Comparator", "comparator_for", "compare_in"]

Comparator = Callable[[str, str], int]

_UNIVERS: Final = {
    "npm": "SemverVersion",
    "cargo": "SemverVersion",
    "maven": "MavenVersion",
    "nuget": "NugetVersion",
    "gem": "RubygemsVersion",
    "golang": "GolangVersion",
    "composer": "ComposerVersion",
    "deb": "DebianVersion",
    "rpm": "RpmVersion",
}
ECOSYSTEMS: Final = ("pypi", *_UNIVERS)


class _Unparsable(Exception):
    pass


@lru_cache(maxsize=65536)
def _pep440(text: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        raise _Unparsable(text) from None


def _univers_parser(class_name: str) -> Callable[[str], Any]:
    @lru_cache(maxsize=65536)
    def parse(text: str) -> Any:
        from univers import versions

        cls = getattr(versions, class_name)
        candidate = text[1:] if class_name != "GolangVersion" and text[:1] in "vV" else text
        try:
            return cls(candidate)
        except Exception:  # univers raises many kinds (ValueError, InvalidVersion, ...)
            raise _Unparsable(text) from None

    return parse


_PARSERS: Final[dict[str, Callable[[str], Any]]] = {
    "pypi": _pep440,
    **{kind: _univers_parser(name) for kind, name in _UNIVERS.items()},
}


def _ordered(parse: Callable[[str], Any]) -> Comparator:
    def compare(a: str, b: str) -> int:
        try:
            left, right = parse(a), parse(b)
            return int(left > right) - int(left < right)
        except _Unparsable:
            return compare_versions(a, b)
        except TypeError:  # univers refuses to order some mixed forms
            return compare_versions(a, b)

    return compare


_COMPARATORS: Final[dict[str, Comparator]] = {
    kind: _ordered(parse) for kind, parse in _PARSERS.items()
}


def comparator_for(purl_type: str | None) -> Comparator | None:
    """The ecosystem's ordering for a purl type, or None when NVD's ordering applies."""
    if purl_type is None:
        return None
    return _COMPARATORS.get(purl_type.lower())


def compare_in(purl_type: str | None, a: str, b: str) -> int:
    """-1, 0 or 1: `a` against `b` in the ecosystem's ordering (NVD's when it has none)."""
    compare = comparator_for(purl_type)
    return compare_versions(a, b) if compare is None else compare(a, b)
