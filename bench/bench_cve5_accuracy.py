"""Precision and recall of CVE 5 matching over a folder of real CVE 5 records.

    python bench/bench_cve5_accuracy.py PATH...   (folders of CVE JSON 5 records)

The corpus and its labels are tests/cve5/corpus.py's (components on both sides of every
range edge); the records are imported into a fresh SQLite store and scanned through
`assay scan` as one CycloneDX SBOM. Prints a JSON table per source and the scan's time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cve5.corpus import corpus, measure


def main(folders: list[str]) -> None:
    paths = sorted(p for folder in folders for p in Path(folder).rglob("*.json"))
    records = []
    for path in paths:
        try:
            if json.loads(path.read_bytes()).get("dataType") == "CVE_RECORD":
                records.append(path)
        except ValueError:
            continue
    cases = corpus(records)
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{folder}/s.db"
        assay = [sys.executable, "-m", "assay"]
        subprocess.run(
            [*assay, "cve", "import", "--store", store, *folders], check=True, capture_output=True
        )
        components = sorted({(c.cpe, c.version) for c in cases})
        bom = Path(folder) / "bom.json"
        bom.write_text(
            json.dumps(
                {
                    "bomFormat": "CycloneDX",
                    "specVersion": "1.5",
                    "components": [
                        {
                            "type": "application",
                            "name": cpe,
                            "version": v,
                            "bom-ref": f"{cpe}@{v}",
                            "cpe": f"{cpe}:{v}:*:*:*:*:*:*:*",
                        }
                        for cpe, v in components
                    ],
                }
            )
        )
        start = time.perf_counter()
        out = subprocess.run(
            [*assay, "scan", str(bom), "--store", store, "--format", "json"],
            capture_output=True,
            check=False,
        ).stdout
        elapsed = time.perf_counter() - start
    document = json.loads(out)
    found = {
        (c["ref"].rsplit("@", 1)[0], c["version"], v["id"])
        for c in document["components"]
        for v in c["vulnerabilities"]
    }
    print(
        json.dumps(
            {
                "records": len(records),
                "components": len(components),
                "scanSeconds": round(elapsed, 2),
                "bySource": measure(cases, found),
            },
            indent=2,
        )
    )


ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FOLDERS = (
    ROOT.parent / "shared" / "data" / "vulns" / "cisa-vulnrichment",
    ROOT.parent / "shared" / "data" / "vulns" / "cve5",
)


def run(args: list[str]) -> None:
    """`python -m bench cve5_accuracy`: the folders given, else the shared real records
    beside the checkout, else the test assets' sample."""
    folders = args or [str(f) for f in DEFAULT_FOLDERS if f.is_dir()]
    main(folders or [str(ROOT / "tests" / "assets" / "cve5")])


if __name__ == "__main__":
    run(sys.argv[1:])
