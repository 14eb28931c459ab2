"""Rebuild the real NVD sample bundled with assay (`src/assay/data/`).

Run from a checkout that has the shared data folder beside it:

    .venv/bin/python tools/build_sample_data.py ../shared/data/nvd

Development-time only: assay itself never reads the shared folder. Records are
deduplicated by CVE id, keeping the newest `lastModified`.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import orjson

CVE_FILES = (
    "dependency-track/cve-2022-1954.json",
    "dependency-track/cve-2024-23113.json",
    "dependency-track/nvdcve-2.0-2022.json",
    "nvd-go/cves-1999.json.gz",
    "nvd-go/cves-CVE-2023-0001.json.gz",
    "nvdlib/CVE-2017-7542.json",
    "nvdlib/CVE-2021-45357.json",
    "nvdlib/search_full_page.json",
    "nvdlib/simple_search.json",
    *(f"osv.dev/{name}" for name in (
        "CVE-2014-1424.json", "CVE-2016-1585.json", "CVE-2018-1000500.json",
        "CVE-2020-13595.json", "CVE-2021-28429.json", "CVE-2022-0090.json",
        "CVE-2022-1122.json", "CVE-2022-25929.json", "CVE-2022-29194.json",
        "CVE-2022-2956.json", "CVE-2022-32746.json", "CVE-2022-34668.json",
        "CVE-2022-36037.json", "CVE-2022-36749.json", "CVE-2022-46285.json",
        "CVE-2023-24256.json", "CVE-2023-5341.json", "CVE-2024-47177.json",
        "conversion-test.json",
    )),
)  # fmt: skip


def load(path: Path) -> Any:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return orjson.loads(data)


def main(source: Path, target: Path) -> None:
    newest: dict[str, dict[str, Any]] = {}
    for name in CVE_FILES:
        for item in load(source / name)["vulnerabilities"]:
            cve = item["cve"]
            current = newest.get(cve["id"])
            if current is None or cve["lastModified"] > current["lastModified"]:
                newest[cve["id"]] = cve
    lines = b"".join(orjson.dumps(newest[key]) + b"\n" for key in sorted(newest))
    (target / "nvd-cves.jsonl.gz").write_bytes(gzip.compress(lines, mtime=0))
    print(f"{len(newest)} CVE records -> {target / 'nvd-cves.jsonl.gz'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).resolve().parent.parent / "src" / "assay" / "data")
