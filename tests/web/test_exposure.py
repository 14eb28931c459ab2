"""What the server shows about itself: no store URL on public pages, no secret in any URL
it prints (the start-up line, errors, logs)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.conftest import backends, make_store_url

from assay._cli import main
from assay.nvd.storage import open_store
from assay.urls import redact_url
from assay.web.app import create_web_app
from assay.web.serving import startup_line
from assay.web.store_state import count_state

SECRET = "hunter2XYZ"


def test_every_secret_place_in_a_url_is_masked() -> None:
    assert redact_url("postgresql://u:s3cret@db:5433/x?schema=a") == (
        "postgresql://u:***@db:5433/x?schema=a"
    )
    assert redact_url("postgresql://u@db/x?password=s3cret&schema=a") == (
        "postgresql://u@db/x?password=***&schema=a"
    )
    assert redact_url("postgresql://db/x?sslpassword=a&sslmode=require") == (
        "postgresql://db/x?sslpassword=***&sslmode=require"
    )
    assert redact_url("https://nvd.example/api?apiKey=k1&x=1#f") == (
        "https://nvd.example/api?apiKey=***&x=1#f"
    )
    assert (
        redact_url("redis://:tok@[::1/0?access_token=t") == "redis://:***@[::1/0?access_token=***"
    )
    assert redact_url("host=db password='a b' user=u") == "host=db password=*** user=u"
    assert redact_url("sqlite:///tmp/a.db") == "sqlite:///tmp/a.db"


_TEXT = st.text(string.ascii_letters + string.digits + "%-._~!$'()*+,;:", min_size=4, max_size=20)


@given(
    password=_TEXT,
    option=st.sampled_from(["password", "sslpassword", "apiKey", "token", "client_secret"]),
    value=_TEXT,
)
def test_no_secret_survives_redaction(password: str, option: str, value: str) -> None:
    url = f"postgresql://user:{password}@db.example:5432/name?sslmode=x&{option}={value}&a=b"
    shown = redact_url(url)
    assert password not in shown
    assert f"={value}" not in shown
    assert shown.startswith("postgresql://user:***@db.example:5432/name?sslmode=x&")
    assert shown.endswith("&a=b")


@pytest.mark.parametrize("backend", backends())
def test_the_home_page_never_shows_the_store_url(backend: str, tmp_path: Path) -> None:
    for made in make_store_url(backend, tmp_path):
        url = made
        if backend == "postgres":
            url = made.replace("postgres@", f"postgres:{SECRET}@") + f"&password={SECRET}"
        store = open_store(url)
        try:
            with TestClient(create_web_app(store)) as client:
                home = client.get("/").text
                assert SECRET not in home
                assert str(tmp_path) not in home
                assert "127.0.0.1:5432" not in home
                assert "schema=" not in home
                assert "This mirror" in home
                line = startup_line("127.0.0.1", 8000, 1, count_state(store))
                assert SECRET not in line
                if backend == "postgres":
                    assert "password=***" in line
        finally:
            store.close()


def test_a_missing_store_error_masks_query_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'nope.db'}?token={SECRET}"
    with pytest.raises(SystemExit):
        main(["serve", "--store", url, "--port", "1"])
    assert SECRET not in capsys.readouterr().err
