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
from typing import Final

from assay.audit.model import ComponentResult, InputSummary, Inventory, ScanResult, Vulnerability
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


def product_names(inventories: Sequence[Inventory]) -> dict[str, ComponentNames]:
    """The product each input describes (a CycloneDX BOM's `metadata.component`), by
    input: a statement about it speaks of the findings of every component in it."""
    found: dict[str, ComponentNames] = {}
    for inventory in inventories:
        document = inventory.document
        metadata = document.get("metadata") if isinstance(document, Mapping) else None
        product = metadata.get("component") if isinstance(metadata, Mapping) else None
        if not isinstance(product, Mapping):
            continue
        ref, purl, cpe = (product.get(k) for k in ("bom-ref", "purl", "cpe"))
        if not any(isinstance(v, str) and v for v in (ref, purl, cpe)):
            continue
        found[inventory.source] = ComponentNames(
            ref if isinstance(ref, str) else "",
            purl if isinstance(purl, str) and purl else None,
            (cpe,) if isinstance(cpe, str) and cpe else (),
        )
    return found


def apply_vex(
    result: ScanResult,
    documents: Sequence[VexDocument],
    products: Mapping[str, ComponentNames] | None = None,
) -> VexApplied:
    """The scan with each finding's winning statement (see the module docstring);
    `products` names the product each input describes (`product_names`)."""
    index = VexIndex(documents)
    uses: dict[str, int] = {}
    components: list[ComponentResult] = []
    changed = 0
    for component in result.components:
        if not component.vulnerabilities or not index:
            components.append(component)
            continue
        names = component_names(component)
        product = products.get(component.source) if products else None
        findings: list[Vulnerability] = []
        touched = False
        for vulnerability in component.vulnerabilities:
            assessment = index.assess(_ids(vulnerability), names, product)
            if assessment is None:
                findings.append(vulnerability)
                continue
            findings.append(replace(vulnerability, vex=assessment))
            uses[assessment.source] = uses.get(assessment.source, 0) + 1
            changed += 1
            touched = True
        components.append(
            replace(component, vulnerabilities=tuple(findings)) if touched else component
        )
    summaries = tuple(_summary(d, uses.get(d.source, 0)) for d in documents)
    used = tuple(d for d in documents if uses.get(d.source))
    return VexApplied(
        replace(result, components=tuple(components), inputs=(*result.inputs, *summaries)),
        used,
        changed,
    )
