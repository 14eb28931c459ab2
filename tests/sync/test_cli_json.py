"""`assay nvd sync --json`: the summary document docs/cli.md describes."""

from __future__ import annotations

import json

import pytest

from assay._cli import main

from .harness import FaultProxy

QUICK = ["--timeout", "2", "--backoff", "0.01", "--retries", "2"]
KIND_KEYS = {
    "kind", "plan", "fullLoad", "fetched", "added", "updated", "unchanged", "rejected",
    "pages", "windows",
}  # fmt: skip


def _sync(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["nvd", "sync", "--json", "--by-date", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sync_json_shape(
    proxy: FaultProxy, mirror_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--store", mirror_url, "--upstream", proxy.base_url, "--kinds", "cves,cpematch"]
    code, out, err = _sync(capsys, *args, *QUICK)
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {
        "ok", "error", "upstream", "upstreamTime", "paced", "requests", "retries",
        "elapsedSeconds", "waitedSeconds", "rejected", "kinds", "problems",
    }  # fmt: skip
    assert report["ok"] is True
    assert report["error"] is None
    assert report["upstream"] == proxy.base_url
    assert report["paced"] is None  # a loopback upstream
    assert [kind["kind"] for kind in report["kinds"]] == ["cves", "cpematch"]
    for kind in report["kinds"]:
        assert set(kind) == KIND_KEYS
        assert kind["fullLoad"] is True
        assert kind["added"] == kind["fetched"] > 0
    code, out, err = _sync(capsys, *args, *QUICK)
    assert code == 0, err
    assert all(kind["fullLoad"] is False for kind in json.loads(out)["kinds"])


def test_sync_json_reports_an_unusable_upstream(
    mirror_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _sync(
        capsys, "--store", mirror_url, "--upstream", "http://127.0.0.1:9/rest/json", *QUICK
    )
    assert code == 2
    report = json.loads(out)
    assert report["ok"] is False
    assert isinstance(report["error"], str)
    assert report["error"]
    assert "Traceback" not in err
