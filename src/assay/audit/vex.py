"""VEX applied to a scan: each finding a statement speaks of carries what it says.

    applied = apply_vex(result, documents)
    applied.result            # findings with `vex`; the VEX files listed among `inputs`
    applied.used              # the documents that changed at least one finding

Pure. A statement speaks of a finding when one of its ids (the vulnerability or an
alias) is the finding's id (or one of its aliases) and one of its products is the
finding's component (its ref, purl or CPE names: `assay.vex.match`), or the product
the input describes (an SBOM's `metadata.component`: "product ABC is not affected by
CVE-X" speaks of ABC's components' findings of CVE-X); of several, the newest wins. `not_affected` and `fixed` findings stay in the result and fail no rule
(`assay.audit.rules.evaluate`). Which documents count is decided before: an unsigned one
given with the scan (command line, `POST /api/scan`, `/scan`) does, and says so among the inputs; a policy that names VEX
signers refuses the others (`admit`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from assay.audit.model import (
    ComponentResult,
    InputSummary,
    Inventory,
    ScanResult,
    Vulnerability,
    text_of,
)
from assay.vex import ComponentNames, VexDocument, VexIndex

__all__ = [
    "UNSIGNED_NOTE",
    "Admission",
    "VexApplied",
    "admit",
    "apply_vex",
    "component_names",
    "product_names",
]

UNSIGNED_NOTE: Final = "unsigned VEX: it counts because it was given with the scan"


@dataclass(frozen=True, slots=True)
class VexApplied:
    result: ScanResult
    used: tuple[VexDocument, ...]
    """Documents of which a statement is now on a finding, in the order given."""
    changed: int
    """Findings that carry a statement."""


@dataclass(frozen=True, slots=True)
class Admission:
    """Which documents count under a policy, and why the others do not."""

    admitted: tuple[VexDocument, ...]
    refused: tuple[tuple[VexDocument, str], ...]


def admit(documents: Sequence[VexDocument], signers: Collection[str]) -> Admission:
    """With named `signers`, only documents signed by one of them count; without, all do."""
    if not signers:
        return Admission(tuple(documents), ())
    admitted: list[VexDocument] = []
    refused: list[tuple[VexDocument, str]] = []
    wanted = ", ".join(signers)
    for document in documents:
        if document.signature is None:
            refused.append((document, f"unsigned; the policy requires VEX signed by {wanted}"))
        elif document.signature.signer not in signers:
            refused.append(
                (
                    document,
                    f"signed by {document.signature.signer}; the policy requires VEX signed "
                    f"by {wanted}",
                )
            )
        else:
            admitted.append(document)
    return Admission(tuple(admitted), tuple(refused))


def component_names(component: ComponentResult) -> ComponentNames:
    c = component.component
    return ComponentNames(
        c.ref, c.purl, tuple(dict.fromkeys((*c.cpes, *component.identification.cpes)))
    )


def _ids(vulnerability: Vulnerability) -> tuple[str, ...]:
    aliases: Sequence[str] = getattr(vulnerability, "aliases", ())
    return (vulnerability.id, *aliases)


def _summary(document: VexDocument, used: int) -> InputSummary:
    notes: list[str] = []
    if document.signature is None:
        notes.append(UNSIGNED_NOTE)
    else:
        signature = document.signature
        notes.append(f"signed by {signature.signer} ({signature.method}: {signature.detail})")
    notes.append(f"{len(document.statements)} VEX statements, {used} applied to findings")
    notes.extend(document.notes)
    return InputSummary(
        document.source,
        f"{document.format}-vex" if document.format != "openvex" else "openvex",
        len(document.statements),
        document.signed,
        tuple(notes),
    )


def _object_at(value: object, *keys: str) -> Mapping[str, Any] | None:
    """The object at the path of `keys` in `value`, if every step is an object."""
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else None


def _product(document: object) -> ComponentNames | None:
    """The names of a CycloneDX BOM's `metadata.component` (None without any)."""
    product = _object_at(document, "metadata", "component")
    if product is None:
        return None
    ref, purl, cpe = (text_of(product.get(k)) for k in ("bom-ref", "purl", "cpe"))
    if ref is None and purl is None and cpe is None:
        return None
    return ComponentNames(ref or "", purl, (cpe,) if cpe else ())


def product_names(inventories: Sequence[Inventory]) -> dict[str, ComponentNames]:
    """The product each input describes (a CycloneDX BOM's `metadata.component`), by
    input: a statement about it speaks of the findings of every component in it."""
    found: dict[str, ComponentNames] = {}
    for inventory in inventories:
        product = _product(inventory.document)
        if product is not None:
            found[inventory.source] = product
    return found


class _Assessor:
    """Puts the winning statement on each finding, counting statements by document."""

    def __init__(self, index: VexIndex, products: Mapping[str, ComponentNames] | None) -> None:
        self.index = index
        self.products = products or {}
        self.uses: dict[str, int] = {}
        self.changed = 0

    def component(self, component: ComponentResult) -> ComponentResult:
        if not component.vulnerabilities or not self.index:
            return component
        names = component_names(component)
        product = self.products.get(component.source)
        findings = tuple(self._finding(v, names, product) for v in component.vulnerabilities)
        if all(a is b for a, b in zip(findings, component.vulnerabilities, strict=True)):
            return component
        return replace(component, vulnerabilities=findings)

    def _finding(
        self, vulnerability: Vulnerability, names: ComponentNames, product: ComponentNames | None
    ) -> Vulnerability:
        assessment = self.index.assess(_ids(vulnerability), names, product)
        if assessment is None:
            return vulnerability
        self.uses[assessment.source] = self.uses.get(assessment.source, 0) + 1
        self.changed += 1
        return replace(vulnerability, vex=assessment)


def apply_vex(
    result: ScanResult,
    documents: Sequence[VexDocument],
    products: Mapping[str, ComponentNames] | None = None,
) -> VexApplied:
    """The scan with each finding's winning statement (see the module docstring);
    `products` names the product each input describes (`product_names`)."""
    assessor = _Assessor(VexIndex(documents), products)
    components = tuple(assessor.component(c) for c in result.components)
    uses = assessor.uses
    summaries = tuple(_summary(d, uses.get(d.source, 0)) for d in documents)
    used = tuple(d for d in documents if uses.get(d.source))
    return VexApplied(
        replace(result, components=components, inputs=(*result.inputs, *summaries)),
        used,
        assessor.changed,
    )
