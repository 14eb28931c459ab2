"""CycloneDX VEX as XML, read into the JSON shape `assay.vex.cyclonedx` reads (pure).

Only what a VEX reader needs is taken: `metadata` (`timestamp`, the first author's
name, the component's `bom-ref`, `purl`, `cpe`), `components` (nested too) and each
`vulnerability` (`id`, `references/reference/id`, `analysis` with `state`,
`justification`, `responses/response`, `detail`, `firstIssued`, `lastUpdated`, and
`affects/target/ref`). The XML is parsed with defusedxml (no entities, no external
references); the namespace must be CycloneDX's.
"""

from __future__ import annotations

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


def _component(element: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if element.get("bom-ref"):
        entry["bom-ref"] = element.get("bom-ref")
    for key in ("name", "version", "purl", "cpe"):
        value = _text(element, key)
        if value is not None:
            entry[key] = value
    nested = _children(_child(element, "components"), "component")
    if nested:
        entry["components"] = [_component(item) for item in nested]
    return entry


def _vulnerability(element: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    identifier = _text(element, "id")
    if identifier is not None:
        entry["id"] = identifier
    references = [
        {"id": r} for item in _children(_child(element, "references"), "reference")
        if (r := _text(item, "id")) is not None
    ]  # fmt: skip
    if references:
        entry["references"] = references
    analysis = _child(element, "analysis")
    if analysis is not None:
        found: dict[str, Any] = {}
        for key in ("state", "justification", "detail", "firstIssued", "lastUpdated"):
            value = _text(analysis, key)
            if value is not None:
                found[key] = value
        responses = [
            (item.text or "").strip()
            for item in _children(_child(analysis, "responses"), "response")
        ]
        if responses:
            found["response"] = [r for r in responses if r]
        entry["analysis"] = found
    affects = [
        {"ref": ref}
        for target in _children(_child(element, "affects"), "target")
        if (ref := _text(target, "ref")) is not None
    ]
    if affects:
        entry["affects"] = affects
    return entry


def cyclonedx_xml_document(data: bytes, source: str) -> dict[str, Any]:
    """The XML BOM's VEX parts in CycloneDX JSON's shape."""
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
    version = root.tag[len(NAMESPACE) + 1 :].split("}", 1)[0]
    document: dict[str, Any] = {"bomFormat": "CycloneDX", "specVersion": version}
    if root.get("serialNumber"):
        document["serialNumber"] = root.get("serialNumber")
    metadata = _child(root, "metadata")
    if metadata is not None:
        meta: dict[str, Any] = {}
        timestamp = _text(metadata, "timestamp")
        if timestamp is not None:
            meta["timestamp"] = timestamp
        authors = [
            {"name": name}
            for author in _children(_child(metadata, "authors"), "author")
            if (name := _text(author, "name")) is not None
        ]
        if authors:
            meta["authors"] = authors
        component = _child(metadata, "component")
        if component is not None:
            meta["component"] = _component(component)
        document["metadata"] = meta
    components = _children(_child(root, "components"), "component")
    if components:
        document["components"] = [_component(item) for item in components]
    vulnerabilities = _children(_child(root, "vulnerabilities"), "vulnerability")
    document["vulnerabilities"] = [_vulnerability(item) for item in vulnerabilities]
    return document
