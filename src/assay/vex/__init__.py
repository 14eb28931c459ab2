"""VEX in: OpenVEX, CycloneDX VEX and CSAF `csaf_vex` documents as one typed model.

    document = read_vex(data, "vendor.vex.json", VexTrust(signers=...))
    index = VexIndex([document])
    index.assess(("CVE-2021-44228",), component_names)   # -> Assessment | None

Pure apart from reading the bytes handed in (and verifying a signature); nothing here
knows a store, a scan or a verifier: `assay.audit.vex` applies statements to findings.
"""

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
from assay.vex.reader import MAX_VEX_BYTES, TrustedSigner, VexTrust, read_vex, read_vex_files

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
