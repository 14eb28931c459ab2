"""Reading ahead: the items of an iterator produced by a background thread, a few ahead
of their consumer (an import reads and checks the next batches while one is written; a
sync fetches the next page while one is stored)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _End:
    """The producer is done: `error` is what ended it, if anything did."""

    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _Item(Generic[T]):
    value: T


def read_ahead(items: Iterator[T], depth: int, *, name: str, wait: bool = True) -> Iterator[T]:
    """`items`, produced by a thread called `name` at most `depth` items ahead.

    An exception in the producer is raised here, after the items before it. When the
    consumer stops early (an exception of its own), the producer is told to stop; with
    `wait`, the consumer waits for it (so that `items`, closed by the producer when it
    ends, holds no file open after this), without it the producer stops on its own (it
    may be in a network request that takes its time)."""
    buffer: queue.Queue[_Item[T] | _End] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    producer = threading.Thread(target=_produce, args=(items, buffer, stop), name=name, daemon=True)
    producer.start()
    try:
        while not isinstance(entry := buffer.get(), _End):
            yield entry.value
        if entry.error is not None:
            raise entry.error
    finally:
        stop.set()
        if wait:
            producer.join()


def _produce(
    items: Iterator[T], buffer: queue.Queue[_Item[T] | _End], stop: threading.Event
) -> None:
    try:
        for item in items:
            if not _put(buffer, _Item(item), stop):
                return
    except BaseException as error:  # handed to the consumer, which raises it
        _put(buffer, _End(error), stop)
        return
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()  # a generator left early still closes its files now
    _put(buffer, _End(), stop)


def _put(
    buffer: queue.Queue[_Item[T] | _End], entry: _Item[T] | _End, stop: threading.Event
) -> bool:
    """Hand `entry` to the consumer, unless it stops first: whether it was handed."""
    while not stop.is_set():
        try:
            buffer.put(entry, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False
