"""The mirror's pure policy: checkpoints, plans, windows, positions and pacing."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InputError
from assay.nvd.sync import (
    NVD_RATE_WITH_KEY,
    NVD_RATE_WITHOUT_KEY,
    Checkpoint,
    CheckpointError,
    Listing,
    Position,
    Rate,
    SlidingWindowLimiter,
    UpstreamInconsistent,
    advance,
    catch_up,
    default_rate,
    is_loopback,
    parse_kinds,
    parse_rate,
    plan,
)

NVD = "https://services.nvd.nist.gov/rest/json"
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


# -- checkpoints ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "checkpoint",
    [
        Checkpoint(upstream=NVD, phase="full", since=NOW, next_index=4000, total=250_000),
        Checkpoint(upstream=NVD, phase="incremental", since=NOW),
        Checkpoint(
            upstream=NVD,
            phase="incremental",
            since=NOW,
            window=(NOW - 2 * HOUR, NOW + HOUR),
            next_index=2,
            total=9,
        ),
    ],
    ids=["full", "incremental", "window"],
)
def test_checkpoints_round_trip(checkpoint: Checkpoint) -> None:
    assert Checkpoint.from_json(checkpoint.to_json(), "sync.cves") == checkpoint


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ("{", "sync.cves", "invalid JSON"),
        ("[]", "sync.cves", "expected a JSON object"),
        ('{"version": 2}', "sync.cves.version", "expected checkpoint version 1, found 2"),
        (
            '{"version": 1, "upstream": "u", "phase": "half"}',
            "sync.cves.phase",
            "expected 'full' or 'incremental', found 'half'",
        ),
        (
            '{"version": 1, "upstream": "u", "phase": "full", "since": "yesterday", '
            '"nextIndex": 0}',
            "sync.cves.since",
            "expected a UTC timestamp, found 'yesterday'",
        ),
        (
            '{"version": 1, "upstream": "u", "phase": "full", "since": "2024-01-01T00:00:00Z", '
            '"nextIndex": -1}',
            "sync.cves.nextIndex",
            "expected an integer >= 0, found -1",
        ),
    ],
)
def test_damaged_checkpoints_say_where_and_what(text: str, where: str, expected: str) -> None:
    with pytest.raises(CheckpointError) as caught:
        Checkpoint.from_json(text, "sync.cves")
    assert caught.value.where == where
    assert expected in caught.value.reason


# -- plans ---------------------------------------------------------------------------------


def test_a_first_run_is_a_full_load_started_now() -> None:
    decided = plan(None, upstream=NVD, now=NOW)
    assert decided.full == Listing(None, Position())
    assert decided.started == NOW


def test_a_full_load_resumes_with_its_start_time() -> None:
    earlier = NOW - 5 * HOUR
    checkpoint = Checkpoint(upstream=NVD, phase="full", since=earlier, next_index=6000, total=9)
    decided = plan(checkpoint, upstream=NVD + "/", now=NOW)
    assert decided.full == Listing(None, Position(6000, 9))
    assert decided.started == earlier


def test_another_upstream_means_a_new_full_load() -> None:
    checkpoint = Checkpoint(
        upstream="http://127.0.0.1:8000/rest/json", phase="incremental", since=NOW
    )
    decided = plan(checkpoint, upstream=NVD, now=NOW)
    assert decided.full == Listing(None, Position())
    assert "127.0.0.1:8000" in decided.reason


def test_an_incremental_run_reads_from_since_minus_overlap_to_now() -> None:
    checkpoint = Checkpoint(upstream=NVD, phase="incremental", since=NOW - 3 * HOUR)
    assert plan(checkpoint, upstream=NVD, now=NOW).full is None
    listings = catch_up(checkpoint, now=NOW, overlap=2 * HOUR)
    assert listings == [Listing((NOW - 5 * HOUR, NOW), Position())]


def test_a_window_under_way_is_finished_first_with_its_own_bounds() -> None:
    window = (NOW - 10 * HOUR, NOW - 4 * HOUR)
    checkpoint = Checkpoint(
        upstream=NVD,
        phase="incremental",
        since=NOW - 9 * HOUR,
        window=window,
        next_index=40,
        total=70,
    )
    listings = catch_up(checkpoint, now=NOW, overlap=2 * HOUR)
    assert listings == [
        Listing(window, Position(40, 70)),
        Listing((NOW - 4 * HOUR, NOW), Position()),
    ]


@given(
    gap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=2000)),
    overlap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=3)),
)
def test_windows_are_contiguous_and_at_most_120_days(gap: timedelta, overlap: timedelta) -> None:
    checkpoint = Checkpoint(upstream=NVD, phase="incremental", since=NOW - gap)
    listings = catch_up(checkpoint, now=NOW, overlap=overlap)
    windows = [listing.window for listing in listings]
    if gap + overlap == timedelta(0):
        assert windows == []
        return
    assert windows[0] is not None
    assert windows[0][0] == NOW - gap - overlap
    assert windows[-1] is not None
    assert windows[-1][1] == NOW
    for window, following in itertools.pairwise(windows):
        assert window is not None
        assert following is not None
        assert window[1] == following[0]
    for window in windows:
        assert window is not None
        assert timedelta(0) < window[1] - window[0] <= timedelta(days=120)


def test_an_upstream_clock_behind_the_checkpoint_reads_nothing_new() -> None:
    checkpoint = Checkpoint(upstream=NVD, phase="incremental", since=NOW + 5 * HOUR)
    assert catch_up(checkpoint, now=NOW, overlap=2 * HOUR) == []


# -- positions -----------------------------------------------------------------------------


def test_positions_step_by_records_received() -> None:
    position = advance(Position(), start_index=0, received=7, total=20)
    assert position == Position(7, 20)
    assert not position.done
    position = advance(position, start_index=7, received=13, total=20)
    assert position.done


def test_a_shrinking_listing_steps_back_by_the_shrinkage() -> None:
    position = advance(Position(30, 100), start_index=30, received=10, total=97)
    assert position == Position(27, 97)


def test_a_listing_that_shrank_past_the_position_steps_back_into_it() -> None:
    position = advance(Position(90, 100), start_index=90, received=0, total=80)
    assert position == Position(70, 80)


def test_an_empty_page_before_the_end_is_an_error() -> None:
    with pytest.raises(UpstreamInconsistent) as caught:
        advance(Position(10, 50), start_index=10, received=0, total=50)
    assert "startIndex=10" in str(caught.value)
    assert "totalResults=50" in str(caught.value)


def test_an_empty_listing_is_done() -> None:
    assert advance(Position(), start_index=0, received=0, total=0).done


@given(
    size=st.integers(1, 60),
    total=st.integers(0, 300),
    drops=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 299)), max_size=8),
)
def test_pages_with_records_leaving_never_skip_a_remaining_record(
    size: int, total: int, drops: list[tuple[int, int]]
) -> None:
    """Simulate a window listing losing records between pages: whatever remains is read."""
    listing = list(range(total))
    schedule = dict(drops)  # page number -> a position that leaves before that page
    read: set[int] = set()
    position = Position()
    page = 0
    while not position.done:
        if page in schedule and listing:
            del listing[schedule[page] % len(listing)]
        start = position.next_index
        records = listing[start : start + size]
        read.update(records)
        position = advance(position, start_index=start, received=len(records), total=len(listing))
        page += 1
        assert page < 10_000
    assert set(listing) <= read


# -- kinds, rates and pacing ---------------------------------------------------------------


def test_kinds_are_parsed_with_aliases_in_mirror_order() -> None:
    assert parse_kinds("cpematch, history,cve") == ("cves", "cvehistory", "cpematch")


def test_unknown_kinds_are_named() -> None:
    with pytest.raises(InputError) as caught:
        parse_kinds("cves,vulns")
    assert caught.value.where == "--kinds"
    assert "'vulns'" in caught.value.reason


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/rest/json", True),
        ("http://127.9.9.9/rest/json", True),
        ("http://[::1]:8000/rest/json", True),
        ("http://localhost:8000/rest/json", True),
        ("https://services.nvd.nist.gov/rest/json", False),
        ("http://10.0.0.5:8000/rest/json", False),
        ("http://mirror.example/rest/json", False),
    ],
)
def test_loopback_upstreams_are_recognised(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_nvd_limits_depend_on_the_key_and_loopback_is_unpaced() -> None:
    assert default_rate(NVD, None) == NVD_RATE_WITHOUT_KEY == Rate(5, 30.0)
    assert default_rate(NVD, "key") == NVD_RATE_WITH_KEY == Rate(50, 30.0)
    assert default_rate("http://127.0.0.1:8000/rest/json", None) is None


def test_rates_are_parsed() -> None:
    assert parse_rate("10/60") == Rate(10, 60.0)
    with pytest.raises(InputError) as caught:
        parse_rate("ten")
    assert caught.value.where == "--rate"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_the_limiter_allows_a_burst_then_waits_for_the_oldest_to_age_out() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(Rate(5, 30.0), safety=0.0, clock=clock.time, sleep=clock.sleep)
    starts = []
    for _ in range(12):
        limiter.acquire()
        starts.append(clock.now - 1000.0)
        clock.now += 1.0  # each request takes a second
    assert starts[:5] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert starts[5:7] == [30.0, 31.0]
    assert starts[10] == 60.0
    for index, start in enumerate(starts):  # never more than 5 in any 30 s
        window = [s for s in starts if start <= s < start + 30.0]
        assert len(window) <= 5, (index, window)
    assert limiter.waited == pytest.approx(sum(clock.sleeps))


def test_the_limiter_does_not_wait_when_requests_are_slow_enough() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(Rate(5, 30.0), clock=clock.time, sleep=clock.sleep)
    for _ in range(20):
        limiter.acquire()
        clock.now += 6.2
    assert clock.sleeps == []
