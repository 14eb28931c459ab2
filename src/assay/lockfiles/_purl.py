"""Package URLs for locked packages (packageurl-python builds and normalises them)."""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from packageurl import PackageURL
from packaging.utils import canonicalize_name

from assay.lockfiles._digests import single_digests
from assay.lockfiles._model import LockedFile, LockedPackage

PYPI_SIMPLE = "https://pypi.org/simple"
# Hosts that serve the public npm registry itself (Yarn's is a mirror of it).
_NPM_PUBLIC_HOSTS = ("registry.npmjs.org", "registry.yarnpkg.com")
# Lock files repeat a package@version (npm nests copies): build each purl once.
_CACHE_SIZE = 65_536


def pypi_purl(name: str, version: str, *, index_url: str | None = None) -> str:
    """`pkg:pypi/name@version`, with `repository_url` when the index is not PyPI."""
    repository = None
    if index_url and index_url.rstrip("/") != PYPI_SIMPLE:
        parts = urlsplit(index_url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        # Credentials (https://user:token@host/simple) never go into a purl.
        repository = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return _purl("pypi", None, name, version, repository)


def npm_purl(name: str, version: str, *, resolved: str | None = None) -> str:
    """`pkg:npm/name@version` or `pkg:npm/%40scope/name@version`, with `repository_url`
    when the tarball came from another registry than the public one."""
    namespace: str | None = None
    if name.startswith("@") and "/" in name:
        namespace, name = name.split("/", 1)
    return _purl("npm", namespace, name, version, _npm_registry(resolved))


def _npm_registry(resolved: str | None) -> str | None:
    """The registry a tarball URL names, unless it is the public one."""
    if not resolved or not resolved.startswith(("https://", "http://")):
        return None
    parts = urlsplit(resolved)
    if not parts.hostname or parts.hostname in _NPM_PUBLIC_HOSTS:
        return None
    # Only scheme and host: a tarball URL may carry credentials or tokens in its path.
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


@lru_cache(maxsize=_CACHE_SIZE)
def _purl(kind: str, namespace: str | None, name: str, version: str, repository: str | None) -> str:
    qualifiers = {"repository_url": repository} if repository else {}
    return str(
        PackageURL(
            type=kind, namespace=namespace, name=name, version=version, qualifiers=qualifiers
        )
    )


def pypi_package(
    name: str,
    version: str,
    files: tuple[LockedFile, ...],
    location: str,
    *,
    index_url: object,
    dev: bool = False,
) -> LockedPackage:
    """A PyPI package a lock file pins, with its distribution files (`index_url`:
    the index it names, if a string)."""
    return LockedPackage(
        name=canonicalize_name(name),
        version=version,
        purl=pypi_purl(name, version, index_url=index_url if isinstance(index_url, str) else None),
        digests=single_digests([f.digests for f in files]),
        ecosystem="pypi",
        files=files,
        location=location,
        dev=dev,
    )
