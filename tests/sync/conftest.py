"""Fixtures of the mirror tests: the sample upstream on loopback behind a `FaultProxy`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import make_store_url
from tests.live import serving

from .harness import FaultProxy


@pytest.fixture(scope="module")
def upstream_root(sample_store_url: str) -> Iterator[str]:
    """The sample store served on loopback (`http://127.0.0.1:PORT`)."""
    with serving(sample_store_url) as root:
        yield root


@pytest.fixture
def proxy(upstream_root: str) -> Iterator[FaultProxy]:
    """A fault-injecting proxy in front of the sample upstream (no faults until told)."""
    fault_proxy = FaultProxy(upstream_root)
    fault_proxy.start()
    try:
        yield fault_proxy
    finally:
        fault_proxy.stop()


@pytest.fixture
def mirror_url(sample_store_url: str, tmp_path: Path) -> Iterator[str]:
    """An empty store of the upstream's backend, to mirror into."""
    backend = "postgres" if sample_store_url.startswith("postgres") else "sqlite"
    yield from make_store_url(backend, tmp_path / "mirror")
