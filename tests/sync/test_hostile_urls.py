"""Malformed or secret-carrying `--upstream` / `--nvd-url` values: exit 2 with a message
naming the option, never a traceback, never the secret (`assay.urls.redact_url`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._cli import main
from assay.urls import redact_url

SECRET = "s3cr3t-Zq9"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("upstream", "expected"),
    [
        ("http://[::1", "a [ without its ] in the host"),
        ("http://127.0.0.1:99999/rest/json", "expected a port from 1 to 65535"),
        ("http://127.0.0.1:abc/rest/json", "expected a port from 1 to 65535"),
        (f"http://reader:{SECRET}?x@127.0.0.1:1/rest/json", "expected"),
        ("http://", "expected a host name"),
        ("http://a b/rest/json", "without spaces or control characters"),
        ("http://127.0.0.1:0/rest/json", "expected a port from 1 to 65535"),
        ("http://127.0.0.1:1/rest/json#top", "expected no fragment"),
        (f"http://127.0.0.1:1/rest/json?apiKey={SECRET}&x=1", "expected no query string"),
        (f"http://127.0.0.1:1/rest/json?token={SECRET}", "expected no query string"),
    ],
)
def test_a_malformed_upstream_exits_2_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: str, expected: str
) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    code, output = _run(capsys, "nvd", "sync", "--store", store, "--upstream", upstream)
    assert code == 2, output
    assert "Traceback" not in output
    assert "--upstream: " in output
    assert expected in output
    assert SECRET not in output
    code, output = _run(capsys, "scan", "--purl", "pkg:pypi/a@1", "--nvd-url", upstream)
    assert code == 2, output
    assert "Traceback" not in output
    assert expected in output
    assert SECRET not in output


def test_a_password_in_the_upstream_is_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    upstream = f"http://reader:{SECRET}@127.0.0.1:1/rest/json"
    args = ["--retries", "0", "--by-date", "--kinds", "cves", "--json"]
    code, output = _run(capsys, "nvd", "sync", "--store", store, "--upstream", upstream, *args)
    assert code == 2, output
    assert "http://reader:***@127.0.0.1:1/rest/json/cves/2.0" in output
    assert SECRET not in output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:pw@h:1/x?apiKey=K&a=1#f", "http://u:***@h:1/x?apiKey=***&a=1#f"),
        (
            "postgresql://u@h/db?password=p&sslpassword=q&sslmode=require",
            "postgresql://u@h/db?password=***&sslpassword=***&sslmode=require",
        ),
        (
            "https://h/x?access_token=t&key=k&secret=s",
            "https://h/x?access_token=***&key=***&secret=***",
        ),
        ("https://h/x?MyToken=t&page=2", "https://h/x?MyToken=***&page=2"),
        ("http://u:p@[::1/x?token=t", "http://u:***@[::1/x?token=***"),
        ("http://h/x", "http://h/x"),
        ("http://u:pa?ss@h/x?key=k", "http://***@h/x?key=***"),
        ("http://u:pa#ss@h", "http://***@h"),
        ("sqlite:///var/lib/assay/nvd.db", "sqlite:///var/lib/assay/nvd.db"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


_NAMES = st.sampled_from(
    ["password", "sslpassword", "apiKey", "token", "access_token", "key", "secret", "PASSWORD"]
)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)


@given(
    user=st.text("abcdefgh", min_size=1, max_size=5),
    password=_TEXT,
    name=_NAMES,
    value=_TEXT,
    host=st.sampled_from(["h", "127.0.0.1", "[::1]", "[::1", "h:99999", "h:x"]),
)
def test_redact_url_never_shows_a_password_or_secret_value(
    user: str, password: str, name: str, value: str, host: str
) -> None:
    secret_password = "P" + quote(password, safe="?#")  # ? and # left bare: ambiguous URLs
    secret_value = "V" + quote(value, safe="")
    url = f"https://{user}:{secret_password}@{host}/p?a=1&{name}={secret_value}&b=2"
    shown = redact_url(url)
    assert secret_password not in shown
    assert secret_value not in shown
