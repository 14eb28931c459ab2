"""`/metrics` in Prometheus' text format, from real servers on both stores."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tests.service.servers import serving

CVE = "/rest/json/cves/2.0?cveId=CVE-2024-23113"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_requests_and_read_the_store(sample_store_url: str, tmp_path: Path) -> None:
    with serving(sample_store_url, "--workers", "2", folder=tmp_path) as served:
        for _ in range(6):
            assert httpx.get(served.base + CVE).status_code == 200
            assert httpx.get(served.base + "/rest/json/cves/2.0/?cveId=bogus").status_code == 404
        assert httpx.get(served.base + "/no/such/path/at/all").status_code == 404
        answer = httpx.get(served.base + "/metrics")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        found = samples(answer.text)
    api = "/rest/json/cves/2.0"
    # Both workers' counts, whichever answered the scrape.
    assert found[("assay_http_requests_total", (("path", api), ("status", "200")))] == 6
    assert found[("assay_http_requests_total", (("path", api), ("status", "404")))] == 6
    assert found[("assay_http_requests_total", (("path", "other"), ("status", "404")))] == 1
    assert found[("assay_http_request_duration_seconds_count", (("path", api),))] == 12
    assert found[("assay_store_up", ())] == 1
    assert found[("assay_store_generation", ())] >= 1
    assert found[("assay_store_rows", (("table", "cve"),))] > 200
    assert ("assay_store_rows", (("table", "api_key"),)) in found
