"""The store suite, run on every backend (tests/conftest.py `backends()`).

Write rules (counts, lastModified precedence, all-or-nothing batches, generation) on a
fresh store of each backend; and, on the real sample, every backend must answer a broad
table of queries with exactly the records, in exactly the order, of a SQLite store
loaded from the same files.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import (
    ASSETS,
    LoadedStores,
    backends,
    make_store_url,
    open_reading,
    sample_files,
)

from assay.errors import StoreError
from assay.nvd.cve_query import CveQuery, parse_cve_query
from assay.nvd.cve_record import CveFacts, cve_facts
from assay.nvd.storage import Store, open_store
from assay.nvd.storage import _cache as result_cache

# What a failed write raises: the driver's error on SQLite, StoreError on PostgreSQL.
WRITE_FAILURES = (StoreError, sqlite3.Error)


def sample_records() -> list[dict[str, Any]]:
    data = resources.files("assay.data").joinpath("nvd-cves.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw) as lines:
        return [json.loads(line) for line in lines if line.strip()]


SAMPLE = sample_records()


def facts(records: Sequence[dict[str, Any]]) -> list[CveFacts]:
    return [cve_facts(record) for record in records]


def revised(record: dict[str, Any], last_modified: str, text: str) -> dict[str, Any]:
    """The record as a later (or earlier) revision with another English description."""
    copy = json.loads(json.dumps(record))
    copy["lastModified"] = last_modified
    copy["descriptions"] = [{"lang": "en", "value": text}]
    return copy


def query(*pairs: tuple[str, str]) -> CveQuery:
    return parse_cve_query(pairs)


def ids(page_records: Sequence[bytes]) -> list[str]:
    return [orjson.loads(record)["id"] for record in page_records]


def everything(store: Store) -> list[bytes]:
    return store.search_cves(query()).records


def state(store: Store) -> tuple[object, ...]:
    """What a reader can observe: records, derived indexes (through filters), meta."""
    probes = [
        query(("keywordSearch", "overflow")),
        query(("keywordSearch", "REVISED")),
        query(("cweId", "NVD-CWE-Other")),
        query(("sourceIdentifier", "cve@mitre.org")),
        query(("cvssV2Severity", "HIGH")),
        query(("virtualMatchString", "cpe:2.3:o:sun:sunos")),
        query(("cpeName", "cpe:2.3:o:sun:sunos:5.5.1:*:*:*:*:*:*:*")),
    ]
    return (
        store.count_cves(),
        store.get_meta("generation"),
        everything(store),
        [ids(store.search_cves(probe).records) for probe in probes],
    )


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


# -- writes ----------------------------------------------------------------------------


def test_upsert_counts_added_updated_unchanged(store: Store) -> None:
    first = SAMPLE[:40]
    assert dataclasses.astuple(store.upsert_cves(facts(first))) == (40, 0, 0)
    assert store.count_cves() == 40
    assert dataclasses.astuple(store.upsert_cves(facts(first))) == (0, 0, 40)

    later = [revised(r, "2026-06-01T00:00:00.000", "REVISED text") for r in first[:5]]
    counts = store.upsert_cves(facts([*later, *first[5:], *SAMPLE[40:50]]))
    assert dataclasses.astuple(counts) == (10, 5, 35)
    assert store.count_cves() == 50
    found = store.search_cves(query(("keywordSearch", "REVISED")))
    assert sorted(ids(found.records)) == sorted(r["id"] for r in first[:5])


def test_an_older_last_modified_never_overwrites_a_newer_one(store: Store) -> None:
    record = SAMPLE[0]
    newer = revised(record, "2026-06-01T00:00:00.000", "the newer text")
    older = revised(record, "2001-01-01T00:00:00.000", "the older text")
    assert store.upsert_cves(facts([newer])).added == 1
    assert dataclasses.astuple(store.upsert_cves(facts([older]))) == (0, 0, 1)
    stored = store.search_cves(query(("cveId", record["id"]))).records
    assert stored == [cve_facts(newer).record]
    assert store.search_cves(query(("keywordSearch", "older"))).total == 0


def test_within_a_batch_the_latest_revision_wins(store: Store) -> None:
    record = SAMPLE[1]
    newer = revised(record, "2026-06-01T00:00:00.000", "the newer text")
    older = revised(record, "2001-01-01T00:00:00.000", "the older text")
    assert dataclasses.astuple(store.upsert_cves(facts([newer, older]))) == (1, 0, 1)
    assert everything(store) == [cve_facts(newer).record]


def test_same_last_modified_with_other_content_updates(store: Store) -> None:
    record = SAMPLE[2]
    store.upsert_cves(facts([record]))
    same_time = revised(record, record["lastModified"], "corrected text")
    assert dataclasses.astuple(store.upsert_cves(facts([same_time]))) == (0, 1, 0)
    assert everything(store) == [cve_facts(same_time).record]


def test_an_update_replaces_every_derived_row(store: Store) -> None:
    record = next(r for r in SAMPLE if r["id"] == "CVE-1999-0019")
    store.upsert_cves(facts([record]))
    assert store.search_cves(query(("keywordSearch", "rpc.statd"))).total == 1
    changed = revised(record, "2026-06-01T00:00:00.000", "something else entirely")
    changed["configurations"] = []
    changed["metrics"] = {}
    changed["weaknesses"] = []
    store.upsert_cves(facts([changed]))
    for probe in [
        query(("keywordSearch", "rpc.statd")),
        query(("cvssV2Severity", "MEDIUM")),
        query(("virtualMatchString", "cpe:2.3:o:sun")),
        query(("cweId", "NVD-CWE-Other")),
    ]:
        assert store.search_cves(probe).total == 0, probe
    assert store.search_cves(query(("keywordSearch", "entirely"))).total == 1


def _bad_cve_row(batch: list[CveFacts]) -> list[CveFacts]:
    return [*batch, batch[-1]._replace(cve_id="CVE-2099-0001", published=None)]  # type: ignore[arg-type]


def _bad_facet_row(batch: list[CveFacts]) -> list[CveFacts]:
    last = batch[-1]
    broken = last._replace(cve_id="CVE-2099-0002", facets=(("cwe", None),))  # type: ignore[arg-type]
    return [*batch, broken]


def _bad_criteria_row(batch: list[CveFacts]) -> list[CveFacts]:
    with_criteria = next(f for f in batch if f.criteria)
    # A criteria the store does not hold yet (its own identity), whose row cannot be written.
    criteria = with_criteria.criteria[0]._replace(
        components=(None,) * 11,  # type: ignore[arg-type]
        identity=b"\xff" * 16,
    )
    broken = with_criteria._replace(cve_id="CVE-2099-0003", criteria=(criteria,))
    return [*batch, broken]


class _FailingBatch(Sequence[CveFacts]):
    """A batch whose iteration fails part-way (a reader that breaks mid-stream)."""

    def __init__(self, items: list[CveFacts]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __iter__(self) -> Iterator[CveFacts]:
        yield from self._items[: len(self._items) // 2]
        raise OSError("the source broke off")


@pytest.mark.parametrize(
    "spoil",
    [_bad_cve_row, _bad_facet_row, _bad_criteria_row],
    ids=["cve-row", "facet-row", "criteria-row"],
)
def test_a_failing_batch_leaves_the_store_exactly_as_before(store: Store, spoil: Any) -> None:
    store.upsert_cves(facts(SAMPLE[:60]))
    before = state(store)
    # Updates of stored records, new records, then one row the database refuses.
    updates = [revised(r, "2026-06-01T00:00:00.000", "REVISED overflow") for r in SAMPLE[:20]]
    batch = spoil(facts([*updates, *SAMPLE[60:100]]))
    store.set_meta("sync.cves", "before")
    # (a criteria that cannot be named fails before the database sees it: TypeError)
    with pytest.raises((*WRITE_FAILURES, TypeError)):
        store.upsert_cves(batch, meta={"sync.cves": "after", "sync.new": "x"})
    assert state(store) == before
    # The checkpoint written with the batch is rolled back with it.
    assert (store.get_meta("sync.cves"), store.get_meta("sync.new")) == ("before", None)
    # and the store still takes the good part of it afterwards
    assert dataclasses.astuple(store.upsert_cves(batch[:-1])) == (40, 20, 0)


def test_a_batch_that_breaks_off_while_read_stores_nothing(store: Store) -> None:
    store.upsert_cves(facts(SAMPLE[:10]))
    before = state(store)
    with pytest.raises(OSError, match="broke off"):
        store.upsert_cves(_FailingBatch(facts(SAMPLE[5:30])))
    assert state(store) == before


def test_generation_moves_only_when_something_changed(store: Store) -> None:
    assert store.get_meta("generation") == "0"
    store.upsert_cves(facts(SAMPLE[:5]))
    assert store.get_meta("generation") == "1"
    store.upsert_cves(facts(SAMPLE[:5]))
    assert store.get_meta("generation") == "1"
    store.upsert_cves([])
    assert store.get_meta("generation") == "1"
    store.upsert_cves(facts([revised(SAMPLE[0], "2026-06-01T00:00:00.000", "new")]))
    assert store.get_meta("generation") == "2"
    with pytest.raises(WRITE_FAILURES):
        store.upsert_cves(_bad_cve_row(facts(SAMPLE[5:8])))
    assert store.get_meta("generation") == "2"


def test_meta_get_and_set(store: Store) -> None:
    assert store.get_meta("sync.cves") is None
    store.set_meta("sync.cves", "2024-01-01T00:00:00.000")
    assert store.get_meta("sync.cves") == "2024-01-01T00:00:00.000"
    store.set_meta("sync.cves", "2024-02-01T00:00:00.000 ✓")
    assert store.get_meta("sync.cves") == "2024-02-01T00:00:00.000 ✓"
    store.set_meta("other", "")
    assert store.get_meta("other") == ""
    assert store.get_meta("sync.cves") == "2024-02-01T00:00:00.000 ✓"


def test_meta_is_written_in_the_batch_transaction(store: Store) -> None:
    counts = store.upsert_cves(facts(SAMPLE[:5]), meta={"sync.cves": "page 1", "k": "v"})
    assert counts.added == 5
    assert (store.get_meta("sync.cves"), store.get_meta("k")) == ("page 1", "v")
    # Nothing new to store (an empty page, or records already held): the meta still moves.
    store.upsert_cves(facts(SAMPLE[:5]), meta={"sync.cves": "page 2"})
    assert store.get_meta("sync.cves") == "page 2"
    store.upsert_cves([], meta={"sync.cves": "page 3"})
    assert store.get_meta("sync.cves") == "page 3"
    assert store.get_meta("generation") == "1"  # meta alone is no change of the data


def test_a_stored_record_from_the_future_is_replaced_by_an_honest_copy(store: Store) -> None:
    # A store written before records from the future were refused may hold one dated
    # 9999: as the newest copy by the write rule, nothing could ever replace it.
    honest = SAMPLE[0]
    future = revised(honest, "9999-12-31T23:59:59.999", "FUTURE")
    assert store.upsert_cves(facts([future])).added == 1
    assert store.upsert_cves(facts([honest])).updated == 1
    [stored] = store.search_cves(query(("cveId", honest["id"]))).records
    assert orjson.loads(stored)["lastModified"] == honest["lastModified"]
    # An honest older copy still never replaces an honest newer one.
    newer = revised(honest, "2025-01-01T00:00:00.000", "REVISED")
    assert store.upsert_cves(facts([newer])).updated == 1
    assert store.upsert_cves(facts([honest])).unchanged == 1


def test_set_meta_inside_a_transaction_is_part_of_it(store: Store) -> None:
    # It committed the caller's transaction on SQLite, so the end of the block failed
    # ("no transaction is active") and what came before could not be rolled back.
    def interrupted() -> None:
        with store.transaction():
            store.upsert_cves(facts(SAMPLE[:3]))
            store.set_meta("k", "inside")
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        interrupted()
    assert store.get_meta("k") is None
    assert store.count_cves() == 0
    with store.transaction():
        store.upsert_cves(facts(SAMPLE[:3]))
        store.set_meta("k", "kept")
        store.upsert_cves(facts(SAMPLE[3:5]))
    assert (store.get_meta("k"), store.count_cves()) == ("kept", 5)


def test_reopening_keeps_everything(store_url: str) -> None:
    first = open_store(store_url)
    first.upsert_cves(facts(SAMPLE[:25]))
    first.set_meta("k", "v")
    contents = state(first)
    first.close()
    again = open_store(store_url)  # the schema already exists: creation is idempotent
    try:
        assert state(again) == contents
        assert again.get_meta("k") == "v"
    finally:
        again.close()


def test_concurrent_writers_of_the_same_records(store: Store) -> None:
    batch = facts(SAMPLE[:40])
    results: list[tuple[int, int, int]] = []
    errors: list[BaseException] = []

    def write() -> None:
        try:
            results.append(dataclasses.astuple(store.upsert_cves(batch)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sum(r[0] for r in results) == 40
    assert sum(r[2] for r in results) == 120
    assert store.count_cves() == 40


def test_cached_result_lists_follow_writes(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result_cache, "MIN_CACHED_RESULTS", 1)
    store.upsert_cves(facts(SAMPLE[:30]))
    listing = query(("resultsPerPage", "10"))
    first = store.search_cves(listing)
    assert first.total == 30
    assert store.search_cves(dataclasses.replace(listing, start_index=10)).total == 30
    store.upsert_cves(facts(SAMPLE[30:35]))  # a new generation: the cached list is stale
    assert store.search_cves(listing).total == 35
    page = store.search_cves(dataclasses.replace(listing, start_index=30))
    assert page.records == everything(store)[30:35]


def test_text_with_nul_and_unusual_characters_round_trips(store: Store) -> None:
    record = revised(SAMPLE[3], "2026-06-01T00:00:00.000", "Naïve CAFÉ\x00 über-Straße 1.2.3")
    record["sourceIdentifier"] = "odd\x00source"
    store.upsert_cves(facts([record]))
    assert everything(store) == [cve_facts(record).record]
    # FTS5's unicode61 folds case and strips diacritics (but keeps ß): so must PostgreSQL.
    for words in ["naive", "NAÏVE", "cafe", "uber straße", "straß", "1.2", "über-straße"]:
        assert store.search_cves(query(("keywordSearch", words))).total == 1, words
    for words in ["strasse", "1.3", "naive cafe uber 2.3 x"]:
        assert store.search_cves(query(("keywordSearch", words))).total == 0, words
    assert store.search_cves(query(("sourceIdentifier", "odd\x00source"))).total == 1


# -- answers on the real sample, compared with SQLite -----------------------------------


def _sample_files() -> list[Path]:
    from assay._cli.nvd import bundled_files

    return [*bundled_files(), *sorted((ASSETS / "nvd" / "cves").glob("*.json"))]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A SQLite store loaded with exactly what `sample_store_url` holds."""
    from assay.nvd.ingest.importer import Importer

    for url in make_store_url("sqlite", tmp_path_factory.mktemp("reference")):
        opened = open_store(url)
        Importer(opened).import_files(_sample_files())
        yield opened
        opened.close()


@pytest.fixture(scope="module", params=backends(replica=True))
def sample(request: pytest.FixtureRequest, loaded_stores: LoadedStores) -> Iterator[Store]:
    """The sample store of each backend, and of PostgreSQL read through a replica."""
    url = loaded_stores.url(request.param, "sample", sample_files)
    opened = open_reading(request, request.param, url)
    yield opened
    opened.close()


def replica_stride(request: pytest.FixtureRequest, fixture: str) -> int:
    """Through a replica, every REPLICA_STRIDE-th query of the exhaustive tables (the
    same SQL as on the primary, which runs them all; the suite's time stays bounded)."""
    return REPLICA_STRIDE if request.node.callspec.params.get(fixture) == "postgres-replica" else 1


REPLICA_STRIDE = 5


QUERIES: dict[str, list[tuple[str, str]]] = {
    "everything": [],
    "cpeName literal": [("cpeName", "cpe:2.3:o:sun:sunos:5.5.1:*:*:*:*:*:*:*")],
    "cpeName below an exclusive end": [
        ("cpeName", "cpe:2.3:a:apache:http_server:1.2.6:*:*:*:*:*:*:*")
    ],
    "cpeName at an exclusive end": [
        ("cpeName", "cpe:2.3:a:apache:http_server:1.3.0:*:*:*:*:*:*:*")
    ],
    "cpeName at an inclusive end": [
        ("cpeName", "cpe:2.3:a:sam_lantinga:splitvt:1.6.3:*:*:*:*:*:*:*")
    ],
    "cpeName past an inclusive end": [
        ("cpeName", "cpe:2.3:a:sam_lantinga:splitvt:1.6.4:*:*:*:*:*:*:*")
    ],
    "cpeName dotted version": [("cpeName", "cpe:2.3:o:digital:vms:5.3:*:*:*:*:*:*:*")],
    "cpeName no version": [("cpeName", "cpe:2.3:o:sun:sunos:-:*:*:*:*:*:*:*")],
    "cpeName isVulnerable": [
        ("cpeName", "cpe:2.3:o:cisco:rv340_firmware:1.0.03.24:*:*:*:*:*:*:*"),
        ("isVulnerable", ""),
    ],
    "cpeName hardware isVulnerable": [
        ("cpeName", "cpe:2.3:h:cisco:rv340:-:*:*:*:*:*:*:*"),
        ("isVulnerable", ""),
    ],
    "cpeName hardware": [("cpeName", "cpe:2.3:h:cisco:rv340:-:*:*:*:*:*:*:*")],
    "cpeName ffmpeg": [("cpeName", "cpe:2.3:a:ffmpeg:ffmpeg:2.2.10:*:*:*:*:*:*:*")],
    "virtualMatchString vendor": [("virtualMatchString", "cpe:2.3:o:sun")],
    "virtualMatchString product": [("virtualMatchString", "cpe:2.3:a:ffmpeg:ffmpeg")],
    "virtualMatchString version": [("virtualMatchString", "cpe:2.3:o:sun:sunos:5.5.1")],
    "virtualMatchString any part": [("virtualMatchString", "cpe:2.3:*:cisco")],
    "virtualMatchString start including": [
        ("virtualMatchString", "cpe:2.3:a:ffmpeg:ffmpeg"),
        ("versionStart", "4.0"),
        ("versionStartType", "including"),
    ],
    "virtualMatchString end excluding": [
        ("virtualMatchString", "cpe:2.3:a:ffmpeg:ffmpeg"),
        ("versionEnd", "2.0.1"),
        ("versionEndType", "excluding"),
    ],
    "virtualMatchString both bounds": [
        ("virtualMatchString", "cpe:2.3:a:apache:http_server"),
        ("versionStart", "1.2"),
        ("versionStartType", "excluding"),
        ("versionEnd", "1.3.0"),
        ("versionEndType", "including"),
    ],
    "virtualMatchString touching bound": [
        ("virtualMatchString", "cpe:2.3:a:sam_lantinga:splitvt"),
        ("versionStart", "1.6.3"),
        ("versionStartType", "including"),
    ],
    "keyword one word": [("keywordSearch", "sendmail")],
    "keyword prefix": [("keywordSearch", "overfl")],
    "keyword two words": [("keywordSearch", "remote attackers")],
    "keyword hyphenated": [("keywordSearch", "cross-site")],
    "keyword dotted": [("keywordSearch", "rpc.statd")],
    "keyword version": [("keywordSearch", "1.3")],
    "keyword upper case": [("keywordSearch", "BUFFER Overflow")],
    "keyword punctuation only": [("keywordSearch", "--")],
    "keyword missing": [("keywordSearch", "zzzzqqqq")],
    "exact phrase": [("keywordSearch", "denial of service"), ("keywordExactMatch", "")],
    "exact phrase order matters": [
        ("keywordSearch", "service of denial"),
        ("keywordExactMatch", ""),
    ],
    "exact single word is not a prefix": [("keywordSearch", "overfl"), ("keywordExactMatch", "")],
    "exact hyphenated": [("keywordSearch", "cross-site scripting"), ("keywordExactMatch", "")],
    "cvssV2Metrics": [("cvssV2Metrics", "AV:N/AC:L/Au:N")],
    "cvssV2Metrics full vector": [("cvssV2Metrics", "AV:N/AC:L/Au:N/C:P/I:P/A:P")],
    "cvssV3Metrics": [("cvssV3Metrics", "AV:N/AC:L")],
    "cvssV3Metrics with prefix": [
        ("cvssV3Metrics", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H")
    ],
    "cvssV4Metrics": [("cvssV4Metrics", "AV:N")],
    "cvssV2Severity": [("cvssV2Severity", "HIGH")],
    "cvssV3Severity": [("cvssV3Severity", "CRITICAL")],
    "cvssV3Severity medium": [("cvssV3Severity", "MEDIUM")],
    "cvssV4Severity": [("cvssV4Severity", "HIGH")],
    "cweId": [("cweId", "CWE-787")],
    "cweId other": [("cweId", "NVD-CWE-Other")],
    "cweId lower case": [("cweId", "cwe-79")],
    "hasKev": [("hasKev", "")],
    "kev window": [("kevStartDate", "2022-03-01T00:00:00"), ("kevEndDate", "2022-03-31T00:00:00")],
    "pub window": [("pubStartDate", "1996-10-01T00:00:00"), ("pubEndDate", "1997-01-28T00:00:00")],
    "pub window with offset": [
        ("pubStartDate", "1996-09-30T20:00:00-04:00"),
        ("pubEndDate", "1997-01-27T23:59:59.999Z"),
    ],
    "lastMod window": [
        ("lastModStartDate", "2008-09-01T00:00:00"),
        ("lastModEndDate", "2008-12-01T00:00:00"),
    ],
    "sourceIdentifier mitre": [("sourceIdentifier", "cve@mitre.org")],
    "sourceIdentifier cisco": [("sourceIdentifier", "ykramarz@cisco.com")],
    "sourceIdentifier nvd": [("sourceIdentifier", "nvd@nist.gov")],
    "noRejected": [("noRejected", "")],
    "noRejected with keyword": [("noRejected", ""), ("keywordSearch", "reject")],
    "cveTag": [("cveTag", "unsupported-when-assigned")],
    "hasCertAlerts": [("hasCertAlerts", "")],
    "hasCertNotes": [("hasCertNotes", "")],
    "hasOval": [("hasOval", "")],
    "cveIds": [("cveIds", "CVE-1999-0019,CVE-2022-20699,CVE-1999-0335,CVE-2000-9999")],
    "cveId": [("cveId", "CVE-1999-0019")],
    "cveId missing": [("cveId", "CVE-2000-9999")],
    "cveId past its page": [("cveId", "CVE-1999-0019"), ("startIndex", "1")],
    "combined": [
        ("virtualMatchString", "cpe:2.3:o:sun"),
        ("keywordSearch", "root"),
        ("cvssV2Severity", "HIGH"),
        ("noRejected", ""),
    ],
    "page in the middle": [("resultsPerPage", "7"), ("startIndex", "13")],
    "last page": [("resultsPerPage", "50"), ("startIndex", "250")],
    "page past the end": [("startIndex", "100000")],
    "empty page size": [("resultsPerPage", "0")],
    "filtered page": [
        ("sourceIdentifier", "cve@mitre.org"),
        ("resultsPerPage", "9"),
        ("startIndex", "40"),
    ],
}


def assert_same_answer(store: Store, reference: Store, wanted: CveQuery, label: str) -> int:
    got, expected = store.search_cves(wanted), reference.search_cves(wanted)
    assert ids(got.records) == ids(expected.records), label
    assert got == expected, label
    return expected.total


@pytest.mark.parametrize("name", list(QUERIES))
def test_same_answer_as_sqlite(sample: Store, reference: Store, name: str) -> None:
    assert_same_answer(sample, reference, parse_cve_query(QUERIES[name]), name)


EXPECTED_EMPTY = {
    "cpeName at an exclusive end",
    "cpeName past an inclusive end",
    "cpeName hardware isVulnerable",  # the hardware is only ever a running-on platform
    "keyword punctuation only",
    "keyword missing",
    "exact phrase order matters",
    "exact single word is not a prefix",
    "hasCertAlerts",  # no reference of the sample points to a CERT alert
    "cveId missing",
    "cveId past its page",
    "page past the end",
    "empty page size",
}


def test_the_query_table_exercises_real_matches(reference: Store) -> None:
    """Guard against a table of empty answers: only the deliberate ones find nothing."""
    empty = {
        name
        for name, pairs in QUERIES.items()
        if not reference.search_cves(parse_cve_query(pairs)).records
    }
    assert empty == EXPECTED_EMPTY


def test_virtual_match_string_with_both_bounds_finds_an_overlapping_range(sample: Store) -> None:
    # CVE-1999-0070 has apache http_server versions below 1.3.0 (versionEndExcluding),
    # which overlaps (1.2, 1.3.0]; no literal version of the sample lies in that range.
    found = sample.search_cves(parse_cve_query(QUERIES["virtualMatchString both bounds"]))
    assert ids(found.records) == ["CVE-1999-0070"]


def _criteria_queries() -> Iterator[tuple[str, CveQuery]]:
    """For every CPE match of the sample: cpeName at its version (five literal versions
    per product at most: the sample lists dozens for some) or at each of its bounds,
    virtualMatchString for its product, alone and bounded by each of them."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    literals: Counter[str] = Counter()
    for record in SAMPLE:
        for configuration in record.get("configurations", []):
            for node in configuration["nodes"]:
                for match in node["cpeMatch"]:
                    parts = match["criteria"].split(":")
                    product = ":".join(parts[:5])
                    candidates: list[list[tuple[str, str]]] = []
                    versions = [v for k, v in match.items() if k.startswith("version")]
                    if parts[5] not in ("*", "-") and literals[product] < 5:
                        literals[product] += 1
                        versions.append(parts[5])
                    for version in versions:
                        name = ":".join([*parts[:5], version, *parts[6:]])
                        candidates.append([("cpeName", name)])
                        if not match["vulnerable"]:  # where isVulnerable makes a difference
                            candidates.append([("cpeName", name), ("isVulnerable", "")])
                    for key, value in match.items():
                        if key.startswith("version"):
                            bound = "versionStart" if "Start" in key else "versionEnd"
                            kind = "including" if key.endswith("Including") else "excluding"
                            candidates.append(
                                [
                                    ("virtualMatchString", product),
                                    (bound, value),
                                    (f"{bound}Type", kind),
                                ]
                            )
                    candidates.append([("virtualMatchString", product)])
                    for pairs in candidates:
                        key_pairs = tuple(pairs)
                        if key_pairs not in seen:
                            seen.add(key_pairs)
                            yield repr(pairs), parse_cve_query(pairs)


def _keyword_queries() -> Iterator[tuple[str, CveQuery]]:
    """From each description: a word, a prefix, two words, and an exact three-word phrase."""
    for record in SAMPLE:
        english = [d["value"] for d in record["descriptions"] if d["lang"] == "en"]
        words = english[0].split() if english else []
        if len(words) < 4:
            continue
        longest = max(words, key=len)
        for pairs in (
            [("keywordSearch", words[1])],
            [("keywordSearch", longest[: max(3, len(longest) // 2)])],
            [("keywordSearch", f"{words[0]} {words[-1]}")],
            [("keywordSearch", " ".join(words[1:4])), ("keywordExactMatch", "")],
            [("keywordSearch", " ".join(words[-3:])), ("keywordExactMatch", "")],
        ):
            yield repr(pairs), parse_cve_query(pairs)


@pytest.mark.parametrize(
    "derived", [_criteria_queries, _keyword_queries], ids=["criteria", "keywords"]
)
def test_same_answer_as_sqlite_for_queries_derived_from_every_record(
    sample: Store, reference: Store, derived: Any, request: pytest.FixtureRequest
) -> None:
    stride = replica_stride(request, "sample")
    totals = [
        assert_same_answer(sample, reference, wanted, label)
        for label, wanted in list(derived())[::stride]
    ]
    assert len(totals) > 400 // stride
    assert sum(1 for total in totals if total) > 0.7 * len(totals)


PAGED = [
    [],
    [("sourceIdentifier", "cve@mitre.org")],
    [("keywordSearch", "remote")],
    [("virtualMatchString", "cpe:2.3:o")],
    [("cvssV2Severity", "MEDIUM"), ("noRejected", "")],
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.sampled_from(PAGED), size=st.integers(min_value=1, max_value=120))
def test_pages_of_any_size_partition_the_ordered_result_exactly_once(
    sample: Store, pairs: list[tuple[str, str]], size: int
) -> None:
    whole = sample.search_cves(parse_cve_query(pairs))
    collected: list[bytes] = []
    start = 0
    while True:
        page = sample.search_cves(
            parse_cve_query([*pairs, ("resultsPerPage", str(size)), ("startIndex", str(start))])
        )
        assert page.total == whole.total
        if not page.records:
            break
        assert len(page.records) == min(size, whole.total - start)
        collected.extend(page.records)
        start += size
    assert collected == whole.records
    assert len(set(ids(collected))) == whole.total


def test_order_is_published_then_id_bytewise(sample: Store) -> None:
    records = [orjson.loads(record) for record in everything(sample)]
    keys = [(r["published"].encode(), r["id"].encode()) for r in records]
    assert keys == sorted(keys)


# -- PostgreSQL connection errors -------------------------------------------------------

needs_postgres = pytest.mark.skipif(
    "postgres" not in backends(), reason="the PostgreSQL backend is not being tested"
)


@needs_postgres
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://postgres:s3cret@127.0.0.1:1/test", r"127\.0\.0\.1:1\b.*refused"),
        ("postgresql://postgres@127.0.0.1:5432/test?schema=bad-name", "schema 'bad-name'"),
        ("postgresql://postgres@127.0.0.1:5432/test?schema=a&schema=b", "more than once"),
        ("postgresql://postgres@127.0.0.1:notaport/test", "port 'notaport'"),
        ("postgresql://postgres@127.0.0.1:5432/test?bogus=1", "bogus"),
        ("postgresql://postgres@127.0.0.1:5432/assay_no_such_database", "assay_no_such_database"),
    ],
    ids=["unreachable", "schema-name", "two-schemas", "port", "option", "database"],
)
def test_bad_urls_and_unreachable_servers_raise_store_error(url: str, expected: str) -> None:
    with pytest.raises(StoreError, match=expected) as caught:
        open_store(url)
    message = str(caught.value)
    assert "s3cret" not in message
    assert "Traceback" not in message


@needs_postgres
def test_pooled_connections_a_restart_broke_are_replaced_once_idle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import psycopg

    from assay.nvd.storage import postgres

    monkeypatch.setattr(postgres, "CHECK_IDLE_AFTER", 0.05)
    name = f"assay-restart-{uuid.uuid4().hex[:8]}"
    for schema_url in make_store_url("postgres", tmp_path):
        url = f"{schema_url}&application_name={name}"
        store = open_store(url)
        try:
            store.upsert_cves(facts(SAMPLE[:3]))
            wanted = query(("cveId", SAMPLE[0]["id"]))
            assert len(store.search_cves(wanted).records) == 1
            # What a server restart does to the pool's idle connections (only this store's).
            with psycopg.connect(postgres.parse_url(url).conninfo, autocommit=True) as admin:
                ended = admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = %s AND pid <> pg_backend_pid()",
                    (name,),
                ).fetchone()
            assert ended is not None
            assert ended[0] >= 1
            time.sleep(0.1)  # idle past the threshold: checked, found broken, replaced
            for _ in range(3):
                assert len(store.search_cves(wanted).records) == 1
        finally:
            store.close()


# -- products, match criteria and changes on the real samples, compared with SQLite -----


@pytest.fixture(scope="module")
def products_reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A SQLite store loaded with exactly what `products_store_url` holds."""
    from tests.nvd.conftest import PRODUCT_FILES, bundled_cves

    from assay.nvd.ingest.importer import Importer

    for url in make_store_url("sqlite", tmp_path_factory.mktemp("products-reference")):
        opened = open_store(url)
        Importer(opened).import_files([bundled_cves(), *PRODUCT_FILES])
        yield opened
        opened.close()


@pytest.fixture(scope="module", params=backends(replica=True))
def products(request: pytest.FixtureRequest, loaded_stores: LoadedStores) -> Iterator[Store]:
    from tests.nvd.conftest import product_files

    url = loaded_stores.url(request.param, "products", product_files)
    opened = open_reading(request, request.param, url)
    yield opened
    opened.close()


def _product_records() -> list[dict[str, Any]]:
    from tests.nvd.conftest import CPES_FILE, response

    return [item["cpe"] for item in response(CPES_FILE)["products"]]


def _product_queries() -> Iterator[list[tuple[str, str]]]:
    """Keyword queries from real titles (English and Japanese), match strings, windows."""
    records = _product_records()
    for record in records[::25]:
        for title in (t["title"] for t in record.get("titles", [])):
            words = title.split()
            longest = max(words, key=len)
            yield [("keywordSearch", words[0])]
            yield [("keywordSearch", longest[: max(2, len(longest) // 2)])]
            yield [("keywordSearch", " ".join(words[-2:]))]
            yield [("keywordSearch", title), ("keywordExactMatch", "")]
        parts = record["cpeName"].split(":")
        yield [("cpeMatchString", ":".join(parts[:5]))]
        yield [("cpeMatchString", ":".join(parts[:4])), ("keywordSearch", parts[4][:3])]
    for month in ("2007-08", "2010-12", "2021-03"):
        yield [
            ("lastModStartDate", f"{month}-01T00:00:00"),
            ("lastModEndDate", f"{month}-28T00:00:00"),
        ]
    for criteria_id in (
        "A2572D17-1DE6-457B-99CC-64AFD54487EA",  # stored, with its expansion
        "D9D9B02E-C965-408B-999E-1F3DA09B62AA",
        "FE76D3D5-34AB-4914-81E5-5AC947241D01",  # only in a CVE configuration
        "00000000-0000-0000-0000-000000000000",  # nowhere
    ):
        yield [("matchCriteriaId", criteria_id)]
    yield [
        ("cpeMatchString", "cpe:2.3:o:microsoft:windows"),
        ("resultsPerPage", "5"),
        ("startIndex", "3"),
    ]


def test_products_same_answer_as_sqlite(
    products: Store, products_reference: Store, request: pytest.FixtureRequest
) -> None:
    from assay.nvd.cpe_query import parse_cpe_query

    stride = replica_stride(request, "products")
    totals = []
    for pairs in list(_product_queries())[::stride]:
        # The whole result is compared through its size; its first 50 records (in order)
        # byte for byte. The paging property below covers order across whole lists.
        wanted = parse_cpe_query([*pairs, ("resultsPerPage", "50")])
        got, expected = products.search_cpes(wanted), products_reference.search_cpes(wanted)
        assert got == expected, pairs
        totals.append(expected.total)
    assert len(totals) > 1000 // stride
    assert sum(1 for total in totals if total) > 0.9 * len(totals)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [("cveId", "CVE-2022-32223")],
        [("cveId", "CVE-1999-0070")],
        [("matchCriteriaId", "A2572D17-1DE6-457B-99CC-64AFD54487EA")],
        [("matchStringSearch", "cpe:2.3:a:nodejs:*:*:*:*:*:*:*:*:*")],
        [("matchStringSearch", "cpe:2.3:a:nodejs:node.js:*:*:*:*:lts:*:*:*")],
        [("lastModStartDate", "2022-07-01T00:00:00"), ("lastModEndDate", "2022-10-28T00:00:00")],
        [("resultsPerPage", "2"), ("startIndex", "3")],
    ],
    ids=repr,
)
def test_match_criteria_same_answer_as_sqlite(
    products: Store, products_reference: Store, pairs: list[tuple[str, str]]
) -> None:
    from assay.nvd.cpematch_query import parse_cpematch_query

    wanted = parse_cpematch_query(pairs)
    assert products.search_match_strings(wanted) == products_reference.search_match_strings(wanted)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [("cveId", "CVE-2019-1010218")],
        [("cveIds", "CVE-2019-1010218,CVE-2022-32223")],
        [("eventName", "cve  modified")],
        [("eventName", "Initial Analysis")],
        [("changeStartDate", "2019-07-01T00:00:00"), ("changeEndDate", "2019-10-09T12:52:24.770")],
        [("resultsPerPage", "1"), ("startIndex", "2")],
    ],
    ids=repr,
)
def test_changes_same_answer_as_sqlite(
    products: Store, products_reference: Store, pairs: list[tuple[str, str]]
) -> None:
    from assay.nvd.history_query import parse_history_query

    wanted = parse_history_query(pairs)
    assert products.search_changes(wanted) == products_reference.search_changes(wanted)


@pytest.mark.parametrize(
    "name",
    [
        "cpe:2.3:a:nodejs:node.js:16.15.1:*:*:*:lts:*:*:*",
        "cpe:2.3:a:nodejs:node.js:18.4.0:*:*:*:-:*:*:*",
        "cpe:2.3:a:nodejs:node.js:14.0.0:*:*:*:*:*:*:*",
        "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:x64:*",
        "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*",
    ],
)
@pytest.mark.parametrize("vulnerable", [False, True])
def test_cpe_name_through_stored_expansions_same_answer_as_sqlite(
    products: Store, products_reference: Store, name: str, vulnerable: bool
) -> None:
    pairs = [("cpeName", name), *([("isVulnerable", "")] if vulnerable else [])]
    wanted = parse_cve_query(pairs)
    assert ids(products.search_cves(wanted).records) == ids(
        products_reference.search_cves(wanted).records
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(min_value=150, max_value=2000), start=st.integers(0, 9999))
def test_product_pages_partition_the_ordered_result(products: Store, size: int, start: int) -> None:
    from assay.nvd.cpe_query import CpeQuery

    whole = products.search_cpes(CpeQuery()).records
    page = products.search_cpes(CpeQuery(start_index=start, results_per_page=size))
    assert page.total == len(whole) == 10000
    assert page.records == whole[start : start + size]
    names = [orjson.loads(record)["cpeNameId"] for record in whole]
    assert len(set(names)) == len(names)
