"""CycloneDX VEX as XML, read into the JSON shape `assay.vex.cyclonedx` reads (pure).

Only what a VEX reader needs is taken: `metadata` (`timestamp`, the first author's
name, the component's `bom-ref`, `purl`, `cpe`), `components` (nested too) and each
`vulnerability` (`id`, `references/reference/id`, `analysis` with `state`,
`justification`, `responses/response`, `detail`, `firstIssued`, `lastUpdated`, and
`affects/target/ref`). The XML is parsed with defusedxml (no entities, no external
references); the namespace must be CycloneDX's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from assay.vex.model import VexError

NAMESPACE: Final = "http://cyclonedx.org/schema/bom/"
MAX_ELEMENTS: Final = 1_000_000


def is_cyclonedx_xml(data: bytes) -> bool:
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:512]
    return head.startswith(b"<") and NAMESPACE.encode() in head


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: Any, name: str) -> Any:
    for item in element:
        if _local(item.tag) == name:
            return item
    return None


def _children(element: Any, name: str) -> list[Any]:
    return [item for item in element if _local(item.tag) == name] if element is not None else []


def _text(element: Any, name: str) -> str | None:
    found = _child(element, name) if element is not None else None
    text = (found.text or "").strip() if found is not None else ""
    return text or None


def _texts(element: Any, names: tuple[str, ...]) -> dict[str, str]:
    """The text of each child element named, for those that have some."""
    found = {name: _text(element, name) for name in names}
    return {name: text for name, text in found.items() if text is not None}


def _listed(element: Any, wrapper: str, name: str, key: str) -> list[dict[str, str]]:
    """`{key: text}` of each `<wrapper><name><key>text` that has some (JSON's array of
    objects)."""
    texts = (_text(item, key) for item in _children(_child(element, wrapper), name))
    return [{key: text} for text in texts if text is not None]


def _component(element: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if element.get("bom-ref"):
        entry["bom-ref"] = element.get("bom-ref")
    entry.update(_texts(element, ("name", "version", "purl", "cpe")))
    nested = _children(_child(element, "components"), "component")
    if nested:
        entry["components"] = [_component(item) for item in nested]
    return entry


def _present(**values: Any) -> dict[str, Any]:
    """The values that are there (not None, not empty): JSON leaves the others out."""
    return {key: value for key, value in values.items() if value is not None and value != []}


def _analysis(analysis: Any) -> dict[str, Any]:
    found: dict[str, Any] = _texts(
        analysis, ("state", "justification", "detail", "firstIssued", "lastUpdated")
    )
    responses = [
        (item.text or "").strip() for item in _children(_child(analysis, "responses"), "response")
    ]
    if responses:
        found["response"] = [r for r in responses if r]
    return found


def _nested(element: Any, name: str, read: Callable[[Any], dict[str, Any]]) -> Any:
    """The child element `name` read as JSON's object, or None when there is none."""
    found = _child(element, name)
    return None if found is None else read(found)


def _vulnerability(element: Any) -> dict[str, Any]:
    return _present(
        id=_text(element, "id"),
        references=_listed(element, "references", "reference", "id"),
        analysis=_nested(element, "analysis", _analysis),
        affects=_listed(element, "affects", "target", "ref"),
    )


def _metadata(metadata: Any) -> dict[str, Any]:
    return _present(
        timestamp=_text(metadata, "timestamp"),
        authors=_listed(metadata, "authors", "author", "name"),
        component=_nested(metadata, "component", _component),
    )


def _root(data: bytes, source: str) -> Any:
    """The `<bom>` element, checked: XML, CycloneDX's namespace, a bounded size."""
    from defusedxml import ElementTree
    from defusedxml.common import DefusedXmlException

    try:
        root = ElementTree.fromstring(data)
    except (ElementTree.ParseError, DefusedXmlException) as error:
        raise VexError(source, f"expected CycloneDX XML: {error}") from None
    if not root.tag.startswith("{" + NAMESPACE):
        raise VexError(source, f"expected a CycloneDX <bom> element, found <{root.tag}>")
    if sum(1 for _ in root.iter()) > MAX_ELEMENTS:
        raise VexError(source, f"expected at most {MAX_ELEMENTS} XML elements, found more")
    return root


def cyclonedx_xml_document(data: bytes, source: str) -> dict[str, Any]:
    """The XML BOM's VEX parts in CycloneDX JSON's shape."""
    root = _root(data, source)
    version = root.tag[len(NAMESPACE) + 1 :].split("}", 1)[0]
    components = _children(_child(root, "components"), "component")
    vulnerabilities = _children(_child(root, "vulnerabilities"), "vulnerability")
    return {
        "bomFormat": "CycloneDX",
        "specVersion": version,
        **_present(
            serialNumber=root.get("serialNumber") or None,
            metadata=_nested(root, "metadata", _metadata),
            components=[_component(item) for item in components],
        ),
        "vulnerabilities": [_vulnerability(item) for item in vulnerabilities],
    }
