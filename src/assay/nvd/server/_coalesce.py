"""A response head and the body written right after it leave in one write.

uvicorn writes an answer's head when the app starts the response and its body when the
app sends it: two system calls and two TCP segments for every small answer (a `cveId`
record is one head and one body of a few kilobytes), each waking the client once. Here
the first write after the connection was idle is held until the next write or the end
of the event loop's current turn, whichever comes first, and then both go out together
(`writelines`: one vectored write, nothing copied). A lone write waits for nothing but
the end of the turn; closing the connection sends what is held first; aborting drops it,
as it drops everything buffered.
"""

from __future__ import annotations

import asyncio
from typing import Any


class CoalescingTransport:
    """`transport` with its first write after a pause held to join the next one."""

    __slots__ = ("_flush_scheduled", "_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | bytearray | memoryview | None = None
        self._flush_scheduled = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
            return
        if self._flush_scheduled or not data:
            # (a later write of the same turn: the held one already went out with another)
            self._transport.write(data)
            return
        self._held = data
        self._flush_scheduled = True
        self._loop.call_soon(self._flush)

    def writelines(self, pieces: Any) -> None:
        self.write(b"".join(pieces))

    def _flush(self) -> None:
        self._flush_scheduled = False
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        held = 0 if self._held is None else len(self._held)
        return held + self._transport.get_write_buffer_size()

    def __getattr__(self, name: str) -> Any:
        # Everything else (is_closing, get_extra_info, pause_reading, ...) is the
        # transport's own.
        return getattr(self._transport, name)
