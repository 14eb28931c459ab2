"""`assay serve --enrich`: CVE API answers completed from CVE 5 records (off by default).

The NVD API stays byte-faithful unless the server runs with `--enrich`. With it:

* a record NVD has not analysed (no `configurations`) whose CVE 5 record names products
  gains `assayConfigurations`: the CVE 5 `affected[]` entries in NVD's configuration
  shape, each node naming its `source` and `rule` (`assay.cve5.enrich`); the record is
  otherwise NVD's (re-encoded);
* a `cpeName` search also answers the records NVD has not analysed whose
  `assayConfigurations` the name hits (NVD's matching rules, `assay.nvd.cpe`), when they
  pass the query's other filters. They come after NVD's own matches, in NVD's order
  (published, then id), and count in `totalResults`, so pages stay stable.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from assay.cve5.enrich import configurations
from assay.cve5.index import cpe_key, vendor_product_key
from assay.cve5.record import read_record
from assay.nvd.cpe import ANY, CriteriaRange, InvalidCpe, name_matches
from assay.nvd.cve_query import CveQuery
from assay.nvd.storage import Page, Store

__all__ = ["FIELD", "Enricher"]

FIELD = "assayConfigurations"


class Enricher:
    """Completes CVE API pages of one store (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._tables: Any = store if hasattr(store, "cve5_records") else None

    def page(self, query: CveQuery, page: Page) -> Page:
        if self._tables is None:
            return page
        records = self._completed(page.records)
        extra = self._cpe_matches(query) if query.cpe_name is not None else []
        if not extra:
            return Page(page.total, records)
        wanted = query.results_per_page - len(records)
        first = max(0, query.start_index - page.total)
        if wanted > 0:
            records = [*records, *extra[first : first + wanted]]
        return Page(page.total + len(extra), records)

    def _configurations(self, cve_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for cve_id, raw in self._tables.cve5_records(cve_ids).items():
            made = configurations(read_record(raw, f"stored CVE 5 record {cve_id}"))
            if made:
                found[cve_id] = made
        return found

    def _completed(self, records: list[bytes]) -> list[bytes]:
        decoded = [orjson.loads(raw) for raw in records]
        bare = [str(r.get("id")) for r in decoded if not r.get("configurations")]
        made = self._configurations(bare) if bare else {}
        if not made:
            return records
        return [_with_made(raw, record, made) for raw, record in zip(records, decoded, strict=True)]

    def _cpe_matches(self, query: CveQuery) -> list[bytes]:
        name = query.cpe_name
        assert name is not None
        if ANY in (name.vendor, name.product):
            return []
        keys = [cpe_key(name.vendor, name.product), vendor_product_key(name.vendor, name.product)]
        candidates = sorted({cve_id for _, cve_id in self._tables.cve5_lookup(keys)})
        made = self._configurations(candidates)
        found: list[tuple[str, str, bytes]] = []
        for cve_id, configs in made.items():
            if not _names(name, configs):
                continue
            record = self._unanalysed(query, cve_id)
            if record is not None:
                enriched = orjson.dumps({**record, FIELD: configs})
                found.append((str(record.get("published")), cve_id, enriched))
        return [raw for _, _, raw in sorted(found)]

    def _unanalysed(self, query: CveQuery, cve_id: str) -> dict[str, Any] | None:
        """The NVD record of `cve_id` when the query's other filters keep it and NVD has
        not analysed it (NVD's own criteria decide for an analysed one)."""
        alone = replace(
            query, cpe_name=None, is_vulnerable=False, cve_id=cve_id, cve_ids=None,
            start_index=0, results_per_page=1,
        )  # fmt: skip
        page = self.store.search_cves(alone)
        if not page.records:
            return None  # not in NVD's data, or another filter leaves it out
        record: dict[str, Any] = orjson.loads(page.records[0])
        return None if record.get("configurations") else record


def _with_made(raw: bytes, record: dict[str, Any], made: dict[str, list[dict[str, Any]]]) -> bytes:
    """The record completed with its made-up configurations; as it came when it has its
    own or none were made for it."""
    extra = made.get(str(record.get("id")))
    if extra is None or record.get("configurations"):
        return raw
    return orjson.dumps({**record, FIELD: extra})


def _names(name: Any, configurations: list[dict[str, Any]]) -> bool:
    """Whether any criteria of the made-up configurations hits the CPE name."""
    return any(
        _hits(name, match)
        for configuration in configurations
        for node in configuration["nodes"]
        for match in node["cpeMatch"]
    )


def _hits(name: Any, match: dict[str, Any]) -> bool:
    try:
        return name_matches(name, CriteriaRange.from_json(match))
    except (InvalidCpe, ValueError):
        return False
