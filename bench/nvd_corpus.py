"""A realistic full-size NVD CVE corpus for the benchmarks, generated from real records.

    python -m bench.nvd_corpus [--count 340000] [--seed 2] [--source ../shared/data/nvd]
                               [--out bench/corpus] [--feeds]

Every record is shaped like a real NVD API 2.0 CVE object. Descriptions, references,
weaknesses, CVSS metrics and CPE configurations (vendors, products, literal versions
and version ranges) are drawn from the real records in the source folder: the NVD 2.0
samples and the legacy NVD 1.1 feed of 2022, whose items are converted to the 2.0
shape. On top of them the generator lays the distributions of the real NVD:

* published dates 1999–2026, following NVD's yearly volumes (a few hundred a year at
  first, 40,000+ a year since 2024);
* the metrics of each era: CVSS v2 until mid-2022, v3.0 from 2016, v3.1 from 2019,
  CNA scores beside NVD's from 2021, v4.0 from 2024, none yet for the backlog;
* rejected records (~4 %), CISA KEV entries (~0.4 %), cveTags on a few records,
  Spanish translations, analysis status by age;
* a Linux kernel with ~15,000 CVEs, each with several version ranges (one per stable
  branch) and release-candidate literals, as the kernel CNA publishes them;
* NVD's match criteria proportions: templates are dealt in passes (epochs), each once
  per pass, and each epoch gives the long tail of products new names and the large
  products new versions, so that distinct criteria (each with its own matchCriteriaId,
  ~2,000 per 1,000 CVEs, each used ~4 times), vendors and products per year are those
  of the real feed (`python -m bench.corpus_proportions` compares them).

Deterministic: the same arguments give byte-identical files. Output: one JSON Lines
file per year (`cves-YYYY.jsonl.gz`) and, with `--feeds`, NVD 2.0 yearly feed files
(`nvdcve-2.0-YYYY.json.gz`), plus `manifest.json` with the parameters and the facts a
benchmark needs to build its queries (sample ids, the largest products, real ranges).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

GENERATOR_VERSION = 5
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data" / "nvd"
DEFAULT_OUT = REPO_ROOT / "bench" / "corpus"
DEFAULT_COUNT = 340_000
DEFAULT_SEED = 2
CORPUS_END = datetime(2026, 3, 31, 23, 59, tzinfo=UTC)

# CVEs published per year by NVD (rounded), scaled to the requested count.
YEAR_VOLUMES = {
    1999: 1600, 2000: 1250, 2001: 1700, 2002: 2400, 2003: 1550, 2004: 2700,
    2005: 4750, 2006: 6650, 2007: 6550, 2008: 5650, 2009: 5750, 2010: 4650,
    2011: 4150, 2012: 5300, 2013: 5200, 2014: 7950, 2015: 6500, 2016: 6450,
    2017: 14650, 2018: 16500, 2019: 17300, 2020: 18350, 2021: 20150, 2022: 25050,
    2023: 29050, 2024: 40000, 2025: 47000, 2026: 11000,
}  # fmt: skip
# Linux kernel CVEs per year (the kernel became a CNA in 2024), scaled alike.
KERNEL_VOLUMES = {
    **dict.fromkeys(range(1999, 2005), 60),
    **dict.fromkeys(range(2005, 2017), 120),
    2017: 450, 2018: 180, 2019: 300, 2020: 130, 2021: 160, 2022: 330, 2023: 270,
    2024: 5500, 2025: 5600, 2026: 900,
}  # fmt: skip

UNESCAPED_COLON = re.compile(r"(?<!\\):")
REJECTED_SHARE = 0.04
VENDOR_CLONES = 12  # a vendor seen in one template gets 12 clones, in 12 or more none
CONCENTRATED = 20  # a product seen in this many templates keeps its name in every epoch
RANGE_KEYS = (
    "versionStartIncluding", "versionStartExcluding", "versionEndIncluding", "versionEndExcluding",
)  # fmt: skip
KEV_SHARE = 0.004
DISPUTED_SHARE = 0.006
UNSUPPORTED_SHARE = 0.002
SPANISH_SHARE = 0.7
NVD = "nvd@nist.gov"
KERNEL_CNA = "416baaa9-dc9f-4396-8d5f-8c081fb06d67"
KEV_START = datetime(2021, 11, 3, tzinfo=UTC)
KEV_ACTION = (
    "Apply mitigations per vendor instructions or discontinue use of the product if "
    "mitigations are unavailable."
)
REJECT_TEXT = (
    "** REJECT ** DO NOT USE THIS CANDIDATE NUMBER. ConsultIDs: none. Reason: This candidate "
    "was withdrawn by its CNA. Further investigation showed that it was not a security issue. "
    "Notes: none."
)


@dataclass(frozen=True, slots=True)
class Template:
    """What one real record lends a generated one."""

    source: str
    description: str
    references: list[dict[str, Any]]
    weaknesses: list[dict[str, Any]]
    configurations: list[dict[str, Any]]
    v2: dict[str, Any] | None
    v3: dict[str, Any] | None
    v4: dict[str, Any] | None


@dataclass
class Pools:
    templates: list[Template]
    spanish: list[str]
    v2: list[dict[str, Any]]
    v3: list[dict[str, Any]]


@dataclass
class Stats:
    """What the generator saw, for the manifest."""

    per_year: Counter[int] = field(default_factory=Counter)
    products: Counter[str] = field(default_factory=Counter)
    rejected: int = 0
    kev: int = 0
    tagged: int = 0
    metric_keys: Counter[str] = field(default_factory=Counter)
    sample_ids: list[str] = field(default_factory=list)
    ranges: list[dict[str, Any]] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    bytes: int = 0


# -- real records ---------------------------------------------------------------------


def load_pools(source: Path) -> Pools:
    """Every usable real record under `source`, as templates (2.0 and converted 1.1)."""
    templates: list[Template] = []
    spanish: list[str] = []
    seen: set[str] = set()
    for path in sorted(source.rglob("*.json*")):
        if "schema" in path.parts[-2] or path.name.endswith(".meta"):
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as handle:
            try:
                document = json.load(handle)
            except ValueError:
                continue
        if isinstance(document, dict) and "CVE_Items" in document:
            for item in document["CVE_Items"]:
                template = _from_legacy(item)
                if template is not None and item["cve"]["CVE_data_meta"]["ID"] not in seen:
                    seen.add(item["cve"]["CVE_data_meta"]["ID"])
                    templates.append(template)
            continue
        for entry in (document.get("vulnerabilities") or []) if isinstance(document, dict) else []:
            cve = entry.get("cve") if isinstance(entry, dict) else None
            if not isinstance(cve, dict) or cve.get("id") in seen:
                continue
            seen.add(cve["id"])
            spanish.extend(d["value"] for d in cve.get("descriptions", []) if d["lang"] == "es")
            template = _from_current(cve)
            if template is not None:
                templates.append(template)
    if not templates:
        raise SystemExit(f"no NVD records found under {source}")
    v2 = [t.v2 for t in templates if t.v2 is not None]
    v3 = [t.v3 for t in templates if t.v3 is not None]
    return Pools(templates, spanish, v2, v3)


def _from_current(cve: dict[str, Any]) -> Template | None:
    english = [d["value"] for d in cve.get("descriptions", []) if d.get("lang") == "en"]
    if not english or english[0].startswith(("** REJECT", "Rejected reason")):
        return None
    metrics = cve.get("metrics") or {}
    v3 = (metrics.get("cvssMetricV31") or metrics.get("cvssMetricV30") or [None])[0]
    return Template(
        source=cve.get("sourceIdentifier", NVD),
        description=english[0],
        references=cve.get("references", []),
        weaknesses=cve.get("weaknesses", []),
        configurations=cve.get("configurations", []),
        v2=(metrics.get("cvssMetricV2") or [None])[0],
        v3=v3,
        v4=(metrics.get("cvssMetricV40") or [None])[0],
    )


def _from_legacy(item: dict[str, Any]) -> Template | None:
    """An NVD 1.1 feed item, converted to the pieces of a 2.0 record."""
    cve = item["cve"]
    english = [d["value"] for d in cve["description"]["description_data"] if d["lang"] == "en"]
    if not english or english[0].startswith("** REJECT"):
        return None
    assigner = cve["CVE_data_meta"].get("ASSIGNER", "cve@mitre.org")
    references = []
    for reference in cve["references"]["reference_data"]:
        converted: dict[str, Any] = {"url": reference["url"], "source": assigner}
        if reference.get("tags"):
            converted["tags"] = reference["tags"]
        references.append(converted)
    cwes = [
        d["value"]
        for problem in cve["problemtype"]["problemtype_data"]
        for d in problem["description"]
    ]
    weaknesses = []
    if cwes:
        weaknesses.append(
            {
                "source": NVD,
                "type": "Primary",
                "description": [{"lang": "en", "value": cwe} for cwe in cwes],
            }
        )
    impact = item.get("impact", {})
    v3 = v2 = None
    if "baseMetricV3" in impact:
        base = impact["baseMetricV3"]
        v3 = {
            "source": NVD,
            "type": "Primary",
            "cvssData": base["cvssV3"],
            "exploitabilityScore": base["exploitabilityScore"],
            "impactScore": base["impactScore"],
        }
    if "baseMetricV2" in impact:
        base = impact["baseMetricV2"]
        v2 = {"source": NVD, "type": "Primary", "cvssData": base["cvssV2"]}
        v2["baseSeverity"] = base["severity"]
        for key in (
            "exploitabilityScore", "impactScore", "acInsufInfo", "obtainAllPrivilege",
            "obtainUserPrivilege", "obtainOtherPrivilege", "userInteractionRequired",
        ):  # fmt: skip
            if key in base:
                v2[key] = base[key]
    configurations = [_legacy_configuration(node) for node in item["configurations"]["nodes"]]
    return Template(
        source=assigner,
        description=english[0],
        references=references,
        weaknesses=weaknesses,
        configurations=[c for c in configurations if c["nodes"]],
        v2=v2,
        v3=v3,
        v4=None,
    )


def _legacy_configuration(node: dict[str, Any]) -> dict[str, Any]:
    """A top-level 1.1 node is one 2.0 configuration; an AND of children keeps its operator."""
    children = node.get("children") or []
    if children:
        return {
            "operator": node.get("operator", "AND"),
            "nodes": [_legacy_node(child) for child in children if child.get("cpe_match")],
        }
    return {"nodes": [_legacy_node(node)] if node.get("cpe_match") else []}


def _legacy_node(node: dict[str, Any]) -> dict[str, Any]:
    matches = []
    for match in node["cpe_match"]:
        converted: dict[str, Any] = {
            "vulnerable": match["vulnerable"],
            "criteria": match["cpe23Uri"],
        }
        for key in (
            "versionStartIncluding", "versionStartExcluding",
            "versionEndIncluding", "versionEndExcluding",
        ):  # fmt: skip
            if key in match:
                converted[key] = match[key]
        converted["matchCriteriaId"] = _criteria_id(converted)
        matches.append(converted)
    return {"operator": node.get("operator", "OR"), "negate": False, "cpeMatch": matches}


def _criteria_id(match: dict[str, Any]) -> str:
    """A stable UUID-shaped id per distinct criteria and range, as NVD's match criteria."""
    text = "|".join(str(match.get(key, "")) for key in sorted(match) if key != "vulnerable")
    h = hashlib.md5(text.encode(), usedforsecurity=False).hexdigest().upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


# -- the generator --------------------------------------------------------------------


class Generator:
    def __init__(self, pools: Pools, count: int, seed: int) -> None:
        self.pools = pools
        self.count = count
        self.rng = random.Random(seed)
        self.stats = Stats()
        self.kernel = KernelCves(self.rng)
        self.general = [
            t
            for t in pools.templates
            if not any("linux_kernel" in m["criteria"] for m in _matches(t.configurations))
        ]
        # Each template is used ~20 times, which would give every long-tail product ~20x
        # its real number of CVEs. A vendor seen in few templates is therefore cloned
        # (`acme`, `acme_2`, ...), one clone drawn per record: small vendors keep a few
        # CVEs each, as in NVD, while the large ones (Microsoft, Google, Cisco, ...)
        # stay concentrated.
        templates_per_vendor: Counter[str] = Counter()
        for t in self.general:
            for vendor in {cpe_components(m["criteria"])[3] for m in _matches(t.configurations)}:
                templates_per_vendor[vendor] += 1
        self.clones = {
            vendor: max(1, round(VENDOR_CLONES / seen))
            for vendor, seen in templates_per_vendor.items()
        }
        templates_per_product: Counter[str] = Counter()
        for t in self.general:
            for product in {_product(m["criteria"]) for m in _matches(t.configurations)}:
                templates_per_product[product] += 1
        self.concentrated = {
            product for product, seen in templates_per_product.items() if seen >= CONCENTRATED
        }
        # Templates are dealt from a shuffled deck, each once per pass (an epoch), so that
        # within an epoch criteria are shared exactly as among the real records; each
        # epoch gives them new versions or products (see `_variant`).
        self.deck: list[int] = []
        self.epoch = -1
        self.epoch_vendors: dict[str, str] = {}

    def year_plan(self) -> list[tuple[int, int, int]]:
        """(year, records, of which kernel) with totals scaled to `count`."""
        total = sum(YEAR_VOLUMES.values())
        plan = []
        assigned = 0
        years = sorted(YEAR_VOLUMES)
        for year in years:
            n = (
                self.count - assigned
                if year == years[-1]
                else round(YEAR_VOLUMES[year] * self.count / total)
            )
            assigned += n
            kernel = min(n, round(KERNEL_VOLUMES.get(year, 0) * self.count / total))
            plan.append((year, n, kernel))
        return plan

    def records(self, year: int, n: int, kernel: int) -> Iterator[dict[str, Any]]:
        rng = self.rng
        kernel_slots = set(rng.sample(range(n), kernel))
        start = datetime(year, 1, 1, tzinfo=UTC)
        end = min(datetime(year + 1, 1, 1, tzinfo=UTC), CORPUS_END)
        span = (end - start).total_seconds()
        # Ids in publication order (near enough: the real ones are reserved in blocks).
        moments = sorted(start + timedelta(seconds=rng.random() * span) for _ in range(n))
        number = 0
        for index, published in enumerate(moments):
            number += 1 if rng.random() < 0.8 else rng.randint(2, 40)
            cve_id = f"CVE-{year}-{number:04d}"
            if index in kernel_slots:
                record = self.kernel.record(cve_id, published)
            else:
                record = self.general_record(cve_id, published)
            self.account(record)
            yield record

    def general_record(self, cve_id: str, published: datetime) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < REJECTED_SHARE:
            return self._rejected(cve_id, published)
        t = self._deal()
        year = published.year
        backlog = year >= 2024 and rng.random() < 0.3
        status = _status(rng, published, backlog)
        record: dict[str, Any] = {
            "id": cve_id,
            "sourceIdentifier": t.source,
            "published": _stamp(published),
            "lastModified": _stamp(_modified(rng, published)),
            "vulnStatus": status,
        }
        tags = _tags(rng, t.source)
        if tags:
            record["cveTags"] = tags
        if rng.random() < KEV_SHARE:
            record.update(_kev(rng, published, t.configurations))
        descriptions = [{"lang": "en", "value": t.description}]
        if (
            self.pools.spanish
            and (year >= 2015 or rng.random() < 0.3)
            and rng.random() < SPANISH_SHARE
        ):
            spanish = self.pools.spanish[rng.randrange(len(self.pools.spanish))]
            descriptions.append({"lang": "es", "value": spanish})
        record["descriptions"] = descriptions
        record["metrics"] = self._metrics(t, published, backlog)
        if t.weaknesses and not backlog:
            record["weaknesses"] = t.weaknesses
        if t.configurations and not backlog:
            record["configurations"] = self._variant(t.configurations)
        record["references"] = t.references
        return record

    def _deal(self) -> Template:
        if not self.deck:
            self.epoch += 1
            self.epoch_vendors = {}
            self.deck = list(range(len(self.general)))
            self.rng.shuffle(self.deck)
        return self.general[self.deck.pop()]

    def _variant(self, configurations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The configurations as this epoch has them.

        NVD gives every distinct criteria (a CPE with its version range) its own match
        criteria id; across its 28 years few are shared, since versions and products move
        on (~2,000 distinct criteria per 1,000 CVEs, each used ~4 times, as in one year's
        feed). So in each epoch after the first:

        * a small vendor is replaced by one of its clones (`acme`, `acme_2`, ...; the same
          clone for the whole epoch): small vendors keep a few CVEs each, as in NVD;
        * a product seen in fewer than `CONCENTRATED` real records becomes the epoch's
          own product (`widget_7`): the long tail of products is new each epoch;
        * a concentrated product (Windows, Android, Chrome, ...) keeps its name and its
          version-less criteria (`windows_10:-`, shared across the years as in NVD), while
          its literal versions and range bounds become the epoch's (`7.<version>`, which
          keeps their order).
        """
        epoch = self.epoch
        if epoch == 0:
            return configurations
        out = []
        for configuration in configurations:
            nodes = []
            for node in configuration["nodes"]:
                matches = [self._match_variant(match, epoch) for match in node["cpeMatch"]]
                nodes.append({**node, "cpeMatch": matches})
            out.append({**configuration, "nodes": nodes})
        return out

    def _match_variant(self, match: dict[str, Any], epoch: int) -> dict[str, Any]:
        parts = cpe_components(match["criteria"])
        vendor, product = parts[3], parts[4]
        variant = {key: value for key, value in match.items() if key != "matchCriteriaId"}
        clone = self.epoch_vendors.get(vendor)
        if clone is None:
            index = self.rng.randrange(self.clones.get(vendor, 1))
            clone = self.epoch_vendors[vendor] = vendor if index == 0 else f"{vendor}_{index + 1}"
        parts[3] = clone
        if f"{vendor}:{product}" not in self.concentrated:
            parts[4] = f"{product}_{epoch + 1}"
        else:
            if parts[5] not in ("*", "-"):
                parts[5] = f"{epoch}.{parts[5]}"
            for key in RANGE_KEYS:
                if key in variant:
                    variant[key] = f"{epoch}.{variant[key]}"
        variant["criteria"] = ":".join(parts)
        if variant["criteria"] == match["criteria"] and not any(k in match for k in RANGE_KEYS):
            return match  # a concentrated product's version-less criteria: shared
        variant["matchCriteriaId"] = _criteria_id(variant)
        return variant

    def _rejected(self, cve_id: str, published: datetime) -> dict[str, Any]:
        self.stats.rejected += 1
        return {
            "id": cve_id,
            "sourceIdentifier": "cve@mitre.org",
            "published": _stamp(published),
            "lastModified": _stamp(_modified(self.rng, published)),
            "vulnStatus": "Rejected",
            "descriptions": [{"lang": "en", "value": REJECT_TEXT}],
            "metrics": {},
            "references": [],
        }

    def _metrics(self, t: Template, published: datetime, backlog: bool) -> dict[str, Any]:
        """The CVSS entries a record of that age carries."""
        rng = self.rng
        year = published.year
        metrics: dict[str, Any] = {}
        v3 = t.v3 or (self.pools.v3[rng.randrange(len(self.pools.v3))] if year >= 2016 else None)
        v2 = t.v2 or self.pools.v2[rng.randrange(len(self.pools.v2))]
        cna = t.source not in (NVD, "cve@mitre.org")
        if year >= 2024 and (cna or backlog) and (t.v4 is not None or rng.random() < 0.3):
            metrics["cvssMetricV40"] = [t.v4 or _v4_from_v3(v3 or self.pools.v3[0], t.source)]
        if v3 is not None and (year >= 2016 or rng.random() < 0.15):
            entries = []
            if not backlog:
                entries.append({**v3, "source": NVD, "type": "Primary"})
            if year >= 2021 and cna and (backlog or rng.random() < 0.5):
                entries.append({**v3, "source": t.source, "type": "Secondary"})
            if entries:
                v30 = year < 2019 and rng.random() < 0.6
                key = "cvssMetricV30" if v30 else "cvssMetricV31"
                metrics[key] = [_as_v30(e) if v30 else _as_v31(e) for e in entries]
        if not backlog and published < datetime(2022, 7, 13, tzinfo=UTC):
            metrics["cvssMetricV2"] = [v2]
        return metrics

    def account(self, record: dict[str, Any]) -> None:
        stats = self.stats
        stats.per_year[int(record["published"][:4])] += 1
        if "cisaExploitAdd" in record:
            stats.kev += 1
        if "cveTags" in record:
            stats.tagged += 1
        for key in record["metrics"]:
            stats.metric_keys[key] += 1
        products = set()
        for match in _matches(record.get("configurations", ())):
            parts = cpe_components(match["criteria"])
            product = f"{parts[3]}:{parts[4]}"
            products.add(product)
            examples = stats.examples.setdefault(product, [])
            if len(examples) < 16 and match["vulnerable"] and self.rng.random() < 0.2:
                examples.append(match)
            if len(stats.ranges) < 4000 and self.rng.random() < 0.002 and match["vulnerable"]:
                if any(key.startswith("versionEnd") for key in match):
                    stats.ranges.append(match)
                elif parts[5] not in ("*", "-"):
                    stats.literals.append(match["criteria"])
        for product in products:
            stats.products[product] += 1
        if self.rng.random() < 0.03:
            stats.sample_ids.append(record["id"])


def cpe_components(criteria: str) -> list[str]:
    """A CPE 2.3 string split at its unescaped colons."""
    return UNESCAPED_COLON.split(criteria)


def _product(criteria: str) -> str:
    parts = cpe_components(criteria)
    return f"{parts[3]}:{parts[4]}"


def _matches(configurations: Any) -> Iterator[dict[str, Any]]:
    for configuration in configurations:
        for node in configuration["nodes"]:
            yield from node["cpeMatch"]


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _modified(rng: random.Random, published: datetime) -> datetime:
    room = (CORPUS_END - published).total_seconds()
    if room <= 0:
        return published
    # Most records are touched again within months; older ones often years later.
    share = rng.random() ** 2 if rng.random() < 0.7 else rng.random()
    return published + timedelta(seconds=room * share)


def _status(rng: random.Random, published: datetime, backlog: bool) -> str:
    if backlog:
        return rng.choice(
            ("Awaiting Analysis", "Awaiting Analysis", "Received", "Undergoing Analysis")
        )
    if published.year < 2023:
        return "Modified" if rng.random() < 0.55 else "Analyzed"
    return "Analyzed" if rng.random() < 0.8 else "Modified"


def _tags(rng: random.Random, source: str) -> list[dict[str, Any]]:
    draw = rng.random()
    if draw < DISPUTED_SHARE:
        return [{"sourceIdentifier": source, "tags": ["disputed"]}]
    if draw < DISPUTED_SHARE + UNSUPPORTED_SHARE:
        return [{"sourceIdentifier": source, "tags": ["unsupported-when-assigned"]}]
    return []


def _kev(rng: random.Random, published: datetime, configurations: Any) -> dict[str, Any]:
    added = max(published, KEV_START) + timedelta(days=rng.randint(0, 400))
    added = min(added, CORPUS_END)
    vendor, product = "Multiple", "Products"
    for match in _matches(configurations):
        parts = cpe_components(match["criteria"])
        vendor, product = parts[3].replace("_", " ").title(), parts[4].replace("_", " ").title()
        break
    return {
        "cisaExploitAdd": added.strftime("%Y-%m-%d"),
        "cisaActionDue": (added + timedelta(days=21)).strftime("%Y-%m-%d"),
        "cisaRequiredAction": KEV_ACTION,
        "cisaVulnerabilityName": f"{vendor} {product} Vulnerability",
    }


def _as_v30(entry: dict[str, Any]) -> dict[str, Any]:
    data = entry["cvssData"]
    if data.get("version") == "3.0":
        return entry
    vector = data["vectorString"].replace("CVSS:3.1/", "CVSS:3.0/")
    return {**entry, "cvssData": {**data, "version": "3.0", "vectorString": vector}}


def _as_v31(entry: dict[str, Any]) -> dict[str, Any]:
    data = entry["cvssData"]
    if data.get("version") == "3.1":
        return entry
    vector = data["vectorString"].replace("CVSS:3.0/", "CVSS:3.1/")
    return {**entry, "cvssData": {**data, "version": "3.1", "vectorString": vector}}


V4_NAMES = {"N": "NONE", "L": "LOW", "H": "HIGH", "P": "PHYSICAL", "A": "ADJACENT"}
V4_SUPPLEMENTAL = (
    "exploitMaturity", "confidentialityRequirement", "integrityRequirement",
    "availabilityRequirement", "modifiedAttackVector", "modifiedAttackComplexity",
    "modifiedAttackRequirements", "modifiedPrivilegesRequired", "modifiedUserInteraction",
    "modifiedVulnConfidentialityImpact", "modifiedVulnIntegrityImpact",
    "modifiedVulnAvailabilityImpact", "modifiedSubConfidentialityImpact",
    "modifiedSubIntegrityImpact", "modifiedSubAvailabilityImpact", "Safety", "Automatable",
    "Recovery", "valueDensity", "vulnerabilityResponseEffort", "providerUrgency",
)  # fmt: skip
V4_TAIL = "/E:X/CR:X/IR:X/AR:X/MAV:X/MAC:X/MAT:X/MPR:X/MUI:X/MVC:X/MVI:X/MVA:X/MSC:X/MSI:X/MSA:X/S:X/AU:X/R:X/V:X/RE:X/U:X"


def _v4_from_v3(v3: dict[str, Any], source: str) -> dict[str, Any]:
    """A CNA's CVSS v4.0 entry in NVD's shape, consistent with a v3 vector."""
    pairs = dict(p.split(":") for p in v3["cvssData"]["vectorString"].split("/")[1:])
    ui = "N" if pairs.get("UI") == "N" else "P"
    base = (
        f"CVSS:4.0/AV:{pairs.get('AV', 'N')}/AC:{pairs.get('AC', 'L')}/AT:N/PR:{pairs.get('PR', 'N')}"
        f"/UI:{ui}/VC:{pairs.get('C', 'H')}/VI:{pairs.get('I', 'H')}/VA:{pairs.get('A', 'H')}/SC:N/SI:N/SA:N"
    )
    score = v3["cvssData"].get("baseScore", 5.0)
    data: dict[str, Any] = {
        "version": "4.0",
        "vectorString": base + V4_TAIL,
        "baseScore": score,
        "baseSeverity": v3["cvssData"].get("baseSeverity", "MEDIUM"),
        "attackVector": {"N": "NETWORK", "A": "ADJACENT", "L": "LOCAL", "P": "PHYSICAL"}.get(
            pairs.get("AV", "N"), "NETWORK"
        ),
        "attackComplexity": V4_NAMES.get(pairs.get("AC", "L"), "LOW"),
        "attackRequirements": "NONE",
        "privilegesRequired": V4_NAMES.get(pairs.get("PR", "N"), "NONE"),
        "userInteraction": "NONE" if ui == "N" else "PASSIVE",
        "vulnConfidentialityImpact": V4_NAMES.get(pairs.get("C", "H"), "HIGH"),
        "vulnIntegrityImpact": V4_NAMES.get(pairs.get("I", "H"), "HIGH"),
        "vulnAvailabilityImpact": V4_NAMES.get(pairs.get("A", "H"), "HIGH"),
        "subConfidentialityImpact": "NONE",
        "subIntegrityImpact": "NONE",
        "subAvailabilityImpact": "NONE",
    }
    for key in V4_SUPPLEMENTAL:
        data[key] = "NOT_DEFINED"
    return {"source": source, "type": "Secondary", "cvssData": data}


# -- the Linux kernel -----------------------------------------------------------------

KERNEL_CRITERIA = "cpe:2.3:o:linux:linux_kernel:*:*:*:*:*:*:*:*"
# Stable branches (the long-term ones NVD ranges follow) and how far each got.
KERNEL_BRANCHES = (
    ("2.6.32", 71), ("3.2", 102), ("3.16", 85), ("4.4", 302), ("4.9", 337), ("4.14", 336),
    ("4.19", 325), ("5.4", 291), ("5.10", 238), ("5.15", 185), ("6.1", 140), ("6.6", 90),
    ("6.12", 40), ("6.15", 11), ("6.16", 12), ("6.17", 9), ("6.18", 4),
)  # fmt: skip
KERNEL_RELEASE_YEARS = (
    2009,
    2012,
    2014,
    2016,
    2016,
    2017,
    2018,
    2019,
    2020,
    2021,
    2022,
    2023,
    2024,
    2025,
    2025,
    2025,
    2025,
)
KERNEL_SUBSYSTEMS = (
    "net: sched", "drm/amd/display", "btrfs", "ext4", "mm", "bpf", "wifi: ath11k",
    "usb: gadget", "netfilter: nf_tables", "io_uring", "smb: client", "nfsd", "f2fs",
    "scsi: lpfc", "ALSA: hda", "media: uvcvideo", "tcp", "ipv6", "KVM: x86", "fs/ntfs3",
    "Bluetooth: hci_core", "drm/i915", "nvme", "HID: core", "crypto: qat", "RDMA/mlx5",
    "net/mlx5", "powerpc/pseries", "iommu/vt-d", "wifi: mac80211", "xfs", "ocfs2",
    "jfs", "gfs2", "tty: serial", "i2c: designware", "spi: cadence", "pinctrl: qcom",
    "thermal", "cpufreq", "net: hns3", "ice", "igb", "virtio_net", "vsock", "sctp",
)  # fmt: skip
KERNEL_FIXES = (
    "fix use-after-free in {f}", "fix NULL pointer dereference in {f}",
    "fix out-of-bounds read in {f}", "fix memory leak in {f}", "fix possible deadlock in {f}",
    "validate the length before use in {f}", "fix integer overflow in {f}",
    "don't leak the reference on the error path of {f}", "fix a race between {f} and teardown",
    "avoid a double free in {f}", "check the return value of {f}",
    "fix slab-out-of-bounds write in {f}", "add missing lock in {f}",
)  # fmt: skip
KERNEL_FUNCTIONS = (
    "probe", "remove", "xmit", "init", "release", "open", "ioctl", "read_iter", "poll",
    "rcv", "setup", "free_resources", "get_stats", "parse_options", "map_sg", "flush",
)  # fmt: skip
KERNEL_BODIES = (
    "KASAN reported the problem when the device was removed while a request was in flight.",
    "syzbot found the issue; the object could be freed while a worker still referenced it.",
    "The error path released the buffer twice when the allocation of the queue failed.",
    "A crafted packet could make the parser read past the end of the header.",
    "The length supplied by user space was trusted without a check against the buffer size.",
    "Take the lock before walking the list so that a concurrent removal cannot race with it.",
)
KERNEL_CWES = (
    "CWE-416",
    "CWE-476",
    "CWE-125",
    "CWE-401",
    "CWE-787",
    "CWE-362",
    "NVD-CWE-noinfo",
    "CWE-667",
)


class KernelCves:
    """Linux kernel CVEs shaped as NVD records them: a range per stable branch."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.v31 = {
            "source": NVD,
            "type": "Primary",
            "cvssData": {
                "version": "3.1",
                "vectorString": "CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:N/I:N/A:H",
                "attackVector": "LOCAL",
                "attackComplexity": "LOW",
                "privilegesRequired": "LOW",
                "userInteraction": "NONE",
                "scope": "UNCHANGED",
                "confidentialityImpact": "NONE",
                "integrityImpact": "NONE",
                "availabilityImpact": "HIGH",
                "baseScore": 5.5,
                "baseSeverity": "MEDIUM",
            },
            "exploitabilityScore": 1.8,
            "impactScore": 3.6,
        }
        self.v31_high = {
            **self.v31,
            "cvssData": {
                **self.v31["cvssData"],
                "vectorString": "CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H",
                "confidentialityImpact": "HIGH",
                "integrityImpact": "HIGH",
                "baseScore": 7.8,
                "baseSeverity": "HIGH",
            },
            "impactScore": 5.9,
        }
        self.v2 = {
            "source": NVD,
            "type": "Primary",
            "cvssData": {
                "version": "2.0",
                "vectorString": "AV:L/AC:L/Au:N/C:N/I:N/A:C",
                "accessVector": "LOCAL",
                "accessComplexity": "LOW",
                "authentication": "NONE",
                "confidentialityImpact": "NONE",
                "integrityImpact": "NONE",
                "availabilityImpact": "COMPLETE",
                "baseScore": 4.9,
            },
            "baseSeverity": "MEDIUM",
            "exploitabilityScore": 3.9,
            "impactScore": 6.9,
            "acInsufInfo": False,
            "obtainAllPrivilege": False,
            "obtainUserPrivilege": False,
            "obtainOtherPrivilege": False,
            "userInteractionRequired": False,
        }

    def record(self, cve_id: str, published: datetime) -> dict[str, Any]:
        rng = self.rng
        cna = published.year >= 2024
        subsystem = rng.choice(KERNEL_SUBSYSTEMS)
        function = (
            subsystem.split(":")[0].split("/")[-1].replace(" ", "_")
            + "_"
            + rng.choice(KERNEL_FUNCTIONS)
        )
        title = f"{subsystem}: {rng.choice(KERNEL_FIXES).format(f=function)}"
        if cna:
            description = (
                "In the Linux kernel, the following vulnerability has been resolved:\n\n"
                f"{title}\n\n{rng.choice(KERNEL_BODIES)}"
            )
        else:
            description = (
                f"The {function} function in the Linux kernel before {self._fixed_in(published)} "
                f"has a flaw in {subsystem}: {rng.choice(KERNEL_BODIES)}"
            )
        source = KERNEL_CNA if cna else "cve@mitre.org"
        backlog = cna and rng.random() < 0.25
        metrics: dict[str, Any] = {}
        if not backlog:
            metrics["cvssMetricV31"] = [self.v31_high if rng.random() < 0.35 else self.v31]
            if published < datetime(2022, 7, 13, tzinfo=UTC):
                metrics["cvssMetricV2"] = [self.v2]
        record: dict[str, Any] = {
            "id": cve_id,
            "sourceIdentifier": source,
            "published": _stamp(published),
            "lastModified": _stamp(_modified(rng, published)),
            "vulnStatus": "Awaiting Analysis" if backlog else rng.choice(("Analyzed", "Modified")),
            "descriptions": [{"lang": "en", "value": description}],
            "metrics": metrics,
        }
        if not backlog:
            record["weaknesses"] = [
                {
                    "source": NVD,
                    "type": "Primary",
                    "description": [{"lang": "en", "value": rng.choice(KERNEL_CWES)}],
                }
            ]
            record["configurations"] = [
                {
                    "nodes": [
                        {"operator": "OR", "negate": False, "cpeMatch": self._matches(published)}
                    ]
                }
            ]
        record["references"] = [
            {"url": f"https://git.kernel.org/stable/c/{self._sha()}", "source": source}
            for _ in range(rng.randint(2, 8) if cna else rng.randint(1, 3))
        ]
        return record

    def _sha(self) -> str:
        return f"{self.rng.getrandbits(160):040x}"

    def _fixed_in(self, published: datetime) -> str:
        branch, last = self._branches(published)[-1]
        return f"{branch}.{self.rng.randint(1, last)}"

    def _branches(self, published: datetime) -> list[tuple[str, int]]:
        live = [
            (branch, last)
            for (branch, last), year in zip(KERNEL_BRANCHES, KERNEL_RELEASE_YEARS, strict=True)
            if year <= published.year
        ]
        return live or [KERNEL_BRANCHES[0]]

    def _matches(self, published: datetime) -> list[dict[str, Any]]:
        """One range per maintained branch the bug reached, then mainline release candidates."""
        rng = self.rng
        live = self._branches(published)
        if published.year < 2024:
            branch, last = live[-1]
            match = {"vulnerable": True, "criteria": KERNEL_CRITERIA}
            match["versionEndExcluding"] = f"{branch}.{rng.randint(1, last)}"
            return [{**match, "matchCriteriaId": _criteria_id(match)}]
        maintained = live[-rng.randint(3, min(8, len(live))) :]
        introduced_branch, _ = maintained[0]
        matches: list[dict[str, Any]] = []
        start = (
            f"{introduced_branch}.{rng.randint(0, 20)}"
            if rng.random() < 0.5
            else rng.choice(("2.6.12", "3.3", "4.1", "4.5"))
        )
        for index, (branch, last) in enumerate(maintained):
            fixed = f"{branch}.{rng.randint(max(1, last - 60), last)}"
            match: dict[str, Any] = {"vulnerable": True, "criteria": KERNEL_CRITERIA}
            if index == 0:
                match["versionStartIncluding"] = start
            else:
                match["versionStartIncluding"] = branch
            match["versionEndExcluding"] = fixed
            match["matchCriteriaId"] = _criteria_id(match)
            matches.append(match)
        mainline = maintained[-1][0]
        for rc in range(1, rng.randint(1, 7) + 1):
            criteria = f"cpe:2.3:o:linux:linux_kernel:{mainline}:rc{rc}:*:*:*:*:*:*"
            literal = {"vulnerable": True, "criteria": criteria}
            matches.append({**literal, "matchCriteriaId": _criteria_id(literal)})
        return matches


# -- output ---------------------------------------------------------------------------


def corpus_dir(out: Path, count: int, seed: int) -> Path:
    return out / f"nvd-{count}-seed{seed}-v{GENERATOR_VERSION}"


def generate(
    source: Path = DEFAULT_SOURCE,
    out: Path = DEFAULT_OUT,
    *,
    count: int = DEFAULT_COUNT,
    seed: int = DEFAULT_SEED,
    feeds: bool = False,
    reuse: bool = True,
    log: Any = print,
) -> Path:
    """Generate the corpus (or reuse a complete one made with the same parameters)."""
    folder = corpus_dir(out, count, seed)
    manifest_path = folder / "manifest.json"
    if reuse and manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        if not feeds or manifest.get("feeds"):
            log(f"reusing the corpus in {folder}")
            return folder
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    pools = load_pools(source)
    log(
        f"{len(pools.templates)} real records as templates ({len(pools.spanish)} Spanish descriptions)"
    )
    generator = Generator(pools, count, seed)
    files = []
    for year, n, kernel in generator.year_plan():
        lines = folder / f"cves-{year}.jsonl.gz"
        feed = folder / f"nvdcve-2.0-{year}.json.gz" if feeds else None
        _write_year(generator.records(year, n, kernel), lines, feed, n, generator.stats)
        files.append(lines.name)
    stats = generator.stats
    manifest = {
        "generator": GENERATOR_VERSION,
        "count": count,
        "seed": seed,
        "feeds": feeds,
        "files": files,
        "bytes": stats.bytes,
        "per_year": {str(k): v for k, v in sorted(stats.per_year.items())},
        "rejected": stats.rejected,
        "kev": stats.kev,
        "tagged": stats.tagged,
        "metrics": dict(stats.metric_keys),
        "top_products": stats.products.most_common(40),
        "examples": {
            product: stats.examples.get(product, [])
            for product, _ in stats.products.most_common(40)
        },
        "distinct_products": len(stats.products),
        "sample_ids": stats.sample_ids,
        "ranges": stats.ranges,
        "literals": stats.literals,
    }
    manifest_path.write_text(json.dumps(manifest, indent=1))
    log(
        f"generated {count} CVEs ({stats.bytes / 2**20:.0f} MiB of JSON) in "
        f"{time.perf_counter() - started:.1f} s into {folder}"
    )
    return folder


def _write_year(
    records: Iterator[dict[str, Any]], lines: Path, feed: Path | None, n: int, stats: Stats
) -> None:
    encoded = [orjson.dumps(record) for record in records]
    stats.bytes += sum(len(e) for e in encoded)
    with gzip.open(lines, "wb", compresslevel=1) as handle:
        handle.write(b"\n".join(encoded) + b"\n")
    if feed is not None:
        head = orjson.dumps(
            {
                "resultsPerPage": n,
                "startIndex": 0,
                "totalResults": n,
                "format": "NVD_CVE",
                "version": "2.0",
                "timestamp": _stamp(CORPUS_END),
            }
        )[:-1]
        with gzip.open(feed, "wb", compresslevel=1) as handle:
            handle.write(head + b',"vulnerabilities":[')
            handle.write(b",".join(b'{"cve":' + e + b"}" for e in encoded))
            handle.write(b"]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.nvd_corpus", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="number of CVEs")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the real NVD records")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--feeds", action="store_true", help="also write NVD 2.0 yearly feed files")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args(argv)
    generate(
        args.source,
        args.out,
        count=args.count,
        seed=args.seed,
        feeds=args.feeds,
        reuse=not args.force,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
