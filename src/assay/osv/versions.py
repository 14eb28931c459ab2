"""Version order per OSV ecosystem (pure).

| OSV ecosystem | order | library |
| --- | --- | --- |
| PyPI | PEP 440 | packaging |
| npm, crates.io, Hex, Pub, SwiftURL, and every SEMVER range | SemVer 2.0 | univers (`SemverVersion`) |
| Go | SemVer with Go's `v` prefix and pseudo-versions | univers (`SemverVersion`, `v` dropped) |
| Maven | Maven ComparableVersion | univers (`MavenVersion`) |
| RubyGems | RubyGems | univers (`RubygemsVersion`) |
| NuGet | NuGet | univers (`NugetVersion`) |
| Packagist | Composer | univers (`ComposerVersion`) |
| Debian, Ubuntu | dpkg | univers (`DebianVersion`) |
| Alpine | apk | univers (`AlpineLinuxVersion`) |
| AlmaLinux, Rocky Linux, Red Hat, openSUSE, SUSE, Mageia | rpm | univers (`RpmVersion`) |

An ecosystem not listed has no order here: its records match through `versions[]` only.
A version its order cannot read is `None` (it never compares). docs/decisions.md ("OSV
version orders") has the measurements behind the choice of library.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

__all__ = ["SEMVER", "base_ecosystem", "has_order", "version_key"]

SEMVER: Final = "SEMVER"
"""The order of SEMVER ranges, whatever the ecosystem."""

_UNIVERS: Final = {
    SEMVER: "SemverVersion",
    "npm": "SemverVersion",
    "crates.io": "SemverVersion",
    "Hex": "SemverVersion",
    "Pub": "SemverVersion",
    "SwiftURL": "SemverVersion",
    "Go": "SemverVersion",
    "Maven": "MavenVersion",
    "RubyGems": "RubygemsVersion",
    "NuGet": "NugetVersion",
    "Packagist": "ComposerVersion",
    "Debian": "DebianVersion",
    "Ubuntu": "DebianVersion",
    "Alpine": "AlpineLinuxVersion",
    "AlmaLinux": "RpmVersion",
    "Rocky Linux": "RpmVersion",
    "Red Hat": "RpmVersion",
    "openSUSE": "RpmVersion",
    "SUSE": "RpmVersion",
    "Mageia": "RpmVersion",
}
# SemVer orders that accept a leading `v` (Go module versions always have one; osv.dev's
# Go records drop it, purls keep it).
_V_PREFIXED: Final = frozenset({SEMVER, "Go", "npm", "crates.io", "Hex", "Pub", "SwiftURL"})


def base_ecosystem(ecosystem: str) -> str:
    """The ecosystem without its release suffix (`Debian:12` -> `Debian`)."""
    return ecosystem.split(":", 1)[0]


@lru_cache(maxsize=1 << 17)
def _pep440(text: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None


_SHORT: Final = re.compile(r"\d+(\.\d+)?")


def _univers(class_name: str, drop_v: bool) -> Callable[[str], Any]:
    semver = class_name == "SemverVersion"

    @lru_cache(maxsize=1 << 17)
    def parse(text: str) -> Any:
        from univers import versions

        candidate = text[1:] if drop_v and text[:1] in ("v", "V") else text
        if semver and _SHORT.fullmatch(candidate):
            # `1.19` (Go's own release names, npm's loose ranges) as 1.19.0, as osv.dev reads it.
            candidate += ".0" * (2 - candidate.count("."))
        try:
            return getattr(versions, class_name)(candidate)
        except Exception:  # univers raises many kinds (ValueError, InvalidVersion, ...)
            return None

    return parse


_PARSERS: Final[dict[str, Callable[[str], Any]]] = {
    "PyPI": _pep440,
    **{name: _univers(cls, name in _V_PREFIXED) for name, cls in _UNIVERS.items()},
}


def has_order(ecosystem: str) -> bool:
    """Whether `ecosystem` (with or without a release suffix) has a version order here."""
    return base_ecosystem(ecosystem) in _PARSERS


def version_key(ecosystem: str, text: str) -> Any:
    """`text` as a value that compares in `ecosystem`'s order (`SEMVER` for semver),
    or `None` when the ecosystem has no order or the order cannot read `text`."""
    parse = _PARSERS.get(base_ecosystem(ecosystem))
    return None if parse is None else parse(text)
