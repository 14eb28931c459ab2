"""Package names as OSV writes them, and purls as OSV packages (pure).

OSV names a package by ecosystem and name (`PyPI` `requests`, `Maven`
`org.apache.commons:commons-text`, `Go` `golang.org/x/net`); a purl by type, namespace
and name. `package_of_purl` maps the one to the other the way osv.dev does for
`/v1/query` with a `package.purl`, and `normalized_name` is the key both are stored and
looked up under (PEP 503 for PyPI, lower case where the registry ignores case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from assay.errors import InputError
from assay.osv.versions import base_ecosystem

__all__ = [
    "PURL_ECOSYSTEMS",
    "Purl",
    "PurlPackage",
    "normalized_name",
    "package_of_purl",
    "parse_purl",
]

PURL_ECOSYSTEMS: Final = {
    "pypi": "PyPI",
    "npm": "npm",
    "cargo": "crates.io",
    "golang": "Go",
    "maven": "Maven",
    "gem": "RubyGems",
    "nuget": "NuGet",
    "composer": "Packagist",
    "hex": "Hex",
    "pub": "Pub",
    "swift": "SwiftURL",
    "hackage": "Hackage",
    "cran": "CRAN",
    "conan": "ConanCenter",
    "bitnami": "Bitnami",
    "github": "GitHub Actions",
}
"""purl type -> OSV ecosystem (deb and apk take their distribution from the namespace)."""

_DISTRIBUTIONS: Final = {
    ("deb", "debian"): "Debian",
    ("deb", "ubuntu"): "Ubuntu",
    ("apk", "alpine"): "Alpine",
    ("rpm", "almalinux"): "AlmaLinux",
    ("rpm", "rocky-linux"): "Rocky Linux",
    ("rpm", "redhat"): "Red Hat",
    ("rpm", "opensuse"): "openSUSE",
    ("rpm", "suse"): "SUSE",
}
# Registries that ignore the case of names.
_CASELESS: Final = frozenset({"NuGet", "Packagist", "Hackage", "Pub", "Hex"})
_PEP503: Final = re.compile(r"[-_.]+")


def normalized_name(ecosystem: str, name: str) -> str:
    """The key a package name is stored and looked up under in `ecosystem`."""
    base = base_ecosystem(ecosystem)
    if base == "PyPI":
        return _PEP503.sub("-", name).lower()
    if base in _CASELESS:
        return name.lower()
    return name


@dataclass(frozen=True, slots=True)
class PurlPackage:
    ecosystem: str
    name: str
    version: str | None


@dataclass(frozen=True, slots=True)
class Purl:
    type: str
    """Lower case."""
    namespace: str | None
    name: str
    version: str | None


def parse_purl(text: str) -> Purl:
    """A purl, through packageurl-python; raises `InputError` naming what is wrong."""
    from packageurl import PackageURL

    try:
        purl = PackageURL.from_string(text)
    except ValueError as error:
        raise InputError(
            "purl", f"expected a package URL (pkg:type/name@version): {error}"
        ) from None
    return Purl(purl.type.lower(), purl.namespace or None, purl.name, purl.version or None)


def package_of_purl(text: str) -> PurlPackage | None:
    """The OSV ecosystem, name and version a purl names; `None` when its type has no
    OSV ecosystem. `InputError` (where: `purl`) when it is not a purl."""
    purl = parse_purl(text)
    namespace = purl.namespace or ""
    ecosystem = _DISTRIBUTIONS.get((purl.type, namespace.lower())) or PURL_ECOSYSTEMS.get(purl.type)
    if ecosystem is None:
        return None
    return PurlPackage(ecosystem, _package_name(purl, ecosystem), purl.version)


def _package_name(purl: Purl, ecosystem: str) -> str:
    """The package's name as OSV writes it in `ecosystem`: Maven's `group:artifact`, the
    namespaced `scope/name` of npm, Go, Packagist, GitHub and Swift."""
    if not purl.namespace:
        return purl.name
    if ecosystem == "Maven":
        return f"{purl.namespace}:{purl.name}"
    if purl.type in ("npm", "golang", "composer", "github", "swift"):
        return f"{purl.namespace}/{purl.name}"
    return purl.name
