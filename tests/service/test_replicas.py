"""`assay serve --read-store`: real servers reading real PostgreSQL hot standbys.

A sync applied on the primary is watched through a server that reads the session's
standby (`standby`, tests/replication.py): every answer names the generation it was read
at, a walk that sends `If-Match` is never answered from two generations, and a walk
without it never goes back. On a cluster of their own (`initdb`, never the shared
primary): a replica that lags is not read, a stopped replica is left out and read again
once restarted, and with the primary stopped reads go on while writes answer 503 with
the reason.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tests.conftest import POSTGRES_URL, backends, make_store_url
from tests.replication import (
    Cluster,
    ReplicationUnavailable,
    free_port,
    start_standby,
    throwaway_primary,
    wait_replayed,
)
from tests.service.servers import serving

from assay.errors import WritesUnavailable
from assay.nvd.cve_record import cve_facts
from assay.nvd.ingest.importer import Importer
from assay.nvd.storage import Store, open_store

CVES = "/rest/json/cves/2.0"
PER_PAGE = 50
pytestmark = pytest.mark.skipif("postgres" not in backends(), reason="PostgreSQL not tested")


def bundled_records() -> list[dict[str, Any]]:
    import gzip
    from importlib import resources

    data = resources.files("assay.data").joinpath("nvd-cves.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def load_sample(url: str) -> None:
    from assay._cli.nvd import bundled_files

    store = open_store(url)
    try:
        report = Importer(store).import_files(
            [p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"]
        )
        assert report.ok, report.problems
    finally:
        store.close()


def revise(store: Store, records: list[dict[str, Any]], stamp: str) -> None:
    """Write `records` again, as revised at `stamp` (each batch is a new generation)."""
    revised = []
    for record in records:
        copy = json.loads(json.dumps(record))
        copy["lastModified"] = stamp
        copy["descriptions"] = [{"lang": "en", "value": f"revised at {stamp}"}]
        revised.append(cve_facts(copy))
    store.upsert_cves(revised)


def generation_of(answer: httpx.Response) -> int:
    return int(answer.headers["x-assay-generation"])


@dataclass
class Walk:
    """A walk over all CVEs: the generation of each page read and the ids, and when the
    server said to begin again, the generations it named (began, found)."""

    generations: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    restart: tuple[int, int] | None = None


def walk(base: str, *, if_match: bool) -> Walk:
    done = Walk()
    start = 0
    while True:
        headers = {"if-match": f'W/"g{done.generations[0]}"'} if if_match and done.ids else {}
        answer = httpx.get(
            f"{base}{CVES}",
            params={"resultsPerPage": PER_PAGE, "startIndex": start},
            headers=headers,
            timeout=30,
        )
        if answer.status_code == 412:
            message = answer.headers["message"]
            began, found = done.generations[0], generation_of(answer)
            assert f"generation {began}" in message, message
            assert f"generation {found}" in message, message
            done.restart = (began, found)
            return done
        assert answer.status_code == 200, answer.headers.get("message")
        done.generations.append(generation_of(answer))
        body = answer.json()
        done.ids += [item["cve"]["id"] for item in body["vulnerabilities"]]
        start += PER_PAGE
        if start >= body["totalResults"]:
            return done


# -- a sync seen through the session's standby --------------------------------------------


@pytest.fixture
def replicated_url(tmp_path: Path, standby: Cluster) -> Iterator[tuple[str, str]]:
    """A store on the shared primary with the bundled sample, and its URL on the standby."""
    for url in make_store_url("postgres", tmp_path):
        load_sample(url)
        wait_replayed(POSTGRES_URL, standby.url())
        yield url, standby.same_store(url)


def test_a_sync_on_the_primary_never_mixes_generations_in_a_walk(
    replicated_url: tuple[str, str], tmp_path: Path
) -> None:
    primary_url, replica_url = replicated_url
    records = bundled_records()
    primary = open_store(primary_url)
    done = threading.Event()

    def sync() -> None:  # 12 batches, each a new generation, as a sync writes them
        try:
            for round_ in range(12):
                batch = records[round_ * 20 : round_ * 20 + 40]
                revise(primary, batch, f"2031-01-01T00:00:{round_:02d}.000")
                time.sleep(0.25)  # (walks happen in between)
        finally:
            done.set()

    with serving(primary_url, "--read-store", replica_url, folder=tmp_path) as served:
        before = generation_of(httpx.get(f"{served.base}{CVES}?resultsPerPage=1"))
        assert before == primary.generation()
        writer = threading.Thread(target=sync)
        writer.start()
        complete: list[list[int]] = []
        restarts: list[tuple[int, int]] = []
        seen: list[int] = []
        while not done.is_set() or not complete or complete[-1][0] != primary.generation():
            cursor = walk(served.base, if_match=True)
            if cursor.restart is not None:
                restarts.append(cursor.restart)
            else:
                complete.append(cursor.generations)
            seen += walk(served.base, if_match=False).generations
        writer.join()
        # A walk that finished was read at one generation only; one that was told to
        # begin again was told so with a newer generation.
        assert all(len(set(generations)) == 1 for generations in complete), complete
        assert all(found > began for began, found in restarts), restarts
        # One server never answers from an older copy than an answer it gave.
        assert seen == sorted(seen), seen
        # After the sync, the walk reads what the primary holds, at its generation.
        final = walk(served.base, if_match=True)
        assert set(final.generations) == {primary.generation()}
        expected = [json.loads(r)["id"] for r in primary.search_cves(_everything()).records]
        assert final.ids == expected
        revised = httpx.get(f"{served.base}{CVES}?cveId={records[0]['id']}").json()
        assert revised["vulnerabilities"][0]["cve"]["lastModified"].startswith("2031-01-01")
        # A cursor from before the sync is told to begin again, naming both generations.
        stale = httpx.get(
            f"{served.base}{CVES}?resultsPerPage=5&startIndex=5",
            headers={"if-match": f'W/"g{before}"'},
        )
        assert stale.status_code == 412
        assert f"generation {before}" in stale.headers["message"]
        assert f"generation {primary.generation()}" in stale.headers["message"]
    primary.close()


def _everything() -> Any:
    from assay.nvd.cve_query import parse_cve_query

    return parse_cve_query([])


# -- failures, on a cluster of the tests' own ----------------------------------------------


class Trio:
    """A throwaway primary with two hot standbys, holding the bundled sample."""

    def __init__(self, primary: Cluster, replicas: list[Cluster]) -> None:
        self.primary = primary
        self.replicas = replicas
        self.url = primary.url() + "?schema=assay"

    def on(self, cluster: Cluster) -> str:
        return cluster.same_store(self.url)

    def serve_options(self) -> list[str]:
        return [option for r in self.replicas for option in ("--read-store", self.on(r))]

    def replayed(self) -> None:
        for replica in self.replicas:
            wait_replayed(self.primary.url(), replica.url())


@pytest.fixture(scope="module")
def trio() -> Iterator[Trio]:
    with contextlib.ExitStack() as stack:
        try:
            primary = stack.enter_context(throwaway_primary())
            replicas = []
            for _ in range(2):
                replica = start_standby(primary.url(), free_port())
                stack.callback(replica.remove)
                replicas.append(replica)
        except (ReplicationUnavailable, subprocess.CalledProcessError) as error:
            pytest.skip(f"no throwaway cluster with standbys here: {error}")
        trio = Trio(primary, replicas)
        load_sample(trio.url)
        trio.replayed()
        yield trio


def reads_on(cluster: Cluster) -> int:
    """Transactions the server has run in database `test` (its own count)."""
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as connection:
        row = connection.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = 'test'"
        ).fetchone()
    return int(row[0]) if row else 0


def read_until(base: str, condition: Any, what: str, seconds: float = 45.0) -> None:
    """Ask the server for pages (each must be answered) until `condition()` holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        answer = httpx.get(f"{base}{CVES}?resultsPerPage=3", timeout=30)
        assert answer.status_code == 200, answer.headers.get("message")
        assert time.monotonic() < deadline, f"not within {seconds:g} s: {what}"
        time.sleep(0.05)


def test_a_replica_that_lags_is_not_read(trio: Trio, tmp_path: Path) -> None:
    with serving(trio.url, *trio.serve_options(), folder=tmp_path) as served:
        first = generation_of(httpx.get(f"{served.base}{CVES}?resultsPerPage=1"))
        for replica in trio.replicas:
            with psycopg.connect(replica.url(), autocommit=True) as connection:
                connection.execute("SELECT pg_wal_replay_pause()")
        try:
            primary = open_store(trio.url)
            revise(primary, bundled_records()[:10], "2032-01-01T00:00:00.000")
            now = primary.generation()
            primary.close()
            assert now > first
            # Within a second the server knows the primary's generation: the replicas,
            # still at the old one, are left out and the primary answers.
            read_until(
                served.base,
                lambda: generation_of(httpx.get(f"{served.base}{CVES}?resultsPerPage=1")) == now,
                "answers at the primary's generation",
                seconds=10,
            )
            for _ in range(20):
                answer = httpx.get(f"{served.base}{CVES}?resultsPerPage=7&startIndex=7")
                assert generation_of(answer) == now
            walked = httpx.get(
                f"{served.base}{CVES}?resultsPerPage=7", headers={"if-match": f'W/"g{now}"'}
            )
            assert walked.status_code == 200
            assert generation_of(walked) == now
        finally:
            for replica in trio.replicas:
                with psycopg.connect(replica.url(), autocommit=True) as connection:
                    connection.execute("SELECT pg_wal_replay_resume()")
        trio.replayed()
        # Caught up, the replicas are read again.
        counts = [reads_on(replica) for replica in trio.replicas]
        read_until(
            served.base,
            lambda: all(reads_on(r) > c for r, c in zip(trio.replicas, counts, strict=True)),
            "both replicas read again once caught up",
        )


def test_a_stopped_replica_is_left_out_and_read_again_once_restarted(
    trio: Trio, tmp_path: Path
) -> None:
    stopped, other = trio.replicas
    with serving(trio.url, *trio.serve_options(), folder=tmp_path) as served:
        read_until(served.base, lambda: reads_on(stopped) > 0, "the first replica is read")
        stopped.stop("immediate")
        try:
            before = reads_on(other)
            for _ in range(30):  # every page answered, by the other copies
                answer = httpx.get(f"{served.base}{CVES}?resultsPerPage=3", timeout=30)
                assert answer.status_code == 200, answer.headers.get("message")
            read_until(served.base, lambda: reads_on(other) > before, "the other replica is read")
        finally:
            stopped.start()
        wait_replayed(trio.primary.url(), stopped.url())
        again = reads_on(stopped)
        read_until(served.base, lambda: reads_on(stopped) > again, "the restarted replica is read")
        # The watcher's own probe counts as a read on the replica, and it logs just after.
        deadline = time.monotonic() + 10
        while "answers again" not in served.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        log = served.log.read_text()
        assert "replica 1" in log, log
        assert "left out" in log, log
        assert "answers again" in log, log


def test_with_the_primary_stopped_reads_go_on_and_writes_answer_503(
    trio: Trio, tmp_path: Path
) -> None:
    options = trio.serve_options()
    with (
        serving(trio.url, *options, folder=tmp_path) as reader,
        serving(trio.url, *options, "--rate-limit", "5/30", folder=tmp_path) as counted,
    ):
        assert httpx.get(f"{counted.base}{CVES}?resultsPerPage=1").status_code == 200
        trio.primary.stop("immediate")
        try:
            known = bundled_records()[0]["id"]
            for path in (f"{CVES}?resultsPerPage=20", f"{CVES}?cveId={known}", "/readyz"):
                for _ in range(3):
                    answer = httpx.get(f"{reader.base}{path}", timeout=30)
                    assert answer.status_code == 200, (path, answer.headers.get("message"))
            # The rate limit's count is a write: refused, saying why.
            refused = httpx.get(f"{counted.base}{CVES}?resultsPerPage=1", timeout=30)
            assert refused.status_code == 503
            assert refused.headers["message"] == WritesUnavailable.reason
        finally:
            trio.primary.start()
        # The primary back, it is tried again (after its pause) and counts again.
        deadline = time.monotonic() + 45
        while httpx.get(f"{counted.base}{CVES}?resultsPerPage=1").status_code != 200:
            assert time.monotonic() < deadline, "the primary is not used again"
            time.sleep(0.5)
