"""Defaults of the NVD side that the command line shows in its help.

Kept apart, importing only the operations table (pure data), so that building the
parser (`assay --help`) does not load the client, the sync engine or the importer they
belong to; those modules take them from here.
"""

from __future__ import annotations

from typing import Final

from assay.nvd.operations import OPERATION_NAMES, OperationName

DEFAULT_BASE_URL: Final = "https://services.nvd.nist.gov/rest/json"
"""NVD's own API 2.0, what the client and `assay nvd sync` talk to unless told otherwise."""

Kind = OperationName
KINDS: Final[tuple[Kind, ...]] = OPERATION_NAMES
"""Every kind of record a mirror holds, in the order a sync run mirrors them (the
operations of `assay.nvd.operations`)."""

DEFAULT_BATCH_SIZE: Final = 5000
"""Records the importer writes per transaction."""

LAST_IMPORT_KEY: Final = "import.finished"
"""Store meta key: when `assay nvd import` last finished (UTC, `...Z`)."""
