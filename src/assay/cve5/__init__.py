"""CVE JSON 5 records, CISA's KEV catalogue and FIRST's EPSS scores: readers (pure).

`assay.cve5.record` reads CVE Record Format 5.x, `assay.cve5.kev` the KEV catalogue,
`assay.cve5.epss` the EPSS daily CSV. The store keeps them (`assay.nvd.storage`); scans
match through them (`assay.audit.cve5_match`).
"""
