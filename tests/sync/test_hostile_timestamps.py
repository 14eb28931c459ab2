"""Far-future timestamps from a hostile upstream or file: refused by name, never kept as a
checkpoint, never stored in place of a record; a checkpoint already past the clocks is
read again from the start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from assay._cli import main
from assay.nvd.ingest.clock import FUTURE_MARGIN
from assay.nvd.storage import open_store
from assay.nvd.sync import Checkpoint

from .harness import stored_records
from .hostile import Upstream, listing, nvd_time, page, real_cves

FAR = "9999-12-31T23:59:59.999"
BAD = (3, 50, 199)  # positions of the records with a far-future lastModified
QUICK = ["--kinds", "cves", "--by-date", "--timeout", "5", "--retries", "0", "--backoff", "0"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _stored(url: str) -> dict[str, dict[str, Any]]:
    store = open_store(url)
    try:
        return {key: orjson.loads(raw) for key, raw in stored_records(store, "cves").items()}
    finally:
        store.close()


def _checkpoint(url: str) -> Checkpoint:
    store = open_store(url)
    try:
        text = store.get_meta("sync.cves")
    finally:
        store.close()
    assert text is not None
    return Checkpoint.from_json(text, "sync.cves")


def test_a_far_future_answer_is_refused_by_name_and_never_becomes_the_checkpoint(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    records = real_cves()
    ids = [records[i]["id"] for i in BAD]
    for i in BAD:
        records[i]["lastModified"] = FAR
    state = {"records": records, "timestamp": FAR}
    script = listing(lambda: state["records"], timestamp=lambda: state["timestamp"])
    with Upstream(script) as upstream:
        before = datetime.now(UTC)
        code, out, err = _run(
            capsys, "nvd", "sync", "--store", store_url, "--upstream", upstream.base_url,
            *QUICK, "--json",
        )  # fmt: skip
        assert code == 1, err
        assert "Traceback" not in err
        report = orjson.loads(out)
        assert report["ok"] is False
        problems = "\n".join(report["problems"])
        for i, cve_id in zip(BAD, ids, strict=True):
            assert f"$.vulnerabilities[{i}].cve.lastModified" in problems
            assert cve_id in problems
        assert "$.timestamp" in problems  # the upstream's clock itself
        stored = _stored(store_url)
        assert len(stored) == 197
        assert not set(ids) & set(stored)
        assert all(record["lastModified"] != FAR for record in stored.values())
        checkpoint = _checkpoint(store_url)
        assert checkpoint.since <= datetime.now(UTC) + FUTURE_MARGIN
        assert checkpoint.since >= before - timedelta(minutes=1)

        # The upstream is repaired: the three records come with their real change time.
        fixed = real_cves()
        moment = datetime.now(UTC) - timedelta(minutes=1)
        for i in BAD:
            fixed[i]["lastModified"] = nvd_time(moment)
        state["records"], state["timestamp"] = fixed, nvd_time(datetime.now(UTC))
        code, out, err = _run(
            capsys, "nvd", "sync", "--store", store_url, "--upstream", upstream.base_url,
            *QUICK, "--json",
        )  # fmt: skip
        assert code == 0, err
        assert orjson.loads(out)["kinds"][0]["added"] == 3
        stored = _stored(store_url)
        assert len(stored) == 200
        for i, cve_id in zip(BAD, ids, strict=True):
            assert stored[cve_id] == fixed[i]


def test_a_checkpoint_past_the_clocks_is_read_again_from_the_start(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    records = real_cves()
    script = listing(lambda: records, timestamp=lambda: nvd_time(datetime.now(UTC)))
    with Upstream(script) as upstream:
        # What an earlier version kept after a far-future answer.
        damaged = Checkpoint(
            upstream=upstream.base_url,
            phase="incremental",
            since=datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        )
        store = open_store(store_url)
        store.set_meta("sync.cves", damaged.to_json())
        store.close()
        code, out, err = _run(
            capsys, "nvd", "sync", "--store", store_url, "--upstream", upstream.base_url,
            *QUICK, "--json",
        )  # fmt: skip
        assert code == 0, err
        assert "later than" in err
        assert orjson.loads(out)["kinds"][0]["fetched"] == 200
        assert len(_stored(store_url)) == 200
        assert _checkpoint(store_url).since <= datetime.now(UTC) + FUTURE_MARGIN


def test_a_window_past_the_clocks_gives_no_traceback(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    records = real_cves()[:10]
    script = listing(lambda: records, timestamp=lambda: nvd_time(datetime.now(UTC)))
    with Upstream(script) as upstream:
        start = datetime.now(UTC) - timedelta(days=1)
        damaged = Checkpoint(
            upstream=upstream.base_url,
            phase="incremental",
            since=start,
            window=(start, datetime(9999, 12, 31, tzinfo=UTC)),
            next_index=0,
        )
        store = open_store(store_url)
        store.set_meta("sync.cves", damaged.to_json())
        store.close()
        code, _out, err = _run(
            capsys, "nvd", "sync", "--store", store_url, "--upstream", upstream.base_url, *QUICK
        )
        assert code == 0, err
        assert "Traceback" not in err
        assert len(_stored(store_url)) == 10
        assert _checkpoint(store_url).since <= datetime.now(UTC) + FUTURE_MARGIN


def test_a_far_future_record_in_a_file_is_refused_and_the_others_imported(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = real_cves()
    records[7]["published"] = FAR
    records[8]["lastModified"] = "2999-01-01T00:00:00"
    path = tmp_path / "cves.json"
    path.write_bytes(page(records, start=0, total=len(records)))
    code, _out, err = _run(capsys, "nvd", "import", str(path), "--store", store_url)
    assert code == 1, err
    assert "Traceback" not in err
    assert f"$.vulnerabilities[7].cve.published: {records[7]['id']}" in err
    assert f"$.vulnerabilities[8].cve.lastModified: {records[8]['id']}" in err
    stored = _stored(store_url)
    assert len(stored) == 198
    assert records[7]["id"] not in stored
    assert records[8]["id"] not in stored
