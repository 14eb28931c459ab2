"""An answer's head and body leave the server in one write: held by `CoalescingTransport`
until the next write or the end of the loop's turn, never reordered, never lost on close."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.service.servers import Served, serving

from assay.nvd.server._coalesce import CoalescingTransport


class Recording(asyncio.Transport):
    """The calls a transport receives (the socket's side is not what is tested here)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: Any) -> None:
        self.calls.append(("write", bytes(data)))

    def writelines(self, pieces: Any) -> None:
        self.calls.append(("writelines", b"".join(bytes(p) for p in pieces)))

    def close(self) -> None:
        self.closing = True
        self.calls.append(("close", b""))

    def abort(self) -> None:
        self.closing = True
        self.calls.append(("abort", b""))

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0


async def _turns(writes_per_turn: list[list[bytes]]) -> Recording:
    loop = asyncio.get_running_loop()
    recording = Recording()
    transport = CoalescingTransport(recording, loop)
    for writes in writes_per_turn:
        for data in writes:
            transport.write(data)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    return recording


def test_a_head_and_its_body_go_out_in_one_call() -> None:
    recording = asyncio.run(_turns([[b"HEAD", b"BODY"], [b"H2", b"B2"]]))
    assert recording.calls == [("writelines", b"HEADBODY"), ("writelines", b"H2B2")]


def test_a_lone_write_goes_out_at_the_end_of_its_turn() -> None:
    recording = asyncio.run(_turns([[b"alone"]]))
    assert recording.calls == [("write", b"alone")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.binary(max_size=8), max_size=5), max_size=6))
def test_every_byte_goes_out_once_in_order(writes_per_turn: list[list[bytes]]) -> None:
    recording = asyncio.run(_turns(writes_per_turn))
    sent = b"".join(data for _, data in recording.calls)
    assert sent == b"".join(b"".join(turn) for turn in writes_per_turn)
    assert sum(1 for name, _ in recording.calls if name == "writelines") <= len(writes_per_turn)


def test_close_sends_what_is_held_first_and_abort_drops_it() -> None:
    async def scenario(end: str) -> Recording:
        recording = Recording()
        transport = CoalescingTransport(recording, asyncio.get_running_loop())
        transport.write(b"refusal")
        transport.close() if end == "close" else transport.abort()
        await asyncio.sleep(0)
        return recording

    assert asyncio.run(scenario("close")).calls == [("write", b"refusal"), ("close", b"")]
    assert asyncio.run(scenario("abort")).calls == [("abort", b"")]


@pytest.fixture
def served_sample(tmp_path: Path) -> Iterator[Served]:
    from assay._cli.nvd import bundled_files
    from assay.nvd.ingest.importer import Importer
    from assay.nvd.storage import open_store

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    Importer(store).import_files([p for p in bundled_files() if p.name == "nvd-cves.jsonl.gz"])
    store.close()
    with serving(url, folder=tmp_path) as served:
        yield served


def test_a_real_server_answers_whole_over_one_connection(served_sample: Served) -> None:
    """Answers pipelined on one keep-alive connection: each whole and in order."""
    with socket.create_connection(("127.0.0.1", served_sample.port), timeout=10) as connection:
        request = (
            b"GET /rest/json/cves/2.0?cveId=CVE-2024-23113 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )
        connection.sendall(request * 5)
        received = b""
        while received.count(b"HTTP/1.1 200 OK") < 5 or not received.endswith(b"}"):
            chunk = connection.recv(65536)
            assert chunk, received[-200:]
            received += chunk
    answers = received.split(b"HTTP/1.1 200 OK")[1:]
    assert len(answers) == 5
    assert all(b'"CVE-2024-23113"' in answer for answer in answers)
