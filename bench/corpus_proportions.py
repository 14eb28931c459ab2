"""The proportions of the benchmark corpus beside those of the real NVD feeds.

    python -m bench.corpus_proportions [--source ../shared/data/nvd] [--corpus DIR]
                                       [--year 2022] [--json]

For each set of records, per 1,000 CVEs: distinct match criteria (a criteria string with
its version range and its `matchCriteriaId`: what NVD gives one id and the store keeps
once), criteria uses (`cpeMatch` entries), uses per distinct criteria, distinct vendors
and vendor:product pairs, configurations per CVE, and the size of the records (NVD 2.0
JSON, compact) at the median, p90 and p99.

Sets: the real NVD 1.1 feed of 2022 (its items converted to the 2.0 shape as the corpus
generator converts them), the real NVD 2.0 samples (a few hundred records, with NVD's own
match criteria ids), the generated corpus, and the corpus's records published in
`--year` (a one-year slice: the feed is one year of NVD, and vendors and products do not
grow in proportion to the number of years). Ratios are the corpus's over the real feed's.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench.nvd_corpus import (
    DEFAULT_COUNT,
    DEFAULT_OUT,
    DEFAULT_SEED,
    DEFAULT_SOURCE,
    _from_legacy,
    corpus_dir,
)

RANGE_KEYS = (
    "versionStartIncluding",
    "versionStartExcluding",
    "versionEndIncluding",
    "versionEndExcluding",
)


@dataclass
class Proportions:
    """What one set of CVE records holds, accumulated record by record."""

    name: str
    cves: int = 0
    configured: int = 0
    configurations: int = 0
    uses: int = 0
    ranged_uses: int = 0
    criteria: Counter[bytes] = field(default_factory=Counter)
    vendors: set[str] = field(default_factory=set)
    products: set[str] = field(default_factory=set)
    sizes: list[int] = field(default_factory=list)

    def add(self, record: dict[str, Any], size: int) -> None:
        self.cves += 1
        self.sizes.append(size)
        configurations = record.get("configurations") or []
        self.configurations += len(configurations)
        self.configured += bool(configurations)
        for configuration in configurations:
            for node in configuration.get("nodes") or []:
                for match in node.get("cpeMatch") or []:
                    self.uses += 1
                    if any(key in match for key in RANGE_KEYS):
                        self.ranged_uses += 1
                    self.criteria[_criteria_key(match)] += 1
                    parts = _components(match["criteria"])
                    self.vendors.add(parts[3])
                    self.products.add(f"{parts[3]}:{parts[4]}")

    def figures(self) -> dict[str, float]:
        per = 1000 / max(self.cves, 1)
        distinct = len(self.criteria)
        uses_each = sorted(self.criteria.values())
        sizes = sorted(self.sizes)
        return {
            "CVEs": self.cves,
            "distinct criteria / 1k CVEs": distinct * per,
            "criteria uses / 1k CVEs": self.uses * per,
            "uses per distinct criteria": self.uses / max(distinct, 1),
            "distinct criteria used once (share)": (
                sum(1 for n in uses_each if n == 1) / max(distinct, 1)
            ),
            "uses of a distinct criteria, p99": _quantile(uses_each, 0.99),
            "uses of a distinct criteria, max": uses_each[-1] if uses_each else 0,
            "uses with a version range (share)": self.ranged_uses / max(self.uses, 1),
            "vendors / 1k CVEs": len(self.vendors) * per,
            "vendor:product pairs / 1k CVEs": len(self.products) * per,
            "CVEs with configurations (share)": self.configured / max(self.cves, 1),
            "configurations per configured CVE": self.configurations / max(self.configured, 1),
            "record bytes, median": _quantile(sizes, 0.5),
            "record bytes, p90": _quantile(sizes, 0.9),
            "record bytes, p99": _quantile(sizes, 0.99),
        }


def _criteria_key(match: dict[str, Any]) -> bytes:
    """A distinct match criteria: NVD's id when the record has one, else the criteria
    string and range (the 1.1 feed has no ids; NVD gives each such pair one)."""
    if match.get("matchCriteriaId"):
        return str(match["matchCriteriaId"]).upper().encode()
    text = "|".join([match["criteria"], *(str(match.get(key, "")) for key in RANGE_KEYS)])
    return hashlib.blake2b(text.encode(), digest_size=12).digest()


def _components(criteria: str) -> list[str]:
    # Vendor and product never hold an escaped colon in NVD's data; a plain split will do.
    return criteria.split(":")


def _quantile(values: list[int], q: float) -> int:
    return values[min(len(values) - 1, int(len(values) * q))] if values else 0


# -- the sets -------------------------------------------------------------------------


def legacy_records(source: Path) -> Iterator[dict[str, Any]]:
    """The items of every NVD 1.1 feed under `source`, as NVD 2.0 CVE objects."""
    for path in sorted(source.rglob("nvdcve-1.1-*.json*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            document = json.load(handle)
        for item in document["CVE_Items"]:
            yield _legacy_record(item)


def _legacy_record(item: dict[str, Any]) -> dict[str, Any]:
    cve = item["cve"]
    record: dict[str, Any] = {
        "id": cve["CVE_data_meta"]["ID"],
        "sourceIdentifier": cve["CVE_data_meta"].get("ASSIGNER", "cve@mitre.org"),
        "published": item["publishedDate"].replace("Z", ":00.000"),
        "lastModified": item["lastModifiedDate"].replace("Z", ":00.000"),
        "vulnStatus": "Analyzed",
        "descriptions": [
            {"lang": d["lang"], "value": d["value"]} for d in cve["description"]["description_data"]
        ],
    }
    template = _from_legacy(item)
    if template is None:  # rejected: no configurations or metrics
        record["metrics"] = {}
        record["references"] = []
        return record
    metrics: dict[str, Any] = {}
    if template.v3 is not None:
        version = template.v3["cvssData"].get("version", "3.1")
        metrics["cvssMetricV31" if version == "3.1" else "cvssMetricV30"] = [template.v3]
    if template.v2 is not None:
        metrics["cvssMetricV2"] = [template.v2]
    record["metrics"] = metrics
    if template.weaknesses:
        record["weaknesses"] = template.weaknesses
    if template.configurations:
        record["configurations"] = template.configurations
    record["references"] = template.references
    return record


def current_records(source: Path) -> Iterator[dict[str, Any]]:
    """The CVE objects of the NVD 2.0 samples under `source` (API pages and feeds)."""
    seen: set[str] = set()
    for path in sorted(source.rglob("*.json*")):
        if "schema" in path.parts[-2] or "1.1" in path.name or path.name.endswith(".meta"):
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            try:
                document = json.load(handle)
            except ValueError:
                continue
        if not isinstance(document, dict):
            continue
        for entry in document.get("vulnerabilities") or []:
            cve = entry.get("cve") if isinstance(entry, dict) else None
            if isinstance(cve, dict) and isinstance(cve.get("id"), str) and cve["id"] not in seen:
                seen.add(cve["id"])
                yield cve


def corpus_lines(folder: Path) -> Iterator[bytes]:
    for path in sorted(folder.glob("cves-*.jsonl.gz")):
        with gzip.open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    yield line.rstrip(b"\n")


def measure(
    real_legacy: Iterable[dict[str, Any]],
    real_current: Iterable[dict[str, Any]],
    corpus: Iterable[bytes],
    year: int,
) -> list[Proportions]:
    legacy = Proportions("NVD 1.1 feed 2022 (real)")
    for record in real_legacy:
        legacy.add(record, len(orjson.dumps(record)))
    current = Proportions("NVD 2.0 samples (real)")
    for record in real_current:
        current.add(record, len(orjson.dumps(record)))
    whole = Proportions("corpus")
    one_year = Proportions(f"corpus, published {year}")
    prefix = f'"published":"{year}-'.encode()
    for line in corpus:
        record = orjson.loads(line)
        whole.add(record, len(line))
        if prefix in line:
            one_year.add(record, len(line))
    return [legacy, current, whole, one_year]


def table(sets: list[Proportions]) -> str:
    figures = [s.figures() for s in sets]
    reference = figures[0]
    head = ["measure", *(s.name for s in sets), "corpus / feed", f"{sets[3].name} / feed"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for key in reference:
        cells = [key, *(_format(f[key]) for f in figures)]
        for f in figures[2:4]:
            cells.append(f"{f[key] / reference[key]:.2f}" if reference[key] else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _format(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.corpus_proportions", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the real NVD records")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=corpus_dir(DEFAULT_OUT, DEFAULT_COUNT, DEFAULT_SEED),
        help="a corpus folder made by python -m bench.nvd_corpus",
    )
    parser.add_argument("--year", type=int, default=2022, help="the corpus's one-year slice")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not any(args.corpus.glob("cves-*.jsonl.gz")):
        raise SystemExit(f"no corpus in {args.corpus}: run python -m bench.nvd_corpus first")
    sets = measure(
        legacy_records(args.source),
        current_records(args.source),
        corpus_lines(args.corpus),
        args.year,
    )
    if args.json:
        print(json.dumps({s.name: s.figures() for s in sets}, indent=1))
    else:
        print(table(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
