"""The CVE 5, KEV and EPSS tables of both backends: write rules, generation, migration."""

from __future__ import annotations

import json
from dataclasses import replace

from assay.cve5.epss import EpssScore, EpssScores, read_scores
from assay.cve5.kev import KevCatalogue, read_catalogue
from assay.cve5.record import CveRecord, read_record
from assay.nvd.storage import open_store
from assay.nvd.storage._cve5_sql import cve5_store

from .conftest import EPSS_FILE, KEV_FILE


def _redated(record: CveRecord, when: str, title: str) -> CveRecord:
    document = json.loads(record.raw)
    document["cveMetadata"]["dateUpdated"] = when
    document["containers"]["cna"]["title"] = title
    return read_record(json.dumps(document).encode(), "redated.json")


def test_records_are_kept_and_replaced_only_by_newer_ones(
    store_url: str, records: list[CveRecord]
) -> None:
    store = cve5_store(open_store(store_url))
    try:
        start = int(store.get_meta("generation") or 0)
        counts = store.upsert_cve5(records, meta={"sync.cve5": "x"})
        assert (counts.added, counts.updated, counts.unchanged) == (len(records), 0, 0)
        assert store.get_meta("sync.cve5") == "x"
        after = int(store.get_meta("generation") or 0)
        assert after == start + 1
        again = store.upsert_cve5(records)
        assert (again.added, again.updated, again.unchanged) == (0, 0, len(records))
        assert int(store.get_meta("generation") or 0) == after
        wazuh = next(r for r in records if r.cve_id == "CVE-2025-24016")
        assert store.cve5_records(["CVE-2025-24016"]) == {"CVE-2025-24016": wazuh.raw}
        older = _redated(wazuh, "2025-01-01T00:00:00.000Z", "older")
        assert store.upsert_cve5([older]).unchanged == 1
        newer = _redated(wazuh, "2026-01-01T00:00:00.000Z", "newer")
        assert store.upsert_cve5([newer]).updated == 1
        assert store.cve5_records(["CVE-2025-24016"])["CVE-2025-24016"] == newer.raw
        assert int(store.get_meta("generation") or 0) == after + 1
        found = store.cve5_lookup(["vp:wazuh:wazuh", "purl:golang/gopkg.in/yaml.v2"])
        assert ("vp:wazuh:wazuh", "CVE-2025-24016") in found
        assert store.count_cve5() == len(records)
    finally:
        store.close()


def test_the_kev_catalogue_is_replaced_whole(store_url: str) -> None:
    catalogue = read_catalogue(KEV_FILE.read_bytes(), str(KEV_FILE))
    store = cve5_store(open_store(store_url))
    try:
        counts, removed = store.replace_kev(catalogue)
        assert (counts.added, counts.updated, counts.unchanged, removed) == (36, 0, 0, 0)
        generation = store.get_meta("generation")
        counts, removed = store.replace_kev(catalogue)
        assert (counts.added, counts.updated, counts.unchanged, removed) == (0, 0, 36, 0)
        assert store.get_meta("generation") == generation
        first, *rest = catalogue.entries
        changed = replace(rest[0], due_date="2030-01-01")
        counts, removed = store.replace_kev(KevCatalogue("next", None, (changed, *rest[1:])))
        assert (counts.added, counts.updated, counts.unchanged, removed) == (0, 1, 34, 1)
        entries = store.kev_entries([first.cve_id, changed.cve_id])
        assert list(entries) == [changed.cve_id]
        assert entries[changed.cve_id].due_date == "2030-01-01"
    finally:
        store.close()


def test_an_epss_score_is_replaced_by_a_later_day_only(store_url: str) -> None:
    scores = read_scores(EPSS_FILE.read_bytes(), str(EPSS_FILE))
    store = cve5_store(open_store(store_url))
    try:
        assert store.upsert_epss(scores).added == len(scores.scores)
        generation = store.get_meta("generation")
        assert store.upsert_epss(scores).unchanged == len(scores.scores)
        assert store.get_meta("generation") == generation
        one = scores.scores[0]
        earlier = EpssScores("v0", "2020-01-01", (EpssScore(one.cve_id, 0.5, 0.5),))
        assert store.upsert_epss(earlier).unchanged == 1
        later = EpssScores("v9", "2030-01-01", (EpssScore(one.cve_id, 0.5, 0.5),))
        assert store.upsert_epss(later).updated == 1
        assert store.epss_scores([one.cve_id])[one.cve_id] == (
            EpssScore(one.cve_id, 0.5, 0.5),
            "2030-01-01",
            "v9",
        )
    finally:
        store.close()


def test_a_store_without_the_tables_gains_them(store_url: str, records: list[CveRecord]) -> None:
    store = open_store(store_url)
    store.close()
    if store_url.startswith("sqlite"):
        import sqlite3

        from assay.nvd.storage.sqlite import path_from_url

        with sqlite3.connect(path_from_url(store_url)) as connection:
            for table in ("cve5", "cve5_key", "kev", "epss"):
                connection.execute(f"DROP TABLE {table}")
    else:
        import psycopg

        url, _, schema = store_url.partition("?schema=")
        with psycopg.connect(url, autocommit=True) as connection:
            for table in ("cve5", "cve5_key", "kev", "epss"):
                connection.execute(f"DROP TABLE {schema}.{table}")
    reopened = cve5_store(open_store(store_url))
    try:
        assert reopened.upsert_cve5(records[:3]).added == 3
    finally:
        reopened.close()
