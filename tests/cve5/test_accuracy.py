"""Precision and recall of CVE 5 matching on a labelled corpus from the real records
(tests/cve5/corpus.py); the floors are those docs/performance.md publishes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._cli import main

from .conftest import ASSETS, record_paths
from .corpus import corpus, measure

FLOORS = {"cisa-adp": (0.97, 0.85), "cve5": (0.95, 0.95)}  # (precision, recall)


def test_precision_and_recall_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = corpus(record_paths())
    store = f"sqlite:///{tmp_path / 's.db'}"
    assert main(["cve", "import", "--store", store, str(ASSETS)]) == 0
    components = sorted({(c.cpe, c.version) for c in cases})
    bom = tmp_path / "bom.json"
    bom.write_text(
        json.dumps(
            {
                "bomFormat": "CycloneDX",
                "specVersion": "1.5",
                "components": [
                    {
                        "type": "application",
                        "name": cpe,
                        "version": version,
                        "bom-ref": f"{cpe}@{version}",
                        "cpe": f"{cpe}:{version}:*:*:*:*:*:*:*",
                    }
                    for cpe, version in components
                ],
            }
        )
    )
    capsys.readouterr()
    main(["scan", str(bom), "--store", store, "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    found = {
        (c["ref"].rsplit("@", 1)[0], c["version"], v["id"])
        for c in document["components"]
        for v in c["vulnerabilities"]
    }
    table = measure(cases, found)
    print(json.dumps(table, indent=2))
    for case in cases:
        if case.affected != ((case.cpe, case.version, case.cve_id) in found):
            print("MISS", case)
    for source, (precision, recall) in FLOORS.items():
        assert table[source]["precision"] >= precision, table
        assert table[source]["recall"] >= recall, table
