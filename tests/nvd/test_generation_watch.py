"""The PostgreSQL store's announced generation (`storage/_postgres_watch.py`): a `cveId`
look-up answered from memory (`kept_cve`) is never older than a write of this process,
follows a write of another process once announced, and is given only while the
listener can vouch for the generation."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest
from tests.conftest import backends, make_store_url
from tests.nvd.test_store import SAMPLE, facts, revised

from assay.nvd.storage._postgres_watch import CHANNEL, MAX_SILENCE, GenerationWatch
from assay.nvd.storage.postgres import PostgresStore

pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL not tested")
TARGET = SAMPLE[3]
T = TypeVar("T")


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    yield from make_store_url("postgres", tmp_path)


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(url)
    opened.upsert_cves(facts(SAMPLE[:10]))
    try:
        yield opened
    finally:
        opened.close()


def _eventually(read: Callable[[], T | None], seconds: float = 20.0) -> T:
    deadline = time.monotonic() + seconds
    while (found := read()) is None:
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.01)
    return found


def _description(record: bytes | None) -> str:
    import json

    assert record is not None
    return str(json.loads(record)["descriptions"][0]["value"])


def test_a_read_record_is_then_answered_from_memory(store: PostgresStore) -> None:
    generation, record = store.cve_with_generation(TARGET["id"])
    assert _description(record) == TARGET["descriptions"][0]["value"]
    assert _eventually(lambda: store.kept_cve(TARGET["id"])) == (generation, record)
    # An id the store lacks is kept as absent.
    assert store.cve_with_generation("CVE-1999-99999") == (generation, None)
    assert store.kept_cve("CVE-1999-99999") == (generation, None)


def test_nothing_older_than_a_write_of_this_process_is_answered(
    store: PostgresStore, url: str
) -> None:
    generation, _ = store.cve_with_generation(TARGET["id"])
    _eventually(lambda: store.kept_cve(TARGET["id"]))
    other = PostgresStore(url)  # (another store of the process: its writes count too)
    try:
        writes = ((store, "2026-03-01", "written here"), (other, "2026-04-01", "written beside"))
        for writer, day, text in writes:
            writer.upsert_cves(facts([revised(TARGET, f"{day}T00:00:00.000", text)]))
            kept = store.kept_cve(TARGET["id"])  # at once: no announcement awaited
            assert kept is None or _description(kept[1]) == text
            generation, record = store.cve_with_generation(TARGET["id"])
            assert _description(record) == text
            assert _eventually(lambda: store.kept_cve(TARGET["id"])) == (generation, record)
    finally:
        other.close()


def test_a_write_elsewhere_is_announced_with_the_schema(store: PostgresStore, url: str) -> None:
    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(url.split("?", maxsplit=1)[0], autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        with psycopg.connect(url.split("?", maxsplit=1)[0], autocommit=True) as writer:
            writer.execute(
                f"UPDATE {schema}.meta SET value = (CAST(value AS bigint) + 1)::text "
                "WHERE key = 'generation'"
            )
        notes = list(listener.notifies(timeout=10, stop_after=1))
    assert [note.payload for note in notes] == [schema]


def test_a_write_by_another_connection_moves_the_answer(store: PostgresStore, url: str) -> None:
    generation, _ = store.cve_with_generation(TARGET["id"])
    _eventually(lambda: store.kept_cve(TARGET["id"]))
    # A write that bypasses this process's stores (as another process's would).
    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(url.split("?", maxsplit=1)[0], autocommit=True) as writer:
        writer.execute(
            f"UPDATE {schema}.meta SET value = (CAST(value AS bigint) + 1)::text "
            "WHERE key = 'generation'"
        )
    # The kept record belongs to the old generation: no longer given.
    _eventually(lambda: True if store.kept_cve(TARGET["id"]) is None else None)
    assert store.cve_with_generation(TARGET["id"])[0] == generation + 1


def test_a_silent_listener_vouches_for_nothing() -> None:
    def unreachable() -> psycopg.Connection[tuple[object, ...]]:
        raise psycopg.OperationalError("no server here")

    watch = GenerationWatch(unreachable)
    try:
        assert watch.current() is None  # (starts the listener, which cannot connect)
        watch._known = (0, 7, time.monotonic())
        assert watch.current() == 7
        watch._known = (0, 7, time.monotonic() - MAX_SILENCE - 1)
        assert watch.current() is None
        watch._known = (0, 7, time.monotonic())
        watch.invalidate()
        assert watch.current() is None
    finally:
        watch.stop()


def test_a_standby_store_answers_nothing_from_memory(
    request: pytest.FixtureRequest, store: PostgresStore, url: str
) -> None:
    from tests.conftest import POSTGRES_URL
    from tests.replication import wait_replayed

    cluster = request.getfixturevalue("standby")
    wait_replayed(POSTGRES_URL, cluster.url())
    replica = PostgresStore(cluster.same_store(url))
    try:
        assert replica.cve_with_generation(TARGET["id"])[1] is not None
        time.sleep(0.2)
        assert replica.kept_cve(TARGET["id"]) is None
    finally:
        replica.close()
