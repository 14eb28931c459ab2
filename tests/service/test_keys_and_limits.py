"""API keys and rate limits, against real `assay serve` processes on both stores."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from tests.service.servers import serving

from assay._cli import main

CVE = "/rest/json/cves/2.0?cveId=CVE-2024-23113"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def make_key(capsys: pytest.CaptureFixture[str], store_url: str, name: str) -> str:
    code, out, _ = cli(
        capsys, "api-keys", "create", name, "--store", store_url, "--json", "--create"
    )
    assert code == 0
    made = json.loads(out)
    assert made["name"] == name
    key: str = made["key"]
    return key


def test_keys_are_made_listed_and_revoked_and_only_their_digest_is_kept(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = make_key(capsys, store_url, "ci")
    assert len(key) >= 43  # 256 random bits, URL-safe
    assert make_key(capsys, store_url, "scanner") != key
    code, _, err = cli(capsys, "api-keys", "create", "ci", "--store", store_url)
    assert code == 2
    assert "exists already" in err
    code, out, _ = cli(capsys, "api-keys", "list", "--store", store_url, "--json")
    listed = json.loads(out)
    assert [entry["name"] for entry in listed] == ["ci", "scanner"]
    assert all(entry["lastUsed"] is None and entry["created"] for entry in listed)
    assert key not in out
    assert key not in _stored_text(store_url)
    code, out, _ = cli(capsys, "api-keys", "revoke", "ci", "--store", store_url)
    assert code == 0
    code, _, err = cli(capsys, "api-keys", "revoke", "ci", "--store", store_url)
    assert code == 2
    assert "no API key is named 'ci'" in err
    code, _, err = cli(capsys, "api-keys", "create", "two words", "--store", store_url)
    assert code == 2
    assert "NAME" in err


def test_the_dashboard_ignores_keys_as_nvds_website_does(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # cve-bin-tool sends its apiKey to the dashboard too; a 404 there made it crash.
    make_key(capsys, store_url, "team")
    dashboard = "/rest/public/dashboard/statistics?reporttype=countsbystatus"
    with serving(store_url, "--api-keys", "required", folder=tmp_path) as served:
        for headers in ({"apiKey": "not-a-key"}, {}):
            answer = httpx.get(served.base + dashboard, headers=headers)
            assert answer.status_code == 200, answer.headers.get("message")
            assert "vulnsByStatusCounts" in answer.json()
        refused = httpx.get(served.base + CVE, headers={"apiKey": "not-a-key"})
        assert (refused.status_code, refused.headers["message"]) == (404, "Invalid apiKey.")


def test_the_server_checks_keys_as_nvd_does(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = make_key(capsys, store_url, "team")
    with serving(store_url, "--api-keys", "optional", folder=tmp_path) as served:
        plain = httpx.get(served.base + CVE)
        assert (plain.status_code, plain.headers["apikey"]) == (200, "No")
        keyed = httpx.get(served.base + CVE, headers={"apiKey": key})
        assert (keyed.status_code, keyed.headers["apikey"]) == (200, "Yes")
        for wrong in (key[:-1] + ("A" if key[-1] != "A" else "B"), "x" * 5000, ""):
            bad = httpx.get(served.base + CVE, headers={"apiKey": wrong})
            assert bad.status_code == 404
            assert bad.headers["message"] == "Invalid apiKey."
            assert bad.headers["apikey"] == "No"
        # The documentation is not behind keys.
        assert httpx.get(served.base + "/openapi.json").status_code == 200
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            _code, out, _ = cli(capsys, "api-keys", "list", "--store", store_url, "--json")
            if json.loads(out)[0]["lastUsed"] is not None:
                break
            time.sleep(0.2)
        assert json.loads(out)[0]["lastUsed"] is not None
    with serving(store_url, "--api-keys", "required", folder=tmp_path) as served:
        refused = httpx.get(served.base + CVE)
        assert refused.status_code == 404
        assert "apiKey" in refused.headers["message"]
        assert httpx.get(served.base + CVE, headers={"apiKey": key}).status_code == 200
        cli(capsys, "api-keys", "revoke", "team", "--store", store_url)
        deadline = time.monotonic() + 15
        status = 200
        while status == 200 and time.monotonic() < deadline:
            status = httpx.get(served.base + CVE, headers={"apiKey": key}).status_code
            time.sleep(0.5)
        assert status == 404  # a revoked key is refused within seconds


def test_nvd_limits_are_counted_across_two_servers_on_one_store(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = make_key(capsys, store_url, "team")
    options = ("--rate-limit", "nvd", "--api-keys", "optional", "--workers", "2")
    with (
        serving(store_url, *options, folder=tmp_path) as first,
        serving(store_url, *options, folder=tmp_path) as second,
    ):
        statuses: Counter[int] = Counter()
        refusals = []
        for number in range(8):
            server = first if number % 2 else second
            answer = httpx.get(server.base + CVE)
            statuses[answer.status_code] += 1
            if answer.status_code == 403:
                refusals.append(answer)
        assert statuses == Counter({200: 5, 403: 3})
        assert "5 requests in a rolling 30 second window" in refusals[0].headers["message"]
        assert 1 <= int(refusals[0].headers["retry-after"]) <= 30
        # With a key: 50, on the same two servers.
        statuses.clear()
        for number in range(54):
            server = first if number % 3 else second
            answer = httpx.get(server.base + CVE, headers={"apiKey": key})
            statuses[answer.status_code] += 1
        assert statuses == Counter({200: 50, 403: 4})


def test_a_rolling_window_of_n_per_s(store_url: str, tmp_path: Path) -> None:
    with serving(store_url, "--create", "--rate-limit", "3/2", folder=tmp_path) as served:
        statuses = [httpx.get(served.base + CVE).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 403]
        time.sleep(2.3)
        assert httpx.get(served.base + CVE).status_code == 200
        # Only the API is limited.
        assert all(httpx.get(served.base + "/openapi.json").status_code == 200 for _ in range(5))


def test_the_count_can_live_in_redis(sample_store_url: str, tmp_path: Path) -> None:
    redis = pytest.importorskip("redis")
    # Each store kind counts in its own Redis database: the two run side by side.
    database = 1 if sample_store_url.startswith("sqlite") else 2
    client = redis.Redis(host="127.0.0.1", port=6379, db=database, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    for name in client.scan_iter("assay:rate:4/30|*"):
        client.delete(name)
    options = ("--rate-limit", "4/30", "--rate-limit-store", f"redis://127.0.0.1:6379/{database}")
    with (
        serving(sample_store_url, *options, folder=tmp_path) as first,
        serving(sample_store_url, *options, folder=tmp_path) as second,
    ):
        statuses = [httpx.get((first, second)[n % 2].base + CVE).status_code for n in range(6)]
    assert sorted(statuses) == [200] * 4 + [403] * 2
    assert list(client.scan_iter("assay:rate:4/30|*"))


def test_serve_refuses_bad_limits_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    for argv, option in (
        (["--rate-limit", "often"], "--rate-limit"),
        (["--rate-limit", "0/10"], "--rate-limit"),
        (["--rate-limit", "nvd", "--rate-limit-store", "http://x"], "--rate-limit-store"),
        (["--rate-limit-store", "redis://x"], "--rate-limit-store"),
        (["--cache-control", "a\nb"], "--cache-control"),
    ):
        code, _, err = cli(capsys, "serve", "--store", store, *argv)
        assert code == 2, argv
        assert option in err
        assert "Traceback" not in err


def _stored_text(store_url: str) -> str:
    if store_url.startswith("sqlite"):
        path = Path(store_url.removeprefix("sqlite://"))
        return b"".join(
            p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file()
        ).decode("latin-1")
    import psycopg

    from assay.nvd.storage.postgres import parse_url

    target = parse_url(store_url)
    with psycopg.connect(target.conninfo) as connection:
        connection.execute(f"SET search_path TO {target.schema}")
        rows = connection.execute("SELECT name, digest, created FROM api_key").fetchall()
    return repr(rows)


def test_required_keys_cover_the_pages_the_scan_api_and_the_osv_api(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--api-keys required` left the HTML pages and POST /api/scan open.
    key = make_key(capsys, store_url, "team")
    with serving(store_url, "--api-keys", "required", folder=tmp_path) as served:
        page = httpx.get(served.base + "/")
        assert page.status_code == 401
        assert 'action="/login"' in page.text
        scan = httpx.post(served.base + "/api/scan?purl=pkg:pypi/django@4.2.0")
        assert scan.status_code == 401
        assert "API key" in scan.json()["error"]
        osv = httpx.post(served.base + "/v1/query", json={"package": {"purl": "pkg:pypi/x@1"}})
        assert osv.status_code == 401
        assert httpx.get(served.base + "/healthz").status_code == 200
        keyed = httpx.post(
            served.base + "/api/scan?purl=pkg:pypi/django@4.2.0", headers={"apiKey": key}
        )
        assert keyed.status_code in (200, 503), keyed.text  # 503: this store holds no CVEs
        wrong = httpx.get(served.base + "/", cookies={"assay_api_key": "not-a-key"})
        assert wrong.status_code == 401
        # A browser signs in once; the cookie then opens the pages, and only this site's.
        with httpx.Client(base_url=served.base) as browser:
            refused = browser.post("/login", data={"key": "nope", "next": "/cpe"})
            assert refused.status_code == 401
            signed = browser.post("/login", data={"key": key, "next": "https://elsewhere.example/"})
            assert signed.status_code == 303
            assert signed.headers["location"] == "/"  # never another site
            cookie = signed.headers["set-cookie"]
            assert "HttpOnly" in cookie
            assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
            assert browser.get("/cpe").status_code == 200


def test_serve_refuses_read_stores_that_cannot_be_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sqlite_store = f"sqlite:///{tmp_path / 'store.db'}"
    primary = "postgresql://assay:secret@127.0.0.1:1/nvd"
    for store, replica, says in (
        (sqlite_store, "postgresql://u@127.0.0.1:1/nvd", "needs a PostgreSQL --store"),
        (primary, f"sqlite:///{tmp_path / 'copy.db'}", "expected a postgresql:// URL"),
    ):
        code, _, err = cli(capsys, "serve", "--store", store, "--read-store", replica)
        assert code == 2, (store, replica)
        assert f"--read-store: {says}" in err
        assert "secret" not in err
        assert "Traceback" not in err
