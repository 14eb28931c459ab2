"""The five NVD API 2.0 operations, described once: `OPERATIONS[name] -> Operation`.

Every part that speaks of an operation reads it here: the client (its paths, parameters
and page sizes), the server (routes, the parameters each query parser accepts, page
limits), the OpenAPI document and `/docs`, the sync (what it walks, by which date pair,
under which checkpoint key, with which label), the importer (which list key holds which
record kind), `/metrics` (the `kind` label of the sync gauges) and the home page (the
syncs it shows). Pure data with no imports of our own: building the command line's
parser reads it without loading the client or the server (named tuples, not dataclasses,
for the same reason: `tests/cli/test_startup.py`).

Parameters are named on the wire (`lastModStartDate`); `Parameter.name` is the client's
snake_case keyword (`last_mod_start_date`). Paging (`resultsPerPage`, `startIndex`) and
assay's change cursor (`sinceGeneration`) are taken by every operation and are listed
once, in `PAGING` and `EXTENSIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, NamedTuple

__all__ = [
    "CVE_HISTORY_EVENT_NAMES",
    "CVE_TAGS",
    "CVSS_SEVERITIES",
    "EXTENSIONS",
    "OPERATIONS",
    "OPERATION_NAMES",
    "PAGING",
    "Operation",
    "OperationName",
    "Parameter",
    "ParameterKind",
]

OperationName = Literal["cves", "cvehistory", "cpes", "cpematch", "source"]
"""An operation, named after its path segment (`/rest/json/<name>/2.0`)."""

ParameterKind = Literal[
    "text", "flag", "int", "date", "cve", "cve_list", "cwe", "uuid", "enum", "cpe", "cpe13"
]
"""What a parameter's value is: `cpe` a CPE 2.3 name or partial match string, `cpe13` a
complete (13-field) one, `cve_list` comma-separated CVE ids."""

_OPENAPI_TYPES: Final[Mapping[ParameterKind, str]] = {
    "flag": "flag",
    "int": "integer",
    "date": "datetime",
    "enum": "enum",
}

SEVERITIES_V2: Final = ("LOW", "MEDIUM", "HIGH")
SEVERITIES_V3: Final = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
CVSS_SEVERITIES: Final[Mapping[str, tuple[str, ...]]] = {
    "V2": SEVERITIES_V2,
    "V3": SEVERITIES_V3,
    "V4": SEVERITIES_V3,
}
"""The base severities of each CVSS version (`cvssV2Severity`, ...)."""
VERSION_TYPES: Final = ("including", "excluding")
CVE_TAGS: Final = ("disputed", "unsupported-when-assigned", "exclusively-hosted-service")
CVE_HISTORY_EVENT_NAMES: Final = (
    "New CVE Received",
    "Initial Analysis",
    "Reanalysis",
    "CVE Modified",
    "Modified Analysis",
    "CVE Translated",
    "Vendor Comment",
    "CVE Source Update",
    "CPE Deprecation Remap",
    "CWE Remap",
    "Reference Tag Update",
    "CVE Rejected",
    "CVE Unrejected",
    "CVE CISA KEV Update",
    "CVE Status Change",
    "Data Remediation",
)
"""Every `eventName`: the eleven of NVD's interface description plus the five it emits
since (spec `nvd-api-behaviour.md` §3.1)."""

_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _snake(wire: str) -> str:
    """`lastModStartDate` -> `last_mod_start_date` (the client's argument names)."""
    return _UPPER.sub("_", wire).lower()


class Parameter(NamedTuple):
    """One query parameter of an operation."""

    wire: str
    """Its name in the query string (matched case-insensitively by the server)."""
    kind: ParameterKind
    description: str
    choices: tuple[str, ...] = ()
    """The values an `enum` takes."""

    @property
    def name(self) -> str:
        """The client's keyword argument: `lastModStartDate` -> `last_mod_start_date`."""
        return _snake(self.wire)

    @property
    def openapi_type(self) -> str:
        """`string`, `integer`, `flag`, `datetime` or `enum` (the OpenAPI document's)."""
        return _OPENAPI_TYPES.get(self.kind, "string")


PAGING: Final = (
    Parameter("resultsPerPage", "int", "Page size; default and maximum given per endpoint."),
    Parameter("startIndex", "int", "Zero-based index of the first record of the page."),
)
EXTENSIONS: Final = (
    Parameter(
        "sinceGeneration",
        "int",
        "assay extension (the change cursor): only records written to this store after its "
        "data generation N, whatever their dates; every answer gives the current generation "
        "in the x-assay-generation header.",
    ),
)


def _window(name: str, what: str, needs: str) -> Parameter:
    return Parameter(
        name, "date", f"Start of a window (at most 120 days) on {what}; needs {needs}."
    )


class Operation(NamedTuple):
    """One operation of the NVD API 2.0 and everything assay says about it."""

    name: OperationName
    method: str
    """The client's method (`NvdClient.get_cves`) and the OpenAPI `operationId`."""
    label: str
    """What a person reads (`assay nvd sync`'s progress and summary)."""
    max_page: int
    """The largest `resultsPerPage` served, also its default."""
    format_name: str
    """The answer's `format`."""
    list_key: str
    """The answer's list of records (`vulnerabilities`)."""
    wrapper: str | None
    """The key wrapping each record in that list (`cve`); None where the items are the
    records themselves (sources)."""
    record: str
    """The importer's record kind (`cve`, `change`, `cpe`, `cpematch`, `source`)."""
    window: tuple[str, str]
    """The date pair, on the wire, that `assay nvd sync` reads changes by."""
    summary: str
    """What the operation answers (the OpenAPI document and `/docs`)."""
    filters: tuple[Parameter, ...]
    """Its own parameters, in the client's sending order (paging and `EXTENSIONS` apart)."""
    date_pairs: tuple[tuple[str, str], ...]
    """Start/end parameters given together, at most 120 days apart."""

    @property
    def path(self) -> str:
        """The path below the API root (`/rest/json`): `/cves/2.0`."""
        return f"/{self.name}/2.0"

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """Every parameter the operation takes: its filters, the extensions, paging."""
        return (*self.filters, *EXTENSIONS, *PAGING)

    @property
    def wire_names(self) -> tuple[str, ...]:
        """The names of `parameters` in the query string."""
        return tuple(parameter.wire for parameter in self.parameters)

    @property
    def window_arguments(self) -> tuple[str, str]:
        """`window` as the client's keyword arguments (`last_mod_start_date`, ...)."""
        start, end = self.window
        return _snake(start), _snake(end)

    @property
    def checkpoint_key(self) -> str:
        """The store meta key of `assay nvd sync`'s checkpoint for this operation."""
        return f"sync.{self.name}"

    @property
    def meta_key(self) -> str:
        """`checkpoint_key`, by the name the sync's `KindSpec` gave it."""
        return self.checkpoint_key

    @property
    def cursor_key(self) -> str:
        """The store meta key of the sync's change-cursor state (from another assay)."""
        return f"{self.checkpoint_key}.generation"

    @property
    def metric_label(self) -> str:
        """The `kind` label of `/metrics`' `assay_sync_*` series."""
        return self.name

    @property
    def result_attr(self) -> str:
        """The client result's attribute holding the page's items (`cve_changes`)."""
        return _snake(self.list_key)


_CVE_FILTERS = (
    Parameter("cpeName", "cpe", "CVEs whose configurations match this CPE 2.3 name, version ranges included; partial names are padded with *."),
    Parameter("cveId", "cve", "One CVE (CVE-YYYY-NNNN)."),
    Parameter("cveIds", "cve_list", "Up to 100 comma-separated CVE ids."),
    Parameter("cveTag", "enum", "Records tagged so.", CVE_TAGS),
    Parameter("cvssV2Metrics", "text", "Full or partial CVSS v2 vector; every metric must appear in one v2 vector."),
    Parameter("cvssV2Severity", "enum", "CVSS v2 base severity.", CVSS_SEVERITIES["V2"]),
    Parameter("cvssV3Metrics", "text", "Full or partial CVSS v3.x vector, with or without the CVSS:3.x/ prefix."),
    Parameter("cvssV3Severity", "enum", "CVSS v3.x base severity.", CVSS_SEVERITIES["V3"]),
    Parameter("cvssV4Metrics", "text", "Full or partial CVSS v4.0 vector."),
    Parameter("cvssV4Severity", "enum", "CVSS v4.0 base severity.", CVSS_SEVERITIES["V4"]),
    Parameter("cweId", "cwe", "CWE-N, NVD-CWE-Other or NVD-CWE-noinfo."),
    Parameter("hasCertAlerts", "flag", "Records referencing a US-CERT technical alert."),
    Parameter("hasCertNotes", "flag", "Records referencing a CERT/CC vulnerability note."),
    Parameter("hasKev", "flag", "Records in CISA's Known Exploited Vulnerabilities catalog."),
    Parameter("hasOval", "flag", "Records referencing OVAL definitions."),
    Parameter("isVulnerable", "flag", "With cpeName: only criteria marked vulnerable."),
    Parameter("keywordExactMatch", "flag", "With keywordSearch: match the words as one exact phrase."),
    Parameter("keywordSearch", "text", "Words that must all begin a word of the English description."),
    _window("kevStartDate", "the KEV date added", "kevEndDate"),
    Parameter("kevEndDate", "date", "End of the KEV window."),
    _window("lastModStartDate", "lastModified", "lastModEndDate"),
    Parameter("lastModEndDate", "date", "End of the lastModified window."),
    Parameter("noRejected", "flag", "Leave out rejected records."),
    _window("pubStartDate", "published", "pubEndDate"),
    Parameter("pubEndDate", "date", "End of the published window."),
    Parameter("sourceIdentifier", "text", "Records in which this source appears (record, metrics, weaknesses, references, tags)."),
    Parameter("versionEnd", "text", "With virtualMatchString: end of a version range; needs versionEndType."),
    Parameter("versionEndType", "enum", "Whether versionEnd is included.", VERSION_TYPES),
    Parameter("versionStart", "text", "With virtualMatchString: start of a version range; needs versionStartType."),
    Parameter("versionStartType", "enum", "Whether versionStart is included.", VERSION_TYPES),
    Parameter("virtualMatchString", "cpe", "CVEs whose match criteria carry every non-* component of this CPE match string."),
)  # fmt: skip

_LAST_MOD = ("lastModStartDate", "lastModEndDate")

_OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        name="cves",
        method="get_cves",
        label="CVEs",
        max_page=2000,
        format_name="NVD_CVE",
        list_key="vulnerabilities",
        wrapper="cve",
        record="cve",
        window=_LAST_MOD,
        summary="CVE records, filtered and paged (ordered by published date, then id).",
        filters=_CVE_FILTERS,
        date_pairs=(_LAST_MOD, ("pubStartDate", "pubEndDate"), ("kevStartDate", "kevEndDate")),
    ),
    Operation(
        name="cvehistory",
        method="get_cve_history",
        label="CVE changes",
        max_page=5000,
        format_name="NVD_CVEHistory",
        list_key="cveChanges",
        wrapper="change",
        record="change",
        window=("changeStartDate", "changeEndDate"),
        summary="CVE change events, filtered and paged (ordered by created, then cveChangeId).",
        filters=(
            _window("changeStartDate", "the change's created date", "changeEndDate"),
            Parameter("changeEndDate", "date", "End of the change window."),
            Parameter("cveId", "cve", "The complete change history of one CVE (CVE-YYYY-NNNN)."),
            Parameter(
                "cveIds", "cve_list", "The change histories of up to 100 comma-separated CVE ids."
            ),
            Parameter(
                "eventName",
                "enum",
                "Changes of one event type (case-insensitive; spaces as + or %20).",
                CVE_HISTORY_EVENT_NAMES,
            ),
        ),
        date_pairs=(("changeStartDate", "changeEndDate"),),
    ),
    Operation(
        name="cpes",
        method="get_cpes",
        label="CPEs",
        # NVD's documented limit; the reference client agrees.
        max_page=10000,
        format_name="NVD_CPE",
        list_key="products",
        wrapper="cpe",
        record="cpe",
        window=_LAST_MOD,
        summary="CPE dictionary products, deprecated ones included, filtered and paged (ordered by created, then cpeNameId).",
        filters=(
            Parameter("cpeNameId", "uuid", "One product by its UUID (case-insensitive)."),
            Parameter(
                "cpeMatchString",
                "cpe",
                "Products matching this CPE 2.3 match string: every component other than * must be equal (case-insensitive); partial strings are padded with *.",
            ),
            Parameter(
                "keywordExactMatch",
                "flag",
                "With keywordSearch: match the words as one exact phrase.",
            ),
            Parameter(
                "keywordSearch",
                "text",
                "Words that must all begin a word of a title or a reference link.",
            ),
            _window("lastModStartDate", "lastModified", "lastModEndDate"),
            Parameter("lastModEndDate", "date", "End of the lastModified window."),
            Parameter(
                "matchCriteriaId",
                "uuid",
                "The products a match criteria (UUID) expands to: its stored matches, else the dictionary names its criteria and version bounds cover.",
            ),
        ),
        date_pairs=(_LAST_MOD,),
    ),
    Operation(
        name="cpematch",
        method="get_cpe_match",
        label="match criteria",
        # The reference client allows 5000; NVD lowered the limit to 500 on 2024-04-15
        # and answers 404 above it.
        max_page=500,
        format_name="NVD_CPEMatchString",
        list_key="matchStrings",
        wrapper="matchString",
        record="cpematch",
        window=_LAST_MOD,
        summary="Match criteria with their dictionary expansions, filtered and paged (ordered by created, then matchCriteriaId).",
        filters=(
            Parameter(
                "cveId", "cve", "Every match criteria the configurations of this CVE reference."
            ),
            _window("lastModStartDate", "lastModified or cpeLastModified", "lastModEndDate"),
            Parameter("lastModEndDate", "date", "End of the lastModified window."),
            Parameter(
                "matchCriteriaId", "uuid", "One match criteria by its UUID (case-insensitive)."
            ),
            Parameter(
                "matchStringSearch",
                "cpe13",
                "Criteria conforming to this complete (13-field) CPE 2.3 match string: every component other than * must be equal.",
            ),
        ),
        date_pairs=(_LAST_MOD,),
    ),
    Operation(
        name="source",
        method="get_sources",
        label="sources",
        max_page=1000,
        format_name="NVD_SOURCE",
        list_key="sources",
        wrapper=None,
        record="source",
        window=_LAST_MOD,
        summary="CVE sources (assigners: CNAs, NVD, ADPs), filtered and paged (ordered by created, then as stored).",
        filters=(
            _window("lastModStartDate", "lastModified", "lastModEndDate"),
            Parameter("lastModEndDate", "date", "End of the lastModified window."),
            Parameter(
                "sourceIdentifier",
                "text",
                "The source one of whose sourceIdentifiers this is (an address or a UUID).",
            ),
        ),
        date_pairs=(_LAST_MOD,),
    ),
)

OPERATIONS: Final[Mapping[OperationName, Operation]] = MappingProxyType(
    {operation.name: operation for operation in _OPERATIONS}
)
"""Every operation by name, in the order a sync mirrors them."""

OPERATION_NAMES: Final[tuple[OperationName, ...]] = tuple(OPERATIONS)
