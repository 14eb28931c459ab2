"""The CVSS v3 calculator that rates OSV vectors gives NVD's own score for every CVSS v3
vector of the bundled NVD sample (real records)."""

from __future__ import annotations

import gzip

import orjson

from assay._cli.nvd import bundled_files
from assay.audit.severity import cvss3_base_score, severity_of_score


def test_every_v3_vector_of_the_nvd_sample_scores_as_nvd_scored_it() -> None:
    (path,) = [p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"]
    seen = 0
    for line in gzip.decompress(path.read_bytes()).splitlines():
        record = orjson.loads(line)
        cve = record.get("cve", record)
        for key in ("cvssMetricV31", "cvssMetricV30"):
            for entry in (cve.get("metrics") or {}).get(key, []):
                data = entry["cvssData"]
                assert cvss3_base_score(data["vectorString"]) == data["baseScore"], data
                assert severity_of_score(data["baseScore"]) == data["baseSeverity"]
                seen += 1
    assert seen > 100


def test_what_is_not_a_v3_vector_has_no_score() -> None:
    assert cvss3_base_score("AV:N/AC:L/Au:N/C:P/I:P/A:P") is None
    assert cvss3_base_score("CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H") is None
    assert cvss3_base_score("CVSS:3.1/AV:N") is None
