"""VEX in: OpenVEX, CycloneDX VEX and CSAF `csaf_vex` documents as one typed model.

    document = read_vex(data, "vendor.vex.json", VexTrust(signers=...))
    index = VexIndex([document])
    index.assess(("CVE-2021-44228",), component_names)   # -> Assessment | None

Pure apart from reading the bytes handed in (and verifying a signature); nothing here
knows a store, a scan or a verifier: `assay.audit.vex` applies statements to findings.
The names below are loaded when first used, so that a scan's findings can carry an
`Assessment` (`assay.vex.model`) without the readers being imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.vex.match import ComponentNames, VexIndex
    from assay.vex.model import (
        SUPPRESSING,
        Assessment,
        ProductId,
        Signature,
        VexDocument,
        VexError,
        VexStatement,
        VexStatus,
    )
    from assay.vex.reader import (
        MAX_VEX_BYTES,
        TrustedSigner,
        VexTrust,
        read_vex,
        read_vex_files,
    )

_WHERE = {
    "ComponentNames": "match",
    "VexIndex": "match",
    "SUPPRESSING": "model",
    "Assessment": "model",
    "ProductId": "model",
    "Signature": "model",
    "VexDocument": "model",
    "VexError": "model",
    "VexStatement": "model",
    "VexStatus": "model",
    "MAX_VEX_BYTES": "reader",
    "TrustedSigner": "reader",
    "VexTrust": "reader",
    "read_vex": "reader",
    "read_vex_files": "reader",
}

__all__ = [
    "MAX_VEX_BYTES",
    "SUPPRESSING",
    "Assessment",
    "ComponentNames",
    "ProductId",
    "Signature",
    "TrustedSigner",
    "VexDocument",
    "VexError",
    "VexIndex",
    "VexStatement",
    "VexStatus",
    "VexTrust",
    "read_vex",
    "read_vex_files",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.vex' has no attribute {name!r}")
    return getattr(importlib.import_module(f"assay.vex.{module}"), name)
