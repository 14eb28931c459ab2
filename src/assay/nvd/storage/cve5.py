"""The CVE 5, KEV and EPSS tables of a store, for readers outside the storage package."""

from __future__ import annotations

from assay.nvd.storage._cve5_sql import Cve5Store, cve5_store

__all__ = ["Cve5Store", "cve5_store"]
