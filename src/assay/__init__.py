"""assay: software supply-chain evidence.

Where an artifact came from (SLSA provenance and verification summaries) and what is
known to be wrong with what went into it (a drop-in NVD API 2.0 mirror).
"""

__version__ = "0.1.0"
