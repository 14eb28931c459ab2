"""`assay nvd sync` from the command line: summary, exit codes, messages without tracebacks."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from assay._cli import main
from assay.nvd.storage import open_store
from assay.nvd.sync import NVD_RATE_WITH_KEY, NVD_RATE_WITHOUT_KEY, Mirror, Rate, SyncOptions
from assay.nvd.sync._pacing import SAFETY

from .harness import Fault, FaultProxy, Seen, assert_mirrored, quick_options

# The upstream is an assay: these tests read it by date windows, as NVD is read.
QUICK = ["--timeout", "2", "--backoff", "0.01", "--retries", "2", "--by-date"]


def _sync(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(["nvd", "sync", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


def test_a_sync_prints_a_summary_per_kind(
    proxy: FaultProxy, sample_store_url: str, mirror_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--store", mirror_url, "--upstream", proxy.base_url, "--kinds", "cves,history,cpematch"]
    code, err = _sync(capsys, *args, *QUICK)
    assert code == 0, err
    assert f"mirroring {proxy.base_url} (not paced)" in err
    assert "CVEs: first run: full load" in err
    for label in ("CVEs", "CVE changes", "match criteria"):
        assert label in err.split("sync summary", 1)[1]
    assert "request(s), 0 retries" in err
    assert_mirrored(sample_store_url, mirror_url, ("cves", "cvehistory", "cpematch"))
    code, err = _sync(capsys, *args, *QUICK)
    assert code == 0, err
    assert "CVEs: changes since " in err


def test_rejected_records_exit_1_and_are_named(
    proxy: FaultProxy, mirror_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def corrupt(body: bytes) -> bytes:
        return body.replace(b'"published":"', b'"published":"soon ', 1)

    def rule(seen: Seen) -> Fault | None:
        full_page = "startIndex" in seen.query and seen.query.get("resultsPerPage") != "1"
        if seen.path.endswith("/cves/2.0") and full_page and "lastModStartDate" not in seen.query:
            return Fault("corrupt", corrupt=corrupt)
        return None

    proxy.rules.append(rule)
    code, err = _sync(
        capsys, "--store", mirror_url, "--upstream", proxy.base_url, "--kinds", "cves", *QUICK
    )
    assert code == 1, err
    assert "rejected" in err
    assert "/cves/2.0 startIndex=0 at $.vulnerabilities[0].cve.published" in err
    assert "expected a timestamp" in err
    assert "Traceback" not in err


def test_an_unreachable_upstream_exits_2_with_the_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    upstream = f"http://127.0.0.1:{port}/rest/json"
    store = f"sqlite:///{tmp_path / 'mirror.db'}"
    code, err = _sync(capsys, "--store", store, "--upstream", upstream, *QUICK)
    assert code == 2
    assert f"{upstream}/cves/2.0" in err
    assert "ConnectError" in err
    assert "run again to resume" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--kinds", "cves,vulns"], "--kinds: expected some of cves, cvehistory, cpes, cpematch"),
        (["--upstream", "ftp://nvd.example"], "--upstream: expected an http(s) URL"),
        (["--rate", "5"], "--rate: expected REQUESTS/SECONDS"),
        (["--since", "last week"], "--since: expected an ISO 8601 date or date-time"),
        (["--page-size", "0"], "--page-size: expected an integer >= 1, got 0"),
        (["--timeout", "0"], "--timeout: expected a positive number of seconds"),
    ],
)
def test_bad_arguments_exit_2_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, err = _sync(capsys, "--store", f"sqlite:///{tmp_path / 'm.db'}", *args)
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


def test_a_damaged_checkpoint_exits_2_naming_the_key(
    tmp_path: Path, proxy: FaultProxy, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    store = open_store(url)
    store.set_meta("sync.cves", '{"version": 99}')
    store.close()
    code, err = _sync(
        capsys, "--store", url, "--upstream", proxy.base_url, "--kinds", "cves", "--by-date"
    )
    assert code == 2
    assert "meta sync.cves.version: expected checkpoint version 1, found 99" in err


def test_a_second_sync_of_one_store_exits_2_and_changes_nothing(
    proxy: FaultProxy, mirror_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_store(mirror_url)
    try:
        with store.exclusive("sync"):  # a sync already running on this store
            args = ["--store", mirror_url, "--upstream", proxy.base_url, "--kinds", "cves"]
            code, err = _sync(capsys, *args, *QUICK)
        assert code == 2
        assert "is busy" in err
        assert "'sync' lock" in err
        assert "Traceback" not in err
        assert store.count_cves() == 0
        assert store.get_meta("sync.cves") is None
    finally:
        store.close()


def _parsed_options(*args: str) -> SyncOptions:
    from assay._cli import build_parser
    from assay._cli.nvd_sync import _options

    return _options(build_parser().parse_args(["nvd", "sync", *args]))


def test_pacing_follows_the_upstream_and_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NVD_API_KEY", raising=False)
    remote = "https://nvd.example/rest/json"
    assert _parsed_options().rate == NVD_RATE_WITHOUT_KEY
    assert _parsed_options("--upstream", remote).rate == NVD_RATE_WITHOUT_KEY
    assert _parsed_options("--upstream", remote, "--api-key", "k").rate == NVD_RATE_WITH_KEY
    assert _parsed_options("--upstream", "http://127.0.0.1:8000/rest/json").rate is None
    assert _parsed_options("--upstream", remote, "--no-pacing").rate is None
    assert _parsed_options("--upstream", remote, "--rate", "2/10").rate == Rate(2, 10.0)
    monkeypatch.setenv("NVD_API_KEY", "from-env")
    options = _parsed_options()
    assert options.api_key == "from-env"
    assert options.rate == NVD_RATE_WITH_KEY


def test_requests_are_paced_in_a_sliding_window(proxy: FaultProxy, tmp_path: Path) -> None:
    rate = Rate(4, 0.05)
    store = open_store(f"sqlite:///{tmp_path / 'mirror.db'}")
    try:
        options = quick_options(proxy.base_url, kinds=("cves",), page_size=80, rate=rate)
        report = Mirror(store, options).run()
    finally:
        store.close()
    arrivals = [seen.arrived for seen in proxy.seen]
    assert len(arrivals) > rate.requests
    span = rate.seconds + SAFETY
    for first, fifth in zip(arrivals, arrivals[rate.requests :], strict=False):
        assert fifth - first >= span - 0.02
    assert report.waited > 0
