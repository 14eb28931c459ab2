"""The API description served at `/openapi.json` and rendered, self-contained, at `/docs`."""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from assay import __version__
from assay.nvd.history_query import EVENT_NAMES


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # "string", "integer", "flag", "datetime", "enum"
    description: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EndpointDoc:
    path: str
    operation_id: str
    summary: str
    format_name: str
    list_key: str
    max_page: int
    parameters: tuple[Param, ...]


PAGING = (
    Param(
        "sinceGeneration",
        "integer",
        "assay extension (the change cursor): only records written to this store after its "
        "data generation N, whatever their dates; every answer gives the current generation "
        "in the x-assay-generation header.",
    ),
    Param("resultsPerPage", "integer", "Page size; default and maximum given per endpoint."),
    Param("startIndex", "integer", "Zero-based index of the first record of the page."),
)

CVE_ENDPOINT = EndpointDoc(
    path="/rest/json/cves/2.0",
    operation_id="get_cves",
    summary="CVE records, filtered and paged (ordered by published date, then id).",
    format_name="NVD_CVE",
    list_key="vulnerabilities",
    max_page=2000,
    parameters=(
        Param("cpeName", "string", "CVEs whose configurations match this CPE 2.3 name, version ranges included; partial names are padded with *."),
        Param("cveId", "string", "One CVE (CVE-YYYY-NNNN)."),
        Param("cveIds", "string", "Up to 100 comma-separated CVE ids."),
        Param("cveTag", "enum", "Records tagged so.", ("disputed", "unsupported-when-assigned", "exclusively-hosted-service")),
        Param("cvssV2Metrics", "string", "Full or partial CVSS v2 vector; every metric must appear in one v2 vector."),
        Param("cvssV2Severity", "enum", "CVSS v2 base severity.", ("LOW", "MEDIUM", "HIGH")),
        Param("cvssV3Metrics", "string", "Full or partial CVSS v3.x vector, with or without the CVSS:3.x/ prefix."),
        Param("cvssV3Severity", "enum", "CVSS v3.x base severity.", ("LOW", "MEDIUM", "HIGH", "CRITICAL")),
        Param("cvssV4Metrics", "string", "Full or partial CVSS v4.0 vector."),
        Param("cvssV4Severity", "enum", "CVSS v4.0 base severity.", ("LOW", "MEDIUM", "HIGH", "CRITICAL")),
        Param("cweId", "string", "CWE-N, NVD-CWE-Other or NVD-CWE-noinfo."),
        Param("hasCertAlerts", "flag", "Records referencing a US-CERT technical alert."),
        Param("hasCertNotes", "flag", "Records referencing a CERT/CC vulnerability note."),
        Param("hasKev", "flag", "Records in CISA's Known Exploited Vulnerabilities catalog."),
        Param("hasOval", "flag", "Records referencing OVAL definitions."),
        Param("isVulnerable", "flag", "With cpeName: only criteria marked vulnerable."),
        Param("keywordExactMatch", "flag", "With keywordSearch: match the words as one exact phrase."),
        Param("keywordSearch", "string", "Words that must all begin a word of the English description."),
        Param("kevStartDate", "datetime", "Start of a window (at most 120 days) on the KEV date added; needs kevEndDate."),
        Param("kevEndDate", "datetime", "End of the KEV window."),
        Param("lastModStartDate", "datetime", "Start of a window (at most 120 days) on lastModified; needs lastModEndDate."),
        Param("lastModEndDate", "datetime", "End of the lastModified window."),
        Param("noRejected", "flag", "Leave out rejected records."),
        Param("pubStartDate", "datetime", "Start of a window (at most 120 days) on published; needs pubEndDate."),
        Param("pubEndDate", "datetime", "End of the published window."),
        Param("sourceIdentifier", "string", "Records in which this source appears (record, metrics, weaknesses, references, tags)."),
        Param("versionStart", "string", "With virtualMatchString: start of a version range; needs versionStartType."),
        Param("versionStartType", "enum", "Whether versionStart is included.", ("including", "excluding")),
        Param("versionEnd", "string", "With virtualMatchString: end of a version range; needs versionEndType."),
        Param("versionEndType", "enum", "Whether versionEnd is included.", ("including", "excluding")),
        Param("virtualMatchString", "string", "CVEs whose match criteria carry every non-* component of this CPE match string."),
        *PAGING,
    ),
)  # fmt: skip

HISTORY_ENDPOINT = EndpointDoc(
    path="/rest/json/cvehistory/2.0",
    operation_id="get_cve_history",
    summary="CVE change events, filtered and paged (ordered by created, then cveChangeId).",
    format_name="NVD_CVEHistory",
    list_key="cveChanges",
    max_page=5000,
    parameters=(
        Param("cveId", "string", "The complete change history of one CVE (CVE-YYYY-NNNN)."),
        Param("cveIds", "string", "The change histories of up to 100 comma-separated CVE ids."),
        Param("changeStartDate", "datetime", "Start of a window (at most 120 days) on the change's created date; needs changeEndDate."),
        Param("changeEndDate", "datetime", "End of the change window."),
        Param("eventName", "enum", "Changes of one event type (case-insensitive; spaces as + or %20).", EVENT_NAMES),
        *PAGING,
    ),
)  # fmt: skip

CPE_ENDPOINT = EndpointDoc(
    path="/rest/json/cpes/2.0",
    operation_id="get_cpes",
    summary="CPE dictionary products, deprecated ones included, filtered and paged (ordered by created, then cpeNameId).",
    format_name="NVD_CPE",
    list_key="products",
    max_page=10000,
    parameters=(
        Param("cpeNameId", "string", "One product by its UUID (case-insensitive)."),
        Param("cpeMatchString", "string", "Products matching this CPE 2.3 match string: every component other than * must be equal (case-insensitive); partial strings are padded with *."),
        Param("keywordSearch", "string", "Words that must all begin a word of a title or a reference link."),
        Param("keywordExactMatch", "flag", "With keywordSearch: match the words as one exact phrase."),
        Param("lastModStartDate", "datetime", "Start of a window (at most 120 days) on lastModified; needs lastModEndDate."),
        Param("lastModEndDate", "datetime", "End of the lastModified window."),
        Param("matchCriteriaId", "string", "The products a match criteria (UUID) expands to: its stored matches, else the dictionary names its criteria and version bounds cover."),
        *PAGING,
    ),
)  # fmt: skip

CPEMATCH_ENDPOINT = EndpointDoc(
    path="/rest/json/cpematch/2.0",
    operation_id="get_cpe_match",
    summary="Match criteria with their dictionary expansions, filtered and paged (ordered by created, then matchCriteriaId).",
    format_name="NVD_CPEMatchString",
    list_key="matchStrings",
    max_page=500,
    parameters=(
        Param("cveId", "string", "Every match criteria the configurations of this CVE reference."),
        Param("matchCriteriaId", "string", "One match criteria by its UUID (case-insensitive)."),
        Param("matchStringSearch", "string", "Criteria conforming to this complete (13-field) CPE 2.3 match string: every component other than * must be equal."),
        Param("lastModStartDate", "datetime", "Start of a window (at most 120 days) on lastModified or cpeLastModified; needs lastModEndDate."),
        Param("lastModEndDate", "datetime", "End of the lastModified window."),
        *PAGING,
    ),
)  # fmt: skip

SOURCE_ENDPOINT = EndpointDoc(
    path="/rest/json/source/2.0",
    operation_id="get_sources",
    summary="CVE sources (assigners: CNAs, NVD, ADPs), filtered and paged (ordered by created, then as stored).",
    format_name="NVD_SOURCE",
    list_key="sources",
    max_page=1000,
    parameters=(
        Param("sourceIdentifier", "string", "The source one of whose sourceIdentifiers this is (an address or a UUID)."),
        Param("lastModStartDate", "datetime", "Start of a window (at most 120 days) on lastModified; needs lastModEndDate."),
        Param("lastModEndDate", "datetime", "End of the lastModified window."),
        *PAGING,
    ),
)  # fmt: skip

ENDPOINTS: list[EndpointDoc] = [
    CVE_ENDPOINT,
    HISTORY_ENDPOINT,
    CPE_ENDPOINT,
    CPEMATCH_ENDPOINT,
    SOURCE_ENDPOINT,
]


STATISTICS_OPERATION: dict[str, Any] = {
    "operationId": "get_statistics",
    "summary": "NVD's dashboard counts of CVEs by vulnStatus (Total first), as cve-bin-tool reads them.",
    "parameters": [
        {
            "name": "reporttype",
            "in": "query",
            "required": True,
            "schema": {"type": "string", "enum": ["countsbystatus"]},
        }
    ],
    "responses": {
        "200": {
            "description": "`vulnsByStatusCounts`: a list of {name, count, description, startDate, endDate}.",
            "content": {"application/json": {"schema": {"type": "object", "required": ["vulnsByStatusCounts"]}}},
        },
        "404": {
            "description": "Another or no report type: the reason in the `message` header.",
            "headers": {"message": {"schema": {"type": "string"}}},
        },
    },
}  # fmt: skip


def _schema(param: Param) -> dict[str, Any]:
    if param.kind == "integer":
        return {"type": "integer", "minimum": 0}
    if param.kind == "flag":
        return {"type": "string", "allowEmptyValue": True}
    if param.kind == "datetime":
        return {"type": "string", "format": "date-time"}
    if param.kind == "enum":
        return {"type": "string", "enum": list(param.values)}
    return {"type": "string"}


def _envelope_schema(endpoint: EndpointDoc) -> dict[str, Any]:
    """NVD's paged envelope: its keys, their types, the list of records (objects)."""
    counts = {"type": "integer", "minimum": 0}
    return {
        "type": "object",
        "required": [
            "resultsPerPage",
            "startIndex",
            "totalResults",
            "format",
            "version",
            "timestamp",
            endpoint.list_key,
        ],
        "properties": {
            "resultsPerPage": {**counts, "maximum": endpoint.max_page},
            "startIndex": counts,
            "totalResults": counts,
            "format": {"const": endpoint.format_name},
            "version": {"const": "2.0"},
            "timestamp": {"type": "string"},
            endpoint.list_key: {
                "type": "array",
                "maxItems": endpoint.max_page,
                "items": {"type": "object"},
            },
        },
    }


def _operation(endpoint: EndpointDoc) -> dict[str, Any]:
    return {
        "operationId": endpoint.operation_id,
        "summary": endpoint.summary,
        "parameters": [
            {
                "name": p.name,
                "in": "query",
                "required": False,
                "description": p.description
                + (
                    f" Default and maximum {endpoint.max_page}."
                    if p.name == "resultsPerPage"
                    else ""
                ),
                "schema": _schema(p),
                **({"allowEmptyValue": True} if p.kind == "flag" else {}),
            }
            for p in endpoint.parameters
        ],
        "responses": {
            "200": {
                "description": f"A page of results (`format` {endpoint.format_name}, list `{endpoint.list_key}`).",
                "content": {"application/json": {"schema": _envelope_schema(endpoint)}},
                "headers": {
                    "x-assay-generation": {
                        "description": "The store's data generation the page was read at "
                        "(assay extension; pass it back as sinceGeneration).",
                        "schema": {"type": "string", "pattern": "^[0-9]+$"},
                    }
                },
            },
            "404": {
                "description": "Invalid request: empty body, the reason in the `message` header.",
                "headers": {"message": {"schema": {"type": "string"}}},
            },
        },
    }


@cache
def openapi_document() -> bytes:
    paths: dict[str, Any] = {}
    for endpoint in ENDPOINTS:
        paths[endpoint.path] = {"get": _operation(endpoint)}
    paths["/rest/public/dashboard/statistics"] = {"get": STATISTICS_OPERATION}
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "assay: NVD API 2.0",
            "version": __version__,
            "description": "A drop-in local mirror of the NVD REST API 2.0. Parameter names are "
            "case-insensitive; flags are on when present; errors answer 404 with a `message` header.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
    }
    return orjson.dumps(document)


@cache
def docs_page() -> str:
    sections = []
    for endpoint in ENDPOINTS:
        rows = "".join(
            f"<tr><td><code>{html.escape(p.name)}</code></td><td>{html.escape(p.kind)}</td>"
            f"<td>{html.escape(p.description)}"
            + (f" One of: {html.escape(', '.join(p.values))}." if p.values else "")
            + "</td></tr>"
            for p in endpoint.parameters
        )
        sections.append(
            f"<h2>GET <code>{html.escape(endpoint.path)}</code></h2>"
            f"<p>{html.escape(endpoint.summary)} Format <code>{endpoint.format_name}</code>, "
            f"list <code>{endpoint.list_key}</code>, at most {endpoint.max_page} per page.</p>"
            f"<table><tr><th>parameter</th><th>type</th><th>meaning</th></tr>{rows}</table>"
        )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>assay NVD API 2.0</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3em;"
        "text-align:left;vertical-align:top}code{background:#f4f4f4}</style></head><body>"
        "<h1>assay: NVD API 2.0</h1><p>Machine-readable description: "
        "<a href='/openapi.json'>/openapi.json</a>. Every path also answers with a trailing "
        "slash, to HEAD and OPTIONS, and under <code>/compat/nvd-api/</code> without the fields "
        "NVD added after 2023. Bad input answers 404 with an empty body and the reason in the "
        "<code>message</code> header.</p>" + "".join(sections) + "</body></html>"
    )
