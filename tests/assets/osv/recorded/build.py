"""Regenerates `records/` from the shared data: the records osv.dev's recorded answers in
this folder name for Go and PyPI queries, and for each queried package up to 12 records
osv.dev did not name (published before the recording), so a test can check both ways.

    python tests/assets/osv/recorded/build.py /work/shared/data/vulns
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).parent
RECORDED_BEFORE = "2026-07-01"
NEGATIVES = 12


def main(shared: Path) -> None:
    out = HERE / "records"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    wanted: dict[tuple[str, str], set[str]] = {}
    for cassette in sorted(HERE.glob("*.yaml")):
        for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
            request = json.loads(interaction["request"]["body"])
            response = json.loads(interaction["response"]["body"])
            for query, result in zip(request["queries"], response["results"], strict=True):
                package = query.get("package") or {}
                if package.get("ecosystem") in ("Go", "PyPI"):
                    key = (package["ecosystem"], package["name"])
                    wanted.setdefault(key, set()).update(v["id"] for v in result.get("vulns", []))
    go = {p.stem: p for p in (shared / "golang-vulndb" / "data" / "osv").glob("*.json")}
    pypa = {p.stem: p for p in (shared / "pypa-advisory-database" / "vulns").glob("*/*.yaml")}
    by_package: dict[tuple[str, str], list[Path]] = {}
    for path in go.values():
        record = json.loads(path.read_text())
        for affected in record.get("affected", []):
            package = affected.get("package") or {}
            key = ("Go", package.get("name", ""))
            if key in wanted and str(record.get("published", "")) < RECORDED_BEFORE:
                by_package.setdefault(key, []).append(path)
    copied: set[Path] = set()
    for (ecosystem, name), ids in sorted(wanted.items()):
        for osv_id in sorted(ids):
            path = go.get(osv_id) or pypa.get(osv_id)
            if path is not None:
                copied.add(path)
        others = [p for p in sorted(by_package.get((ecosystem, name), [])) if p.stem not in ids]
        copied.update(others[:NEGATIVES])
    for path in sorted(copied):
        shutil.copyfile(path, out / path.name)
    print(f"{len(copied)} records")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
