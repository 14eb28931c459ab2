"""Client for the NVD REST API 2.0 and compatible services (such as `assay serve`).

```python
from assay.nvd.client import NvdClient

with NvdClient(api_key="...") as nvd:
    log4shell = nvd.get_cves(cve_id="CVE-2021-44228").vulnerabilities[0].cve
    for change in nvd.iter_cve_history(cve_id="CVE-2021-44228"):
        print(change.created, change.event_name)
```

`NvdClient` and `AsyncNvdClient` take the reference client's (`nvd-api` 0.9.1) snake_case
arguments plus NVD's newer ones, reject invalid combinations with `InvalidQuery` (a
`ValueError`) before sending, pace, retry and time out as documented in `docs/client.md`.
`build_query`/`encode_query` (pure argument translation) and `parse_*` (response bytes to
typed results) are public for reuse by the mirror and the benchmarks.
"""

from assay.nvd.client._async import AsyncNvdClient
from assay.nvd.client._base import DEFAULT_BASE_URL, MAX_REDIRECTS, base_url_problem
from assay.nvd.client._body import MAX_DECODED_BYTES, MAX_WIRE_BYTES
from assay.nvd.client._errors import (
    NvdApiError,
    NvdClientError,
    NvdRateLimitError,
    NvdRedirectError,
    NvdResponseError,
    NvdResponseTooLarge,
    NvdTimeoutError,
    NvdTransportError,
)
from assay.nvd.client._models import (
    AcceptanceLevel,
    Change,
    ChangeDetail,
    ChangeItem,
    Configuration,
    Cpe,
    CpeItem,
    CpeMatch,
    CpeMatchResult,
    CpeName,
    CpeRef,
    CpeResult,
    CpeTitle,
    Cve,
    CveHistoryResult,
    CveItem,
    CveResult,
    CveTag,
    CvssMetric,
    LangString,
    MatchString,
    MatchStringItem,
    Metrics,
    Node,
    Reference,
    Result,
    Source,
    SourceResult,
    VendorComment,
    Weakness,
    parse_cpe_match,
    parse_cpes,
    parse_cve_history,
    parse_cves,
    parse_sources,
)
from assay.nvd.client._params import (
    CVE_HISTORY_EVENT_NAMES,
    CVE_TAGS,
    MAX_DATE_RANGE,
    MAX_RESULTS_PER_PAGE,
    CpeMatchFilters,
    CpeMatchParams,
    CpesFilters,
    CpesParams,
    CveHistoryFilters,
    CveHistoryParams,
    CvesFilters,
    CvesParams,
    InvalidQuery,
    SourcesFilters,
    SourcesParams,
    build_query,
    encode_query,
    format_datetime,
    split_window,
)
from assay.nvd.client._retry import RetryPolicy
from assay.nvd.client._sync import NvdClient
from assay.urls import redact_url

__all__ = [
    "CVE_HISTORY_EVENT_NAMES",
    "CVE_TAGS",
    "DEFAULT_BASE_URL",
    "MAX_DATE_RANGE",
    "MAX_DECODED_BYTES",
    "MAX_REDIRECTS",
    "MAX_RESULTS_PER_PAGE",
    "MAX_WIRE_BYTES",
    "AcceptanceLevel",
    "AsyncNvdClient",
    "Change",
    "ChangeDetail",
    "ChangeItem",
    "Configuration",
    "Cpe",
    "CpeItem",
    "CpeMatch",
    "CpeMatchFilters",
    "CpeMatchParams",
    "CpeMatchResult",
    "CpeName",
    "CpeRef",
    "CpeResult",
    "CpeTitle",
    "CpesFilters",
    "CpesParams",
    "Cve",
    "CveHistoryFilters",
    "CveHistoryParams",
    "CveHistoryResult",
    "CveItem",
    "CveResult",
    "CveTag",
    "CvesFilters",
    "CvesParams",
    "CvssMetric",
    "InvalidQuery",
    "LangString",
    "MatchString",
    "MatchStringItem",
    "Metrics",
    "Node",
    "NvdApiError",
    "NvdClient",
    "NvdClientError",
    "NvdRateLimitError",
    "NvdRedirectError",
    "NvdResponseError",
    "NvdResponseTooLarge",
    "NvdTimeoutError",
    "NvdTransportError",
    "Reference",
    "Result",
    "RetryPolicy",
    "Source",
    "SourceResult",
    "SourcesFilters",
    "SourcesParams",
    "VendorComment",
    "Weakness",
    "base_url_problem",
    "build_query",
    "encode_query",
    "format_datetime",
    "parse_cpe_match",
    "parse_cpes",
    "parse_cve_history",
    "parse_cves",
    "parse_sources",
    "redact_url",
    "split_window",
]
