"""Mirror an NVD-compatible API into a store, resumably: `assay nvd sync`.

```python
from assay.nvd.storage import open_store
from assay.nvd.sync import Mirror, SyncOptions, default_rate

store = open_store("sqlite:///nvd.db")
upstream = "https://services.nvd.nist.gov/rest/json"
report = Mirror(store, SyncOptions(upstream=upstream, rate=default_rate(upstream, None))).run()
for kind in report.kinds:
    print(kind.kind, kind.fetched, kind.counts)
```

The first run loads every CVE, change, CPE, match criteria and source (the five
operations of `assay.nvd.operations`); later runs read what
changed since the last checkpoint in windows of at most 120 days. A checkpoint per kind
is committed after every page, so a run stopped at any moment resumes where it stopped.
`docs/sync.md` describes checkpoints, pacing and what "exactly the upstream's data" means.
Planning (`_plan`) and pacing (`_pacing`) are pure policy; `_engine` does the I/O.
"""

from assay.nvd.sync._engine import (
    DEFAULT_OVERLAP,
    KindFinished,
    KindReport,
    KindStarted,
    Mirror,
    Notice,
    PageStored,
    SyncError,
    SyncEvent,
    SyncOptions,
    SyncReport,
)
from assay.nvd.sync._pacing import (
    NVD_RATE_WITH_KEY,
    NVD_RATE_WITHOUT_KEY,
    Rate,
    SlidingWindowLimiter,
    default_rate,
    is_loopback,
    parse_rate,
)
from assay.nvd.sync._plan import (
    KINDS,
    SPECS,
    Checkpoint,
    CheckpointError,
    Kind,
    KindSpec,
    Listing,
    Position,
    UpstreamInconsistent,
    advance,
    catch_up,
    parse_kinds,
    plan,
)

__all__ = [
    "DEFAULT_OVERLAP",
    "KINDS",
    "NVD_RATE_WITHOUT_KEY",
    "NVD_RATE_WITH_KEY",
    "SPECS",
    "Checkpoint",
    "CheckpointError",
    "Kind",
    "KindFinished",
    "KindReport",
    "KindSpec",
    "KindStarted",
    "Listing",
    "Mirror",
    "Notice",
    "PageStored",
    "Position",
    "Rate",
    "SlidingWindowLimiter",
    "SyncError",
    "SyncEvent",
    "SyncOptions",
    "SyncReport",
    "UpstreamInconsistent",
    "advance",
    "catch_up",
    "default_rate",
    "is_loopback",
    "parse_kinds",
    "parse_rate",
    "plan",
]
