"""A scan request carried out, the same way for `assay scan`, `POST /api/scan` and `/scan`.

    outcome = run_scan(parse_scan_request(fields), StoreSource(store))
    outcome.result, outcome.verdict, outcome.warnings

The steps: read the inputs and the purls into inventories (`assay.audit.inputs`), refuse a
store that holds nothing to scan against (`EmptySourceError`), warn of one whose last
sync is older than the request's maximum age, scan (`assay.audit.scan`), apply the VEX
documents (`assay.vex` reads them, `assay.audit.vex` applies them), and judge the result
with the `failOn` rules and ignore entries (`assay.audit.rules.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Final

from assay.audit.inputs import read_input
from assay.audit.inputs.purls import component_from_purl
from assay.audit.model import Inventory, ScanResult, SourceStatus
from assay.audit.request import RequestFieldError, ScanRequest
from assay.audit.rules import Verdict, evaluate
from assay.audit.scan import Progress, available_sources, scan
from assay.errors import AssayError, InputError

if TYPE_CHECKING:
    from assay.audit.source import VulnerabilitySource
    from assay.vex import VexDocument, VexTrust

__all__ = ["EMPTY_STORE", "EmptySourceError", "ScanOutcome", "read_inventories", "run_scan"]

EMPTY_STORE: Final = (
    "the vulnerability store holds no CVEs and no OSV records: load it with "
    "`assay nvd import`, `assay nvd sync`, `assay osv import` or `assay osv sync` first"
)


class EmptySourceError(AssayError):
    """The source holds nothing to scan against: an answer would list nothing, which is
    not "safe"."""

    def __init__(self) -> None:
        super().__init__(EMPTY_STORE)


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    """A request's answer: the result (VEX applied), its verdict, and what to warn of."""

    result: ScanResult
    verdict: Verdict
    inventories: tuple[Inventory, ...]
    warnings: tuple[str, ...] = ()
    """About the data, not the input: a store synced too long ago, or never."""
    vex_used: tuple[VexDocument, ...] = ()
    """VEX documents of which a statement is on a finding."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract (`assay scan --format json`, `POST /api/scan`)."""
        return {**self.result.to_dict(), "verdict": self.verdict.to_dict()}


def read_inventories(request: ScanRequest) -> list[Inventory]:
    """The inventories of the request's files and of its purls, within its limits."""
    cap = request.limits.max_components
    inventories = [_read(item.name, item.read(), cap) for item in request.inputs]
    if request.purls:
        components = tuple(component_from_purl(text, where) for text, where in request.purls)
        inventories.append(Inventory(request.purl_source, "purl", components))
    count = sum(len(inventory.components) for inventory in inventories)
    if cap is not None and count > cap:
        raise RequestFieldError(
            "inputs", f"expected at most {cap} components in all, found {count}"
        )
    return inventories


def _read(name: str, data: bytes, cap: int | None) -> Inventory:
    if not data.strip():
        raise InputError(name, "expected an SBOM or lock file, found an empty file")
    return read_input(data, name, max_components=cap)


def data_warnings(status: SourceStatus, max_age_days: float, now: datetime) -> tuple[str, ...]:
    """What to say of the data's age: a store (it has a generation) synced more than
    `max_age_days` ago, or never (its age is then unknown)."""
    age = status.age_days(now)
    if age is not None and age > max_age_days:
        return (
            f"the store was last synced {age:.1f} days ago ({status.last_sync}), more than "
            f"the maximum age of {max_age_days:g} days: run `assay nvd sync`",
        )
    if age is None and status.generation is not None:
        return ("the store has never completed a sync (imported data only): its age is unknown",)
    return ()


def _vex_documents(request: ScanRequest, trust: VexTrust | None) -> list[VexDocument]:
    from assay.vex import VexTrust, read_vex_files

    files = [(item.name, item.read()) for item in request.vex]
    return read_vex_files(files, trust or VexTrust())


def run_scan(
    request: ScanRequest,
    source: VulnerabilitySource,
    *,
    vex_trust: VexTrust | None = None,
    progress: Progress | None = None,
    checkpoint: Callable[[], None] | None = None,
    today: date | None = None,
) -> ScanOutcome:
    """Carry out `request` against `source` (see the module docstring). `vex_trust`: who
    may sign the VEX documents; `checkpoint` is called between steps (a server's budget)."""
    inventories = read_inventories(request)
    documents = _vex_documents(request, vex_trust) if request.vex else []
    if checkpoint is not None:
        checkpoint()
    status = source.status()
    if not available_sources(source, status):
        raise EmptySourceError
    warnings = data_warnings(status, request.max_age_days, datetime.now(UTC))
    result = scan(
        inventories,
        source,
        min_confidence=request.min_confidence,
        progress=progress,
        sources=request.sources,
    )
    used: Sequence[VexDocument] = ()
    if documents:
        from assay.audit.vex import apply_vex, product_names

        applied = apply_vex(result, documents, product_names(inventories))
        result, used = applied.result, applied.used
    verdict = evaluate(
        result,
        request.fail_on,
        request.ignores,
        today=today or datetime.now(UTC).date(),
        count_conditional=request.fail_on_conditional,
    )
    return ScanOutcome(result, verdict, tuple(inventories), warnings, tuple(used))
