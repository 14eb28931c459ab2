"""Read what a user has into an `Inventory`: `read_input(data, filename)`.

Recognized (by content; the file name decides only between lock-file kinds):

| input | format |
| --- | --- |
| CycloneDX JSON or XML, specVersion 1.2-1.6 | `cyclonedx-json`, `cyclonedx-xml` |
| SPDX 2.x JSON or tag-value; SPDX 3.0 JSON-LD | `spdx-json`, `spdx-tag-value`, `spdx3-json` |
| an in-toto statement, DSSE envelope, Sigstore bundle or JSON Lines of them, whose predicate is a CycloneDX or SPDX document or SLSA provenance | the predicate's format (`slsa-provenance` for provenance) |
| pinned `requirements.txt`, `pip freeze` output, `poetry.lock`, `uv.lock`, `package-lock.json` v2/v3 | `requirements`, `poetry-lock`, `uv-lock`, `package-lock` |

Attestations are read with the project's attestation reader (`assay.attestation.
read_documents`) and never verified here: the inventory says so (`verified=False` and a
note). Lock files are read by `assay.lockfiles`. Bad input raises `InputError` naming the
file and the place (JSON path, line).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

import orjson

from assay.audit.model import Component, Inventory
from assay.errors import InputError

__all__ = ["MAX_INPUT_BYTES", "SBOM_PREDICATES", "document_inventory", "read_input", "sbom_kind"]

MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
UNVERIFIED_NOTE: Final = (
    "attestation read without verifying its signature: the scan trusts its content as given"
)
_LOCKFILE_NAMES: Final = ("poetry.lock", "uv.lock", "package-lock.json", "npm-shrinkwrap.json")
_LOCK_FORMATS: Final = {"poetry": "poetry-lock", "uv": "uv-lock"}
SBOM_PREDICATES: Final = {
    "https://cyclonedx.org/bom": "cyclonedx",
    "https://spdx.dev/Document": "spdx",
}


def read_input(data: bytes, filename: str, *, max_components: int | None = None) -> Inventory:
    """The components one input file describes (see the module docstring). A server
    gives `max_components`: an input with more is refused, a CycloneDX XML one before
    its components are decoded (the slow part of reading it)."""
    inventory = _read(data, filename, max_components)
    if max_components is not None and len(inventory.components) > max_components:
        raise InputError(filename, _too_many(max_components, len(inventory.components)))
    return inventory


def _too_many(limit: int, found: int) -> str:
    return f"expected at most {limit} components, found {found}"


def _read(data: bytes, filename: str, max_components: int | None) -> Inventory:
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(filename, f"expected at most {MAX_INPUT_BYTES} bytes, found {len(data)}")
    base = os.path.basename(filename).lower()
    if base in _LOCKFILE_NAMES:
        return _lockfile(data, filename)
    head = data.lstrip()[:1]
    if head == b"<":
        from assay.audit.inputs.cyclonedx import read_cyclonedx_xml

        return read_cyclonedx_xml(data, filename, max_components=max_components)
    if head in (b"{", b"["):
        return _json(data, filename)
    return _text(data, filename, base)


def _text(data: bytes, filename: str, base: str) -> Inventory:
    """A text input: an SPDX tag-value document, or a requirements file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(filename, f"expected UTF-8 text: {error}") from None
    if "SPDXVersion:" in text[:65536]:
        from assay.audit.inputs.spdx import read_spdx_tag_value

        return read_spdx_tag_value(text, filename)
    if base.endswith((".txt", ".in")) or _looks_pinned(text):
        return _lockfile(data, filename)
    raise InputError(
        filename,
        "expected a CycloneDX or SPDX SBOM, an attestation, or a lock file "
        "(requirements.txt, poetry.lock, uv.lock, package-lock.json)",
    )


def _looks_pinned(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines()[:200] if line.strip() and line[:1] != "#"]
    return bool(lines) and all("==" in line or line.startswith("-") for line in lines)


def _lockfile(data: bytes, filename: str) -> Inventory:
    from assay.lockfiles import read_lockfile

    lock = read_lockfile(data, filename)
    components = tuple(
        Component(
            ref=f"{package.name}@{package.version}",
            name=package.name,
            version=package.version,
            purl=package.purl,
            where=f"{filename}: {package.location}" if package.location else filename,
        )
        for package in lock.packages
    ) + tuple(
        # Named without one version: listed (as unidentified, "no version"), never dropped.
        Component(
            ref=f"{package.name}{package.specifier}",
            name=package.name,
            purl=package.purl,
            where=f"{filename}: {package.location} (not pinned: {package.specifier or 'any version'})",
        )
        for package in lock.unpinned
    )
    notes = tuple(
        f"not scanned ({entry.location}): {entry.text} ({entry.reason})" for entry in lock.skipped
    )
    return Inventory(filename, _LOCK_FORMATS.get(lock.format, lock.format), components, notes=notes)


def _json(data: bytes, filename: str) -> Inventory:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        # JSON Lines (.intoto.jsonl): each line a document; the attestation reader splits.
        if b"\n" in data.strip():
            return _attestation(data, filename)
        raise InputError(filename, f"expected JSON: {error}") from None
    if not isinstance(document, dict):
        raise InputError(f"{filename}: $", "expected a JSON object")
    return _document(document, data, filename)


def _document(document: Mapping[str, Any], data: bytes | None, filename: str) -> Inventory:
    if document.get("bomFormat") == "CycloneDX":
        from assay.audit.inputs.cyclonedx import read_cyclonedx_json

        return read_cyclonedx_json(document, filename)
    if "spdxVersion" in document:
        from assay.audit.inputs.spdx import read_spdx_json

        return read_spdx_json(document, filename)
    if "@graph" in document and "spdx" in str(document.get("@context", "")).lower():
        from assay.audit.inputs.spdx import read_spdx3

        return read_spdx3(document, filename)
    if "lockfileVersion" in document and data is not None:
        return _lockfile(data, filename)
    if data is not None:
        return _attestation(data, filename)
    raise InputError(filename, "expected a CycloneDX or SPDX document")


def document_inventory(document: Mapping[str, Any], source: str) -> Inventory:
    """The components of a parsed CycloneDX or SPDX document (an SBOM predicate)."""
    return _document(document, None, source)


def sbom_kind(predicate_type: str) -> str | None:
    """`cyclonedx` or `spdx`: the SBOM format a predicate type names (None: no SBOM)."""
    base_type = predicate_type.split("?", 1)[0].rstrip("/")
    return next((k for prefix, k in SBOM_PREDICATES.items() if base_type.startswith(prefix)), None)


def _sbom_kind(predicate_type: str, where: str) -> str:
    """`cyclonedx` or `spdx`: the SBOM format a predicate type names."""
    kind = sbom_kind(predicate_type)
    if kind is None:
        raise InputError(
            f"{where}.predicateType",
            "expected a CycloneDX or SPDX SBOM or SLSA provenance predicate, "
            f"found {predicate_type!r}",
        )
    return kind


def _statement_inventory(document: Any, filename: str) -> Inventory:
    """The components of one attested statement: provenance's dependencies, an SBOM's."""
    from assay.attestation import PROVENANCE_V01, PROVENANCE_V02, PROVENANCE_V1
    from assay.audit.inputs.purls import provenance_inventory

    where = f"{filename}{' ' + document.location if document.location else ''}: $"
    statement = document.statement
    if not isinstance(statement, dict):
        raise InputError(where, "the attestation's payload is not a readable statement")
    predicate_type = document.predicate_type or ""
    if predicate_type in (PROVENANCE_V1, PROVENANCE_V02, PROVENANCE_V01):
        return provenance_inventory(statement, filename, where, notes=(UNVERIFIED_NOTE,))
    _sbom_kind(predicate_type, where)
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        raise InputError(f"{where}.predicate", "expected an object")
    inner = _document(predicate, None, f"{filename} (predicate)")
    return Inventory(
        filename,
        inner.format,
        inner.components,
        notes=(UNVERIFIED_NOTE,),
        verified=False,
        document=inner.document,
    )


def _attestation(data: bytes, filename: str) -> Inventory:
    from assay.attestation import read_documents
    from assay.errors import AttestationError

    try:
        documents = read_documents(data)
    except AttestationError as error:
        raise InputError(
            filename,
            "expected a CycloneDX or SPDX SBOM, an attestation or a lock file; "
            f"as an attestation: {error.reason}",
        ) from None
    inventories = [_statement_inventory(document, filename) for document in documents]
    if len(inventories) == 1:
        return inventories[0]
    components = tuple(c for inventory in inventories for c in inventory.components)
    formats = sorted({inventory.format for inventory in inventories})
    return Inventory(
        filename, "+".join(formats), components, notes=(UNVERIFIED_NOTE,), verified=False
    )
