"""The store's named lock (`Store.exclusive`), on every backend: one holder at a time,
across processes, released when the block ends or the holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from assay.errors import StoreBusy, StoreError
from assay.nvd.storage import Store, open_store


@pytest.fixture
def two_stores(store_url: str) -> Iterator[tuple[Store, Store]]:
    first, second = open_store(store_url), open_store(store_url)
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_one_holder_at_a_time(two_stores: tuple[Store, Store]) -> None:
    first, second = two_stores
    with first.exclusive("sync"):
        with pytest.raises(StoreBusy, match=r"busy.*'sync' lock"), second.exclusive("sync"):
            pass
        with second.exclusive("other"):  # another name is another lock
            pass
        # Holding the lock keeps no one from reading or writing.
        second.set_meta("k", "v")
        assert first.get_meta("k") == "v"
    with second.exclusive("sync"):  # released at the end of the block
        pass


def test_released_when_the_block_fails(two_stores: tuple[Store, Store]) -> None:
    first, second = two_stores
    with pytest.raises(RuntimeError), first.exclusive("sync"):
        raise RuntimeError("the mirror failed")
    with second.exclusive("sync"):
        pass


HOLD = """
import sys, time
from assay.nvd.storage import open_store
with open_store(sys.argv[1]).exclusive("sync"):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.mark.slow
def test_released_when_the_holder_is_killed(store_url: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, store_url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        store = open_store(store_url)
        try:
            with pytest.raises(StoreBusy), store.exclusive("sync"):
                pass
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(timeout=10)
            deadline = time.monotonic() + 10  # (a server notices a dead session promptly)
            while True:
                try:
                    with store.exclusive("sync"):
                        break
                except StoreBusy:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        finally:
            store.close()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


@pytest.mark.parametrize("name", ["../x", "", ".hidden", "a b", "x" * 65])
def test_a_lock_name_is_checked(two_stores: tuple[Store, Store], name: str) -> None:
    with pytest.raises(StoreError, match="lock name"), two_stores[0].exclusive(name):
        pass
