"""CycloneDX BOMs (JSON and XML, specVersion 1.2-1.6) as inventories.

JSON is read with orjson directly; XML through cyclonedx-python-lib. The library's JSON
path was measured at 28 s to read a BOM of 10,000 components (and 172 s to write one),
against a scan budget of 10 s for the whole (docs/decisions.md), so JSON BOMs are read
here: only the fields a scan needs, every one checked and located by JSON path.

A component is every entry of `components` (nested ones included, depth first), not the
BOM's own subject (`metadata.component`). Its source repository is its first
`externalReferences` entry of type `vcs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any, Final

from assay.audit.model import Component, Inventory, default_ref, text_of
from assay.errors import InputError

__all__ = ["MAX_COMPONENTS", "read_cyclonedx_json", "read_cyclonedx_xml"]

SPEC_VERSIONS: Final = ("1.2", "1.3", "1.4", "1.5", "1.6")
MAX_COMPONENTS: Final = 100_000
MAX_NESTING: Final = 32


def bounded(components: Iterable[Component], where: str, noun: str) -> tuple[Component, ...]:
    """The components, refused (naming `where`) once there are more than `MAX_COMPONENTS`,
    without reading on."""
    found = tuple(islice(components, MAX_COMPONENTS + 1))
    if len(found) > MAX_COMPONENTS:
        raise InputError(where, f"more than {MAX_COMPONENTS} {noun}")
    return found


def _text(value: object, where: str, field: str) -> str | None:
    """An optional string field (an empty one is none)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{where}.{field}", f"expected a string, found {_kind(value)}")
    return value or None


def _required_text(value: object, where: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"{where}.{field}", f"expected a non-empty string, found {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _repository(references: object, where: str) -> str | None:
    if references is None:
        return None
    if not isinstance(references, list):
        raise InputError(
            f"{where}.externalReferences", f"expected an array, found {_kind(references)}"
        )
    for reference in references:
        if isinstance(reference, Mapping) and reference.get("type") == "vcs":
            url = text_of(reference.get("url"))
            if url is not None:
                return url
    return None


def _components(items: object, where: str, depth: int) -> Iterator[Component]:
    if items is None:
        return
    if not isinstance(items, list):
        raise InputError(where, f"expected an array of components, found {_kind(items)}")
    if depth > MAX_NESTING:
        raise InputError(where, f"components nested deeper than {MAX_NESTING} levels")
    for index, item in enumerate(items):
        path = f"{where}[{index}]"
        if not isinstance(item, Mapping):
            raise InputError(path, f"expected a component object, found {_kind(item)}")
        yield _component(item, path)
        yield from _components(item.get("components"), f"{path}.components", depth + 1)


def _component(item: Mapping[str, Any], path: str) -> Component:
    """One component object (its nested `components` apart)."""
    name = _required_text(item.get("name"), path, "name")
    group = _text(item.get("group"), path, "group")
    version = _text(item.get("version"), path, "version")
    purl = _text(item.get("purl"), path, "purl")
    cpe = _text(item.get("cpe"), path, "cpe")
    ref = _text(item.get("bom-ref"), path, "bom-ref")
    full = f"{group}/{name}" if group else name
    return Component(
        ref=ref or default_ref(full, version),
        name=full,
        version=version,
        purl=purl,
        cpes=(cpe,) if cpe else (),
        repository=_repository(item.get("externalReferences"), path),
        where=path,
    )


def read_cyclonedx_json(document: Mapping[str, Any], source: str) -> Inventory:
    """An inventory from a parsed CycloneDX JSON BOM."""
    where = f"{source}: $"
    if document.get("bomFormat") != "CycloneDX":
        raise InputError(f"{where}.bomFormat", "expected 'CycloneDX'")
    spec = document.get("specVersion")
    if spec not in SPEC_VERSIONS:
        raise InputError(
            f"{where}.specVersion",
            f"expected one of {', '.join(SPEC_VERSIONS)}, found {spec!r}",
        )
    components = _components(document.get("components"), f"{where}.components", 0)
    return Inventory(
        source,
        "cyclonedx-json",
        bounded(components, f"{where}.components", "components"),
        document=dict(document),
    )


def read_cyclonedx_xml(data: bytes, source: str, *, max_components: int | None = None) -> Inventory:
    """An inventory from a CycloneDX XML BOM (cyclonedx-python-lib, defusedxml); more
    than `max_components` (default `MAX_COMPONENTS`) components are refused before the
    library decodes them (~1 ms each)."""
    from defusedxml import ElementTree
    from defusedxml.common import DefusedXmlException

    try:
        root = ElementTree.fromstring(data)
    except (ElementTree.ParseError, DefusedXmlException) as error:
        raise InputError(source, f"expected CycloneDX XML: {error}") from None
    if not root.tag.startswith("{http://cyclonedx.org/schema/bom/"):
        raise InputError(source, f"expected a CycloneDX <bom> element, found <{root.tag}>")
    version = root.tag.split("}", 1)[0].rsplit("/", 1)[-1]
    if version not in SPEC_VERSIONS:
        raise InputError(source, f"expected CycloneDX {', '.join(SPEC_VERSIONS)}, found {version}")
    limit = MAX_COMPONENTS if max_components is None else max_components
    count = sum(1 for _ in root.iter(f"{root.tag.split('}', 1)[0]}}}component"))
    if count > limit:
        raise InputError(source, f"expected at most {limit} components, found {count}")
    from cyclonedx.model.bom import Bom

    try:
        bom = Bom.from_xml(root)  # type: ignore[attr-defined]
    except Exception as error:  # the library raises many kinds for a malformed BOM
        raise InputError(source, f"expected a valid CycloneDX {version} BOM: {error}") from None
    components: list[Component] = []

    def walk(items: Any, where: str, depth: int) -> None:
        if depth > MAX_NESTING:
            raise InputError(where, f"components nested deeper than {MAX_NESTING} levels")
        for index, item in enumerate(items):
            path = f"{where}/component[{index + 1}]"
            name = f"{item.group}/{item.name}" if item.group else str(item.name)
            version = str(item.version) if item.version else None
            repository = next(
                (
                    str(r.url)
                    for r in item.external_references
                    if getattr(r.type, "value", None) == "vcs"
                ),
                None,
            )
            ref = item.bom_ref.value if item.bom_ref and item.bom_ref.value else None
            components.append(
                Component(
                    ref=ref or default_ref(name, version),
                    name=name,
                    version=version,
                    purl=str(item.purl) if item.purl else None,
                    cpes=(str(item.cpe),) if item.cpe else (),
                    repository=repository,
                    where=path,
                )
            )
            if len(components) > MAX_COMPONENTS:
                raise InputError(source, f"more than {MAX_COMPONENTS} components")
            walk(item.components, f"{path}/components", depth + 1)

    walk(bom.components, f"{source}: /bom/components", 0)
    return Inventory(source, "cyclonedx-xml", tuple(components))
