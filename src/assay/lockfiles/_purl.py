"""Package URLs for locked packages (packageurl-python builds and normalises them)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from packageurl import PackageURL

PYPI_SIMPLE = "https://pypi.org/simple"
NPM_REGISTRY = "https://registry.npmjs.org"


def pypi_purl(name: str, version: str, *, index_url: str | None = None) -> str:
    """`pkg:pypi/name@version`, with `repository_url` when the index is not PyPI."""
    qualifiers: dict[str, str] = {}
    if index_url and index_url.rstrip("/") != PYPI_SIMPLE:
        parts = urlsplit(index_url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        # Credentials (https://user:token@host/simple) never go into a purl.
        qualifiers["repository_url"] = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return str(PackageURL(type="pypi", name=name, version=version, qualifiers=qualifiers))


# Hosts that serve the public npm registry itself (Yarn's is a mirror of it).
_NPM_PUBLIC_HOSTS = ("registry.npmjs.org", "registry.yarnpkg.com")


def npm_purl(name: str, version: str, *, resolved: str | None = None) -> str:
    """`pkg:npm/name@version` or `pkg:npm/%40scope/name@version`, with `repository_url`
    when the tarball came from another registry than the public one."""
    namespace: str | None = None
    if name.startswith("@") and "/" in name:
        namespace, name = name.split("/", 1)
    qualifiers: dict[str, str] = {}
    if resolved and resolved.startswith(("https://", "http://")):
        parts = urlsplit(resolved)
        if parts.hostname and parts.hostname not in _NPM_PUBLIC_HOSTS:
            # Only scheme and host: a tarball URL may carry credentials or tokens in its path.
            qualifiers["repository_url"] = f"{parts.scheme}://{parts.hostname}" + (
                f":{parts.port}" if parts.port else ""
            )
    return str(
        PackageURL(
            type="npm", namespace=namespace, name=name, version=version, qualifiers=qualifiers
        )
    )
