"""What every record kind and every query share, whichever backend stores them."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, TypeVar


class Facts(Protocol):
    """What every record kind's facts have: the record bytes."""

    @property
    def record(self) -> bytes: ...


F = TypeVar("F", bound=Facts)


class Paged(Protocol):
    """What every query type has: a filter (the cache key) and a page window."""

    @property
    def filter_key(self) -> Hashable: ...

    @property
    def start_index(self) -> int: ...

    @property
    def results_per_page(self) -> int: ...
