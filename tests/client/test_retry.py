"""The pure retry policy, and the purity of the shared modules."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from assay.nvd.client import RetryPolicy
from assay.nvd.client._retry import RETRYABLE_STATUSES, parse_retry_after

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("soon", None),
        ("nan", None),
        ("inf", None),
        ("0", 0.0),
        ("5", 5.0),
        (" 2 ", 2.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),
        (format_datetime(NOW - timedelta(seconds=30), usegmt=True), 0.0),
    ],
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, now=NOW) == seconds


def test_back_off_doubles_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=5, backoff=0.5, max_backoff=3.0)
    assert [policy.delay(n) for n in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_after_wins_when_longer_and_is_capped() -> None:
    policy = RetryPolicy(backoff=1.0, max_retry_after=10.0)
    assert policy.delay(0, "4") == 4.0
    assert policy.delay(3, "4") == 8.0  # the back-off is longer
    assert policy.delay(0, "3600") == 10.0


def test_attempt_budget() -> None:
    policy = RetryPolicy(max_retries=2)
    assert [policy.can_retry(n) for n in range(4)] == [True, True, False, False]
    assert not RetryPolicy(max_retries=0).can_retry(0)


def test_which_statuses_are_retried() -> None:
    policy = RetryPolicy()
    assert {s for s in range(100, 600) if policy.should_retry_status(s)} == RETRYABLE_STATUSES
    assert {403, 429, 500, 502, 503, 504} == RETRYABLE_STATUSES


def test_invalid_policies() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(backoff=-1)


@pytest.mark.parametrize("module", ["_params.py", "_retry.py", "_models.py", "_errors.py"])
def test_shared_modules_do_no_io(module: str) -> None:
    import assay.nvd.client

    source = Path(assay.nvd.client.__file__).parent / module
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"httpx", "socket", "asyncio", "requests", "urllib3", "time"}


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("wait_time", -1),
        ("request_timeout", 0),
        ("max_retries", -1),
        ("max_retries", 1.5),
        ("base_url", "services.nvd.nist.gov"),
    ],
)
def test_constructor_rejects_bad_options(option: str, value: object) -> None:
    from assay.nvd.client import AsyncNvdClient, NvdClient

    for cls in (NvdClient, AsyncNvdClient):
        with pytest.raises(ValueError, match=option):
            cls(**{option: value})  # type: ignore[arg-type]
