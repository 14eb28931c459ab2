"""Version order per OSV ecosystem (pure).

| OSV ecosystem | order | library |
| --- | --- | --- |
| PyPI | PEP 440 | packaging |
| npm, crates.io, Hex, Pub, SwiftURL, and every SEMVER range | SemVer 2.0 | python-semver (`semver_key`) |
| Go | SemVer with Go's `v` prefix and pseudo-versions | python-semver (`semver_key`, `v` dropped) |
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

__all__ = ["SEMVER", "base_ecosystem", "has_order", "semver_key", "version_key"]

SEMVER: Final = "SEMVER"
"""The order of SEMVER ranges, whatever the ecosystem."""

_SEMVER_ORDERS: Final = (SEMVER, "npm", "crates.io", "Hex", "Pub", "SwiftURL", "Go")
_UNIVERS: Final = {
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


@lru_cache(maxsize=1 << 17)
def semver_key(text: str) -> Any:
    """A SemVer 2.0 version (a leading `v` dropped; `1.19` read as `1.19.0`, as osv.dev
    reads Go's own release names) as a tuple that orders by SemVer's precedence (section
    11: pre-releases before their release, numeric identifiers numerically and before
    alphanumeric ones, a shorter list of identifiers first; build metadata ignored);
    `None` when it is not SemVer. Parsed by python-semver; compared as tuples, which is
    ~20x faster than comparing parsed objects (docs/decisions.md)."""
    import semver

    candidate = text[1:] if text[:1] in ("v", "V") else text
    if _SHORT.fullmatch(candidate):
        candidate += ".0" * (2 - candidate.count("."))
    try:
        parsed = semver.Version.parse(candidate)
    except (ValueError, TypeError):
        return None
    if parsed.prerelease is None:
        return (parsed.major, parsed.minor, parsed.patch, (1,))
    identifiers = tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in parsed.prerelease.split(".")
    )
    return (parsed.major, parsed.minor, parsed.patch, (0, identifiers))


def _univers(class_name: str) -> Callable[[str], Any]:
    @lru_cache(maxsize=1 << 17)
    def parse(text: str) -> Any:
        from univers import versions

        try:
            return getattr(versions, class_name)(text)
        except Exception:  # univers raises many kinds (ValueError, InvalidVersion, ...)
            return None

    return parse


_PARSERS: Final[dict[str, Callable[[str], Any]]] = {
    "PyPI": _pep440,
    **dict.fromkeys(_SEMVER_ORDERS, semver_key),
    **{name: _univers(cls) for name, cls in _UNIVERS.items()},
}


def has_order(ecosystem: str) -> bool:
    """Whether `ecosystem` (with or without a release suffix) has a version order here."""
    return base_ecosystem(ecosystem) in _PARSERS


def version_key(ecosystem: str, text: str) -> Any:
    """`text` as a value that compares in `ecosystem`'s order (`SEMVER` for semver),
    or `None` when the ecosystem has no order or the order cannot read `text`."""
    parse = _PARSERS.get(base_ecosystem(ecosystem))
    return None if parse is None else parse(text)
