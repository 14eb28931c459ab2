"""The look-up keys of CVE 5 `affected[]` entries, and of the components matched to them.

Pure. The store indexes every `affected[]` entry of every container under these keys; a
scan asks for the keys of its components; both sides use the same functions, so a key
is spelled once:

    cpe:VENDOR:PRODUCT       a CPE in `cpes` (part, version and the rest left out)
    purl:TYPE/NAMESPACE/NAME `packageURL`, or `collectionURL` + `packageName` of a
                             registry with a purl type (PyPI, npm, Go, Maven, ...)
    pkg:COLLECTION|NAME      `collectionURL` + `packageName` of any other collection
    vp:VENDOR:PRODUCT        `vendor` and `product` as the CNA wrote them

Keys are lower-case; PyPI names are normalized as PEP 503 says.
"""

from __future__ import annotations

import re
from typing import Final

from assay.cve5.record import Affected

__all__ = ["COLLECTIONS", "affected_keys", "cpe_key", "purl_key", "vendor_product_key"]

COLLECTIONS: Final = {
    "pypi.org": "pypi",
    "pypi.python.org": "pypi",
    "pkg.go.dev": "golang",
    "www.npmjs.com": "npm",
    "npmjs.com": "npm",
    "registry.npmjs.org": "npm",
    "repo.maven.apache.org": "maven",
    "repo1.maven.org": "maven",
    "crates.io": "cargo",
    "rubygems.org": "gem",
    "www.nuget.org": "nuget",
    "nuget.org": "nuget",
    "packagist.org": "composer",
}
"""Hosts of `collectionURL`s that are package registries, and their purl types."""
_PYPI_SEPARATORS: Final = re.compile(r"[-_.]+")


def _name(purl_type: str, name: str) -> str:
    name = name.lower()
    return _PYPI_SEPARATORS.sub("-", name) if purl_type == "pypi" else name


def purl_key(purl_type: str, namespace: str | None, name: str) -> str:
    """The key of a package: `purl:pypi/django`, `purl:golang/golang.org/x/net`."""
    path = f"{namespace.strip('/')}/{name}" if namespace else name
    return f"purl:{purl_type.lower()}/{_name(purl_type.lower(), path)}"


def cpe_key(vendor: str, product: str) -> str:
    return f"cpe:{vendor.lower()}:{product.lower()}"


def vendor_product_key(vendor: str, product: str) -> str:
    """The CNA's free-text vendor and product, as CPE components are spelled."""
    return f"vp:{_word(vendor)}:{_word(product)}"


def _word(text: str) -> str:
    return "_".join(text.lower().split())


def cpe_vendor_product(cpe: str) -> tuple[str, str] | None:
    """(vendor, product) of a CPE 2.3 formatted string (2.2 URIs too), if it names both."""
    if cpe.startswith("cpe:2.3:"):
        return _both_named(re.split(r"(?<!\\):", cpe)[3:5], unnamed=("", "*"))
    if cpe.startswith("cpe:/"):
        return _both_named(cpe[5:].split(":")[1:3], unnamed=("",))
    return None


def _both_named(pair: list[str], *, unnamed: tuple[str, ...]) -> tuple[str, str] | None:
    """Vendor and product, when the name holds both and neither is `unnamed`."""
    if len(pair) == 2 and pair[0] not in unnamed and pair[1] not in unnamed:
        return pair[0], pair[1]
    return None


def package_url_key(text: str) -> str | None:
    """The key of a `packageURL` (any version or qualifier left out), if it parses."""
    from packageurl import PackageURL

    try:
        purl = PackageURL.from_string(text)
    except ValueError:
        return None
    return purl_key(purl.type, purl.namespace, purl.name)


def collection_key(collection_url: str, package_name: str) -> str:
    host = collection_url.split("://", 1)[-1].split("/", 1)[0].lower()
    purl_type = COLLECTIONS.get(host)
    if purl_type is None:
        return f"pkg:{collection_url.rstrip('/').lower()}|{package_name.lower()}"
    name = package_name.replace(":", "/") if purl_type == "maven" else package_name
    return purl_key(purl_type, None, name)


def affected_keys(affected: Affected) -> set[str]:
    """Every key an `affected[]` entry is found by: its CPE names, its package (by
    `packageURL`, or `collectionURL` and `packageName`), the CNA's vendor and product."""
    return {*_cpe_keys(affected), *_package_keys(affected), *_vendor_product_keys(affected)}


def _cpe_keys(affected: Affected) -> list[str]:
    pairs = (cpe_vendor_product(cpe) for cpe in affected.cpes)
    return [cpe_key(*pair) for pair in pairs if pair is not None]


def _package_keys(affected: Affected) -> list[str]:
    keys: list[str] = []
    if affected.package_url:
        key = package_url_key(affected.package_url)
        if key is not None:
            keys.append(key)
    if affected.collection_url and affected.package_name:
        keys.append(collection_key(affected.collection_url, affected.package_name))
    return keys


def _vendor_product_keys(affected: Affected) -> list[str]:
    vendor, product = affected.vendor, affected.product
    if vendor and product and "n/a" not in (vendor, product):
        return [vendor_product_key(vendor, product)]
    return []
