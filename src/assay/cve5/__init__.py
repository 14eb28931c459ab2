"""CVE JSON 5 records, CISA's KEV catalogue and FIRST's EPSS scores: readers (pure).

`assay.cve5.record` reads CVE Record Format 5.x, `assay.cve5.kev` the KEV catalogue,
`assay.cve5.epss` the EPSS daily CSV. The store keeps them (`assay.nvd.storage`); scans
match through them (`assay.audit.cve5_match`).
"""

from __future__ import annotations

from typing import Final

DEFAULT_CVELIST_URL: Final = "https://github.com/CVEProject/cvelistV5/releases/download"
DEFAULT_KEV_URL: Final = (
    "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json"
)
DEFAULT_EPSS_URL: Final = "https://epss.empiricalsecurity.com/epss_scores-current.csv.gz"
