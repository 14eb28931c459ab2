"""Package URLs for locked packages (packageurl-python builds and normalises them)."""

from __future__ import annotations

from packageurl import PackageURL

PYPI_SIMPLE = "https://pypi.org/simple"
NPM_REGISTRY = "https://registry.npmjs.org"


def pypi_purl(name: str, version: str, *, index_url: str | None = None) -> str:
    """`pkg:pypi/name@version`, with `repository_url` when the index is not PyPI."""
    qualifiers: dict[str, str] = {}
    if index_url and index_url.rstrip("/") not in (PYPI_SIMPLE, "https://pypi.org/simple/"):
        qualifiers["repository_url"] = index_url
    return str(PackageURL(type="pypi", name=name, version=version, qualifiers=qualifiers))


def npm_purl(name: str, version: str) -> str:
    """`pkg:npm/name@version` or `pkg:npm/%40scope/name@version`."""
    namespace: str | None = None
    if name.startswith("@") and "/" in name:
        namespace, name = name.split("/", 1)
    return str(PackageURL(type="npm", namespace=namespace, name=name, version=version))
