"""Redirects from a hostile upstream: followed within its origin only, so the API key
never reaches another host (httpx drops `Authorization` across hosts, not `apiKey`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest

from assay._cli import main

from .hostile import Answer, Request, Upstream, listing, nvd_time, real_cves

KEY = "k3y-7d1c0ffee"
QUICK = ["--kinds", "cves", "--by-date", "--timeout", "5", "--retries", "0", "--backoff", "0"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _honest() -> Upstream:
    records = real_cves()[:20]
    return Upstream(listing(lambda: records, timestamp=lambda: nvd_time(datetime.now(UTC))))


def _redirecting_to(root: str, status: int = 302) -> Upstream:
    def script(request: Request) -> Answer:
        query = urlencode(request.query)
        return Answer(status, {"Location": f"{root}{request.path}?{query}"})

    return Upstream(script)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_sync_refuses_a_redirect_to_another_port_and_sends_it_no_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int
) -> None:
    with _honest() as other, _redirecting_to(other.root, status) as upstream:
        code, output = _run(
            capsys, "nvd", "sync", "--store", f"sqlite:///{tmp_path / 'm.db'}",
            "--upstream", upstream.base_url, "--api-key", KEY, *QUICK,
        )  # fmt: skip
        assert code == 2, output
        assert "Traceback" not in output
        assert "redirected" in output
        assert f"another origin, '{other.root}/rest/json/cves/2.0" in output
        assert f"{upstream.base_url}/cves/2.0" in output
        assert KEY not in output
        assert "run again" not in output
        assert other.requests == []  # not followed at all
        assert upstream.requests[0].headers.get("apikey") == KEY


def test_sync_follows_a_redirect_within_the_origin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = real_cves()[:20]
    served = listing(lambda: records, timestamp=lambda: nvd_time(datetime.now(UTC)))

    def script(request: Request) -> Answer:
        if request.path.startswith("/moved/"):
            return served(request)
        query = urlencode(request.query)
        return Answer(308, {"Location": f"/moved{request.path}?{query}"})

    with Upstream(script) as upstream:
        code, output = _run(
            capsys, "nvd", "sync", "--store", f"sqlite:///{tmp_path / 'm.db'}",
            "--upstream", upstream.base_url, "--api-key", KEY, *QUICK,
        )  # fmt: skip
        assert code == 0, output
        moved = [r for r in upstream.requests if r.path.startswith("/moved/")]
        assert moved
        assert all(r.headers.get("apikey") == KEY for r in moved)


def test_a_redirect_loop_ends_with_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(request: Request) -> Answer:
        return Answer(302, {"Location": request.path})

    with Upstream(script) as upstream:
        code, output = _run(
            capsys, "nvd", "sync", "--store", f"sqlite:///{tmp_path / 'm.db'}",
            "--upstream", upstream.base_url, *QUICK,
        )  # fmt: skip
        assert code == 2, output
        assert "redirects" in output
        assert "Traceback" not in output
        assert len(upstream.requests) <= 6


def test_scan_against_an_api_sends_no_key_to_another_origin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _honest() as other, _redirecting_to(other.root) as upstream:
        code, output = _run(
            capsys, "scan", "--purl", "pkg:pypi/requests@2.19.0", "--format", "json",
            "--nvd-url", upstream.base_url, "--api-key", KEY,
        )  # fmt: skip
        assert code == 2, output
        assert "Traceback" not in output
        assert "another origin" in output
        assert KEY not in output
        assert other.requests == []
