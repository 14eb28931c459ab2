"""SPDX documents as inventories: 2.x JSON and tag-value (spdx-tools), 3.0 JSON-LD.

SPDX 2.x: every package; its `externalRefs` of type `purl`, `cpe23Type` and `cpe22Type`;
its source repository from a `downloadLocation` naming a VCS (`git+https://…`).
spdx-tools parses and checks the document; its messages are passed on.

SPDX 3.0 (JSON-LD, `@graph`): spdx-tools 0.8 writes SPDX 3 but does not read it, so the
graph is read here: every element of type `software_Package` (or `Package`), its
`software_packageVersion`, `software_packageUrl`, `externalIdentifier`s of type
`cpe23`/`cpe22`/`packageUrl`, and a `vcs` `externalRef` or VCS download location.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from assay.audit.inputs.cyclonedx import bounded
from assay.audit.model import Component, Inventory, default_ref, text_of
from assay.errors import InputError

__all__ = ["read_spdx3", "read_spdx_json", "read_spdx_tag_value"]

_VCS_PREFIXES: Final = ("git+", "hg+", "svn+", "bzr+", "git://")
_PACKAGE_TYPES: Final = ("software_Package", "Package", "software:Package")


def _vcs(location: object) -> str | None:
    if isinstance(location, str) and location.lower().startswith(_VCS_PREFIXES):
        return location.split("@", 1)[0] if location.count("@") == 1 else location
    return None


def _references(package: Any) -> tuple[str | None, tuple[str, ...]]:
    """The first purl and the CPE names of an SPDX 2 package's `externalRefs`."""
    located = [(str(r.reference_type), str(r.locator)) for r in package.external_references]
    purls = [locator for kind, locator in located if kind == "purl"]
    cpes = tuple(locator for kind, locator in located if kind in ("cpe23Type", "cpe22Type"))
    return (purls[0] if purls else None), cpes


def _spdx2_package(package: Any, where: str) -> Component:
    purl, cpes = _references(package)
    return Component(
        ref=str(package.spdx_id),
        name=str(package.name),
        version=str(package.version) if package.version else None,
        purl=purl,
        cpes=cpes,
        repository=_vcs(str(package.download_location)),
        where=where,
    )


def _from_document(document: Any, source: str, fmt: str) -> Inventory:
    components = (
        _spdx2_package(package, f"{source}: package {package.spdx_id} (#{index + 1})")
        for index, package in enumerate(document.packages)
    )
    return Inventory(source, fmt, bounded(components, source, "packages"))


def _parsing_error(source: str, error: Exception) -> InputError:
    messages = getattr(error, "messages", None) or [str(error)]
    shown = "; ".join(str(m) for m in messages[:5])
    more = f" (and {len(messages) - 5} more)" if len(messages) > 5 else ""
    return InputError(source, f"expected a valid SPDX document: {shown}{more}")


def read_spdx_json(document: Mapping[str, Any], source: str) -> Inventory:
    """An inventory from a parsed SPDX 2.x JSON document."""
    from spdx_tools.spdx.parser.error import SPDXParsingError
    from spdx_tools.spdx.parser.jsonlikedict.json_like_dict_parser import JsonLikeDictParser

    try:
        parsed = JsonLikeDictParser().parse(dict(document))  # type: ignore[no-untyped-call]
    except SPDXParsingError as error:
        raise _parsing_error(source, error) from None
    except (TypeError, ValueError, AttributeError, KeyError) as error:
        raise _parsing_error(source, error) from None
    return _from_document(parsed, source, "spdx-json")


def read_spdx_tag_value(text: str, source: str) -> Inventory:
    """An inventory from an SPDX 2.x tag-value document."""
    from ply import yacc
    from spdx_tools.spdx.parser.error import SPDXParsingError
    from spdx_tools.spdx.parser.tagvalue.parser import Parser

    try:
        # No table files written into the installed package, no messages on stderr.
        parser = Parser(  # type: ignore[no-untyped-call]
            write_tables=False, debug=False, errorlog=yacc.NullLogger()
        )
        parsed = parser.parse(text)  # type: ignore[no-untyped-call]
    except SPDXParsingError as error:
        raise _parsing_error(source, error) from None
    except (TypeError, ValueError, AttributeError, KeyError) as error:
        raise _parsing_error(source, error) from None
    return _from_document(parsed, source, "spdx-tag-value")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _identifiers(element: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """The CPE names and the first purl of an element's `externalIdentifier`s."""
    cpes: list[str] = []
    purls: list[str] = []
    for identifier in element.get("externalIdentifier") or ():
        if not isinstance(identifier, Mapping) or not isinstance(identifier.get("identifier"), str):
            continue
        kind, value = identifier.get("externalIdentifierType"), identifier["identifier"]
        if kind in ("cpe23", "cpe22"):
            cpes.append(value)
        elif kind == "packageUrl":
            purls.append(value)
    return cpes, purls[0] if purls else None


def _repository(element: Mapping[str, Any]) -> str | None:
    """The last `vcs` external reference's locator, else a VCS download location."""
    repository = _vcs(element.get("software_downloadLocation"))
    for reference in element.get("externalRef") or ():
        if isinstance(reference, Mapping) and reference.get("externalRefType") == "vcs":
            locators = _strings(reference.get("locator"))
            repository = locators[0] if locators else repository
    return repository


def _spdx3_package(element: Mapping[str, Any], where: str) -> Component:
    name = text_of(element.get("name"))
    if name is None:
        raise InputError(f"{where}.name", "expected a package name")
    ref = element.get("spdxId") or element.get("@id")
    version = text_of(element.get("software_packageVersion"))
    cpes, identified = _identifiers(element)
    purl = element.get("software_packageUrl")
    return Component(
        ref=str(ref) if ref else default_ref(name, version),
        name=name,
        version=version,
        purl=text_of(purl) if isinstance(purl, str) else text_of(identified),
        cpes=tuple(cpes),
        repository=_repository(element),
        where=where,
    )


def read_spdx3(document: Mapping[str, Any], source: str) -> Inventory:
    """An inventory from an SPDX 3.0 JSON-LD document (its `@graph`)."""
    graph = document.get("@graph")
    if not isinstance(graph, list):
        raise InputError(f"{source}: $.@graph", "expected an array of SPDX 3 elements")
    return Inventory(
        source, "spdx3-json", bounded(_spdx3_packages(graph, source), source, "packages")
    )


def _spdx3_packages(graph: list[Any], source: str) -> Iterator[Component]:
    for index, element in enumerate(graph):
        if isinstance(element, Mapping) and element.get("type") in _PACKAGE_TYPES:
            yield _spdx3_package(element, f"{source}: $.@graph[{index}]")
