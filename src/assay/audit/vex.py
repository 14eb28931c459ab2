"""VEX applied to a scan: each finding a statement speaks of carries what it says.

    applied = apply_vex(result, documents)
    applied.result            # findings with `vex`; the VEX files listed among `inputs`
    applied.used              # the documents that changed at least one finding

Pure. A statement speaks of a finding when one of its ids (the vulnerability or an
alias) is the finding's id (or one of its aliases) and one of its products is the
finding's component (its ref, purl or CPE names: `assay.vex.match`); of several, the
newest wins. `not_affected` and `fixed` findings stay in the result and fail no rule
(`assay.audit.rules.evaluate`). Which documents count is decided before: an unsigned one
given on the command line does, and says so among the inputs; a policy that names VEX
signers refuses the others (`admit`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final

from assay.audit.model import ComponentResult, InputSummary, ScanResult, Vulnerability
from assay.vex import ComponentNames, VexDocument, VexIndex

__all__ = ["UNSIGNED_NOTE", "Admission", "VexApplied", "admit", "apply_vex", "component_names"]

UNSIGNED_NOTE: Final = "unsigned VEX: it counts because it was given on the command line"


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


def apply_vex(result: ScanResult, documents: Sequence[VexDocument]) -> VexApplied:
    """The scan with each finding's winning statement (see the module docstring)."""
    index = VexIndex(documents)
    uses: dict[str, int] = {}
    components: list[ComponentResult] = []
    changed = 0
    for component in result.components:
        if not component.vulnerabilities or not index:
            components.append(component)
            continue
        names = component_names(component)
        findings: list[Vulnerability] = []
        touched = False
        for vulnerability in component.vulnerabilities:
            assessment = index.assess(_ids(vulnerability), names)
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
