"""The API description served at `/openapi.json` and rendered, self-contained, at `/docs`."""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from assay import __version__
from assay.nvd.operations import OPERATIONS, Operation, Parameter
from assay.nvd.server.osv_api import MAX_BATCH_QUERIES, MAX_FIELD
from assay.nvd.server.osv_api import PAGE_SIZE as OSV_PAGE_SIZE


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # "string", "integer", "flag", "datetime", "enum"
    description: str
    values: tuple[str, ...] = ()

    @classmethod
    def of(cls, parameter: Parameter) -> Param:
        return cls(parameter.wire, parameter.openapi_type, parameter.description, parameter.choices)


@dataclass(frozen=True, slots=True)
class EndpointDoc:
    path: str
    operation_id: str
    summary: str
    format_name: str
    list_key: str
    max_page: int
    parameters: tuple[Param, ...]

    @classmethod
    def of(cls, operation: Operation) -> EndpointDoc:
        return cls(
            path=API_ROOT + operation.path,
            operation_id=operation.method,
            summary=operation.summary,
            format_name=operation.format_name,
            list_key=operation.list_key,
            max_page=operation.max_page,
            parameters=tuple(Param.of(parameter) for parameter in operation.parameters),
        )


API_ROOT = "/rest/json"
ENDPOINTS: list[EndpointDoc] = [EndpointDoc.of(operation) for operation in OPERATIONS.values()]
CVE_ENDPOINT, HISTORY_ENDPOINT, CPE_ENDPOINT, CPEMATCH_ENDPOINT, SOURCE_ENDPOINT = ENDPOINTS


_TAG_PATTERN = '^(W/)?"g[0-9]+"$'
CONDITIONAL_HEADERS: list[dict[str, Any]] = [
    {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": 'The `ETag` of an earlier answer (`W/"g<N>"`): 304 while the data '
        "generation is still N.",
        "schema": {"type": "string", "maxLength": 200},
    },
    {
        "name": "If-Match",
        "in": "header",
        "required": False,
        "description": 'A page walk\'s generation, `W/"g<N>"` with N the `x-assay-generation` '
        "of the walk's first page (assay extension): the page is answered only as read at "
        "generation N, else 412; `*` asks nothing.",
        "schema": {"type": "string", "pattern": _TAG_PATTERN},
    },
]

_SNAPSHOT_ENTRY = {
    "type": "object",
    "required": ["name", "since", "generation", "records", "bytes", "sha256"],
    "properties": {
        "name": {"type": "string"},
        "since": {"type": ["integer", "null"], "description": "The base generation of a delta."},
        "generation": {"type": "integer"},
        "records": {"type": "integer"},
        "bytes": {"type": "integer"},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "created": {"type": "string"},
        "signatures": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
_SNAPSHOT_INDEX = {
    "summary": "The published snapshot series (`assay serve --snapshots DIR`): each full "
    "snapshot and delta with its base and target generations, size, digest and signatures.",
    "responses": {
        "200": {
            "description": "The series' index.",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["format", "snapshots"],
                        "properties": {
                            "format": {"type": "integer"},
                            "store": {"type": ["string", "null"]},
                            "snapshots": {"type": "array", "items": _SNAPSHOT_ENTRY},
                        },
                    }
                }
            },
        },
        "503": {"description": "The index cannot be read; `message` says why."},
    },
}
SNAPSHOT_PATHS: dict[str, Any] = {
    "/api/snapshots": {"get": {"operationId": "snapshot_index", **_SNAPSHOT_INDEX}},
    "/api/snapshots/{name}": {
        "get": {
            "operationId": "snapshot_file",
            "summary": "A listed snapshot (zstd) or one of its signatures (JSON); ranges as "
            "a static file server serves them. `index.json` is the index.",
            "parameters": [
                {
                    "name": "name",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$"},
                }
            ],
            "responses": {
                "200": {
                    "description": "The file.",
                    "content": {"application/zstd": {}, "application/json": {}},
                },
                "404": {"description": "The index lists no file of that name."},
                "503": {"description": "The index cannot be read."},
            },
        }
    },
}
"""Described only when the server publishes snapshots (`openapi_document(snapshots=True)`)."""


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
        ]
        + CONDITIONAL_HEADERS,
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
            "304": {
                "description": "Not modified: `If-None-Match` names the current `ETag` (or "
                "`If-Modified-Since` is not before `Last-Modified`); the store is not searched."
            },
            "404": {
                "description": "Invalid request: empty body, the reason in the `message` header.",
                "headers": {"message": {"schema": {"type": "string"}}},
            },
            "412": {
                "description": "The page walk must begin again: `If-Match` names a generation "
                "this page cannot be read at (assay extension). The `message` header names both "
                "generations; `x-assay-generation` is where a new walk starts.",
                "headers": {
                    "message": {"schema": {"type": "string"}},
                    "x-assay-generation": {"schema": {"type": "string", "pattern": "^[0-9]+$"}},
                },
            },
        },
    }


# --- osv.dev's API v1 (`osv_api.py`) ------------------------------------------------------

_OSV_TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_FIELD}
_OSV_QUERY = {
    "type": "object",
    "description": "By package (name and ecosystem, or a purl) with or without a version, "
    "or by commit; page_token as a previous answer gave it.",
    "additionalProperties": False,
    "properties": {
        "package": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"name": _OSV_TEXT, "ecosystem": _OSV_TEXT, "purl": _OSV_TEXT},
        },
        "version": _OSV_TEXT,
        "commit": _OSV_TEXT,
        "page_token": {"type": "string", "maxLength": 64},
    },
}
_OSV_ERROR = {
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
            }
        }
    }
}
_OSV_PAGE = {
    "next_page_token": {
        "type": "string",
        "description": f"More than {OSV_PAGE_SIZE} records: send it back as page_token.",
    }
}


def _osv_errors(*statuses: str) -> dict[str, Any]:
    reasons = {
        "400": "Invalid input: osv.dev's error shape naming the field.",
        "404": "No record by that id.",
        "413": "A body over its limit.",
        "503": "The store did not answer.",
    }
    return {status: {"description": reasons[status], **_OSV_ERROR} for status in statuses}


def _osv_json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _osv_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


OSV_PATHS: dict[str, Any] = {
    "/v1/query": {
        "post": {
            "operationId": "osv_query",
            "summary": "osv.dev's query: the OSV records affecting a package version, or "
            "naming a commit (whole records, ordered by id).",
            "requestBody": _osv_body(_OSV_QUERY),
            "responses": {
                "200": _osv_json(
                    "The matching records ({} when none).",
                    {
                        "type": "object",
                        "properties": {
                            "vulns": {"type": "array", "items": {"type": "object"}},
                            **_OSV_PAGE,
                        },
                    },
                ),
                **_osv_errors("400", "413", "503"),
            },
        }
    },
    "/v1/querybatch": {
        "post": {
            "operationId": "osv_querybatch",
            "summary": "osv.dev's batch query: for each query, the ids and modified times "
            "of the matching records.",
            "requestBody": _osv_body(
                {
                    "type": "object",
                    "required": ["queries"],
                    "additionalProperties": False,
                    "properties": {
                        "queries": {
                            "type": "array",
                            "maxItems": MAX_BATCH_QUERIES,
                            "items": _OSV_QUERY,
                        }
                    },
                }
            ),
            "responses": {
                "200": _osv_json(
                    "One result per query, in order.",
                    {
                        "type": "object",
                        "required": ["results"],
                        "properties": {
                            "results": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "vulns": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "required": ["id", "modified"],
                                                "properties": {
                                                    "id": {"type": "string"},
                                                    "modified": {"type": "string"},
                                                },
                                            },
                                        },
                                        **_OSV_PAGE,
                                    },
                                },
                            }
                        },
                    },
                ),
                **_osv_errors("400", "413", "503"),
            },
        }
    },
    "/v1/vulns/{id}": {
        "get": {
            "operationId": "osv_vuln",
            "summary": "One OSV record by id (withdrawn ones too).",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": _OSV_TEXT}],
            "responses": {
                "200": _osv_json("The record.", {"type": "object"}),
                **_osv_errors("400", "404", "503"),
            },
        }
    },
}


@cache
def openapi_document(snapshots: bool = False) -> bytes:
    """The document; `snapshots` adds `/api/snapshots` (served with `--snapshots DIR`)."""
    paths: dict[str, Any] = {}
    for endpoint in ENDPOINTS:
        paths[endpoint.path] = {"get": _operation(endpoint)}
    paths["/rest/public/dashboard/statistics"] = {"get": STATISTICS_OPERATION}
    paths.update(OSV_PATHS)
    if snapshots:
        paths.update(SNAPSHOT_PATHS)
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "assay: NVD API 2.0 and osv.dev API v1",
            "version": __version__,
            "description": "A drop-in local mirror of the NVD REST API 2.0 (`/rest/json/...`) "
            "and osv.dev's API v1 (`/v1/...`). NVD: parameter names are case-insensitive; "
            "flags are on when present; errors answer 404 with a `message` header. osv.dev: "
            "errors answer 400 with a JSON `{code, message}`.",
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
