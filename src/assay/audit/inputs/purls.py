"""Components from purls: the command line's `--purl`, and provenance dependencies.

SLSA provenance lists what a build used as resource descriptors: v1
`buildDefinition.resolvedDependencies`, v0.2/v0.1 `materials`. A descriptor whose `uri`
is a purl is a package at that version; one naming a VCS repository
(`git+https://github.com/o/r@…`) is a source checkout, kept with its repository (it has
no version to place in a range, so it is listed as unidentified, not dropped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from assay.audit.identify import parse_purl
from assay.audit.model import Component, Inventory, string_of
from assay.errors import InputError

__all__ = [
    "MAX_PURLS",
    "component_from_purl",
    "dependency_component",
    "provenance_inventory",
    "purl_inventory",
]

MAX_PURLS: Final = 10_000


def component_from_purl(text: str, where: str) -> Component:
    try:
        purl = parse_purl(text)
    except InputError as error:
        raise InputError(where, error.reason) from None
    name = f"{purl.namespace}/{purl.name}" if purl.namespace else purl.name
    ref = f"{name}@{purl.version}" if purl.version else name
    return Component(ref=ref, name=name, version=purl.version, purl=text, where=where)


def purl_inventory(purls: Sequence[str]) -> Inventory:
    """The components named by purls on the command line (`--purl`)."""
    if len(purls) > MAX_PURLS:
        raise InputError("--purl", f"expected at most {MAX_PURLS} purls, found {len(purls)}")
    components = tuple(component_from_purl(text, f"--purl {text}") for text in dict.fromkeys(purls))
    return Inventory("--purl", "purl", components)


def _dependency(item: object, where: str) -> Component | None:
    if not isinstance(item, Mapping):
        raise InputError(where, "expected a resource descriptor object")
    uri, name = item.get("uri"), item.get("name")
    return dependency_component(string_of(uri), string_of(name), where)


def dependency_component(uri: str | None, name: str | None, where: str) -> Component | None:
    """The component one provenance dependency (resource descriptor) stands for: the one
    reader of `assay scan` and of `assay verify`'s `vulnerabilities:` check. A malformed
    purl is refused (naming `where.uri`); a descriptor known by its name only is a
    component of that name; one with neither is no component."""
    if uri and uri.startswith("pkg:"):
        return component_from_purl(uri, f"{where}.uri")
    if uri:
        repository = uri.split("@", 1)[0] if uri.startswith("git+") else None
        label = name or uri
        return Component(ref=label, name=label, repository=repository, where=where)
    if name:
        return Component(ref=name, name=name, where=where)
    return None


def provenance_inventory(
    statement: Mapping[str, Any], source: str, where: str, *, notes: tuple[str, ...]
) -> Inventory:
    """The dependencies of a SLSA provenance statement (v1, v0.2 or v0.1)."""
    predicate = statement.get("predicate")
    if not isinstance(predicate, Mapping):
        raise InputError(f"{where}.predicate", "expected an object")
    definition = predicate.get("buildDefinition")
    if isinstance(definition, Mapping):
        items, path = (
            definition.get("resolvedDependencies"),
            "predicate.buildDefinition.resolvedDependencies",
        )
    else:
        items, path = predicate.get("materials"), "predicate.materials"
    if items is None:
        items = []
    if not isinstance(items, list):
        raise InputError(f"{where}.{path}", "expected an array of resource descriptors")
    if len(items) > MAX_PURLS:
        raise InputError(f"{where}.{path}", f"expected at most {MAX_PURLS} dependencies")
    components = []
    for index, item in enumerate(items):
        component = _dependency(item, f"{where}.{path}[{index}]")
        if component is not None:
            components.append(component)
    return Inventory(source, "slsa-provenance", tuple(components), notes=notes, verified=False)
