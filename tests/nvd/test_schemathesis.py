"""Schemathesis against `/openapi.json` on both stores, bounded: generated valid and
invalid requests on every documented operation give no server error and no answer the
description does not allow (`make bench` runs the same for >= 10,000 requests)."""

from __future__ import annotations

from bench._fuzz import fuzz
from starlette.testclient import TestClient

EXAMPLES = 15  # per operation and mode: 270 requests per store


def test_generated_requests_find_no_server_error_and_no_schema_violation(
    products_client: TestClient,
) -> None:
    report = fuzz(products_client.app, examples=EXAMPLES)
    assert report.requests >= 240
    # The five NVD listings, the dashboard counts and osv.dev's three paths.
    assert len(report.by_operation) >= 9, report.by_operation
    assert {"POST /v1/query", "POST /v1/querybatch", "GET /v1/vulns/{id}"} <= set(
        report.by_operation
    )
    assert (report.server_errors, report.violations) == (0, 0), report.failures
