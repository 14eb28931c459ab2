"""Where the two halves meet: what went into a build, against what is known to be wrong.

`assay.verify` (provenance, SBOM attestations) and `assay.nvd` (the vulnerability
store) never import each other; this package uses both.

```python
from assay.audit import StoreSource, scan_bytes
from assay.nvd.storage import open_store

source = StoreSource(open_store("sqlite:///assay.db"))
result = scan_bytes(open("bom.json", "rb").read(), "bom.json", source)
print(result.to_dict())                 # the JSON contract of `assay scan --format json`
```

Public names: `VulnerabilitySource` (the seam) with `StoreSource` and `ApiSource`;
`read_input` (any supported input to an `Inventory`), `scan` and `scan_bytes` (to a
`ScanResult`); the typed results in `assay.audit.model`; fail-on rules and ignore files
in `assay.audit.rules`; `VulnerabilityCheck` for `assay verify` in `assay.audit.check`;
what a scan is asked (`ScanRequest`, one parser for `assay scan`, `POST /api/scan` and
`/scan`) in `assay.audit.request`, carried out by `assay.audit.run.run_scan`; the HTTP
front ends are `assay.web.scan_api` and `assay.web.scan_page`. docs/scan.md describes all
of it.
"""

from __future__ import annotations

from assay.audit.api_source import ApiSource
from assay.audit.check import CLEAN_LEVEL, VulnerabilityCheck
from assay.audit.inputs import read_input
from assay.audit.model import (
    Component,
    ComponentResult,
    Cvss,
    Identification,
    Inventory,
    ScanResult,
    SourceStatus,
    Unidentified,
    Vulnerability,
)
from assay.audit.scan import scan, scan_bytes
from assay.audit.source import VulnerabilitySource
from assay.audit.store_source import StoreSource

__all__ = [
    "CLEAN_LEVEL",
    "ApiSource",
    "Component",
    "ComponentResult",
    "Cvss",
    "Identification",
    "Inventory",
    "ScanResult",
    "SourceStatus",
    "StoreSource",
    "Unidentified",
    "Vulnerability",
    "VulnerabilityCheck",
    "VulnerabilitySource",
    "read_input",
    "scan",
    "scan_bytes",
]
