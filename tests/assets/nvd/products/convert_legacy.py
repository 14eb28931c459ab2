"""Rebuild `CVE-2022-32223.json`: the real NVD 1.1 feed item, in the API 2.0 shape.

    .venv/bin/python tests/assets/nvd/products/convert_legacy.py ../shared/data/nvd

Development-time only (tests read the committed output). The 1.1 item comes from
`legacy-1.1/nvdcve-1.1-2022.json.gz`; each criteria's `matchCriteriaId` (which 1.1 never
had) is taken from the real Match Criteria API response for the same CVE
(`nvd-go/cpematch-CVE-2022-32223.json.gz`), by equal criteria and version bounds.
What 1.1 lacks (vulnStatus, cveTags) is left out; the metric and weakness `source`
is NVD's, as the 1.1 feed holds NVD's own analysis.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

CVE_ID = "CVE-2022-32223"
BOUNDS = (
    "versionStartIncluding",
    "versionStartExcluding",
    "versionEndIncluding",
    "versionEndExcluding",
)


def _timestamp(text: str) -> str:
    # 1.1 writes "2022-07-14T15:15Z"; 2.0 writes "2022-07-14T15:15:00.000".
    return text.removesuffix("Z") + ":00.000"


def _criteria_ids(cpematch: dict[str, Any]) -> dict[tuple[str | None, ...], str]:
    ids = {}
    for item in cpematch["matchStrings"]:
        match = item["matchString"]
        ids[(match["criteria"], *(match.get(b) for b in BOUNDS))] = match["matchCriteriaId"]
    return ids


def _node(node: dict[str, Any], ids: dict[tuple[str | None, ...], str]) -> dict[str, Any]:
    matches = []
    for match in node["cpe_match"]:
        converted: dict[str, Any] = {
            "vulnerable": match["vulnerable"],
            "criteria": match["cpe23Uri"],
        }
        for bound in BOUNDS:
            if bound in match:
                converted[bound] = match[bound]
        converted["matchCriteriaId"] = ids[(match["cpe23Uri"], *(match.get(b) for b in BOUNDS))]
        matches.append(converted)
    return {"operator": node["operator"], "negate": False, "cpeMatch": matches}


def convert(item: dict[str, Any], ids: dict[tuple[str | None, ...], str]) -> dict[str, Any]:
    cve = item["cve"]
    source = cve["CVE_data_meta"]["ASSIGNER"]
    v3 = item["impact"]["baseMetricV3"]
    (top,) = item["configurations"]["nodes"]
    return {
        "id": cve["CVE_data_meta"]["ID"],
        "sourceIdentifier": source,
        "published": _timestamp(item["publishedDate"]),
        "lastModified": _timestamp(item["lastModifiedDate"]),
        "descriptions": [
            {"lang": d["lang"], "value": d["value"]} for d in cve["description"]["description_data"]
        ],
        "metrics": {
            "cvssMetricV31": [
                {
                    "source": "nvd@nist.gov",
                    "type": "Primary",
                    "cvssData": v3["cvssV3"],
                    "exploitabilityScore": v3["exploitabilityScore"],
                    "impactScore": v3["impactScore"],
                }
            ]
        },
        "weaknesses": [
            {
                "source": "nvd@nist.gov",
                "type": "Primary",
                "description": [
                    {"lang": d["lang"], "value": d["value"]}
                    for p in cve["problemtype"]["problemtype_data"]
                    for d in p["description"]
                ],
            }
        ],
        "configurations": [
            {"operator": top["operator"], "nodes": [_node(child, ids) for child in top["children"]]}
        ],
        "references": [
            {"url": r["url"], "source": source, **({"tags": r["tags"]} if r["tags"] else {})}
            for r in cve["references"]["reference_data"]
        ],
    }


def main(shared: Path) -> None:
    feed = json.loads(gzip.decompress((shared / "legacy-1.1/nvdcve-1.1-2022.json.gz").read_bytes()))
    cpematch = json.loads(
        gzip.decompress((shared / "nvd-go/cpematch-CVE-2022-32223.json.gz").read_bytes())
    )
    (item,) = [i for i in feed["CVE_Items"] if i["cve"]["CVE_data_meta"]["ID"] == CVE_ID]
    record = convert(item, _criteria_ids(cpematch))
    response = {
        "resultsPerPage": 1,
        "startIndex": 0,
        "totalResults": 1,
        "format": "NVD_CVE",
        "version": "2.0",
        "timestamp": "2022-10-20T00:00:00.000",
        "vulnerabilities": [{"cve": record}],
    }
    target = Path(__file__).with_name(f"{CVE_ID}.json")
    target.write_text(json.dumps(response, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{CVE_ID} -> {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
