"""`read_ahead`: a source's records produced by a thread, in order, errors included."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import pytest

from assay.audit.read_ahead import BATCH, DEPTH, read_ahead


@pytest.mark.parametrize("count", [0, 1, BATCH, BATCH * DEPTH * 3 + 7])
def test_every_item_in_order(count: int) -> None:
    assert list(read_ahead(iter(range(count)))) == list(range(count))


def test_an_error_reaches_the_reader_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield from range(BATCH + 3)
        raise ValueError("the store went away")

    reader = read_ahead(items())
    assert list(itertools.islice(reader, BATCH + 3)) == list(range(BATCH + 3))
    with pytest.raises(ValueError, match="went away"):
        next(reader)


def test_a_reader_that_stops_early_stops_the_thread_and_closes_the_source() -> None:
    closed = threading.Event()
    producer: list[threading.Thread] = []

    def items() -> Iterator[int]:
        producer.append(threading.current_thread())
        try:
            yield from range(10**9)
        finally:
            closed.set()

    reader = read_ahead(items())
    assert next(reader) == 0
    reader.close()  # type: ignore[attr-defined]  # a generator
    assert closed.is_set()
    assert not producer[0].is_alive()
    assert producer[0] is not threading.current_thread()
