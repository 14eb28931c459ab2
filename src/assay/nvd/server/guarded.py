"""uvicorn's HTTP protocol (httptools) with the limits a public server needs.

uvicorn closes a connection idle between requests (`timeout_keep_alive`) and answers
503 past `limit_concurrency`, but nothing else bounds what a client can hold:

* a connection that never sends a byte, or sends its request head one byte every few
  seconds (slowloris), stays open for ever: here the whole head must arrive within
  `head_timeout` seconds of the connection or of the previous answer's end, else the
  connection is closed;
* a request head has no size limit with httptools (8 connections of unfinished 128 MiB
  heads took 1 GiB): here a head larger than `max_head_bytes` gets 431 and the close;
* a client that asks for a 60 MB page and never reads it keeps the page in memory
  while the answer waits for the socket: here an answer that cannot write for
  `send_timeout` seconds is dropped, connection and all, and its memory freed.

The limits come from the service settings in the environment (`ASSAY_SERVICE`), since
uvicorn makes one protocol object per connection in each worker process.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from assay.nvd.server._coalesce import CoalescingTransport

TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-length: 0\r\nconnection: close\r\n\r\n"
)
TOO_SLOW = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


@dataclass(frozen=True, slots=True)
class Guards:
    head_timeout: float
    send_timeout: float
    max_head_bytes: int


@functools.cache
def guards() -> Guards:
    from assay.nvd.server.service import ServiceSettings

    settings = ServiceSettings.from_environment()
    return Guards(settings.head_timeout, settings.send_timeout, settings.max_header_bytes)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guards = guards()
        self._in_head = True
        self._head_bytes = 0  # bytes received since the current head began
        self._parsed_head = 0  # the current head's length as the parser found it
        self._head_too_large = False
        # When the current head's time began (None between a head and the next's first
        # byte). One timer per connection checks it, re-armed as it fires rather than set
        # and cancelled for each request.
        self._head_since: float | None = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # Each answer's head and body leave together (uvicorn's flow control keeps the
        # transport itself: pausing and resuming reads are the transport's own).
        self.transport = CoalescingTransport(transport, self.loop)  # type: ignore[assignment]
        self._head_since = self.loop.time()
        self._arm_head_timer(self._guards.head_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        # A read may hold a whole head and the start of its body (a browser posting a
        # form sends both in one write): the head is measured by what the parser found
        # in it, and an unfinished head by every byte that arrived since it began.
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_since is None:
                self._head_since = self.loop.time()
                if self._head_timer is None:
                    self._arm_head_timer(self._guards.head_timeout)
        super().data_received(data)
        too_large = self._head_too_large or (
            self._in_head and self._head_bytes > self._guards.max_head_bytes
        )
        if too_large and not self.transport.is_closing():
            self._refuse(TOO_LARGE)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._parsed_head = 0

    def on_url(self, url: bytes) -> None:
        self._parsed_head += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parsed_head += len(name) + len(value) + 4  # ": " and CRLF
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        self._head_since = None  # (the timer finds no head to time when it fires)
        if self._parsed_head > self._guards.max_head_bytes:
            self._head_too_large = True  # refused once the parser returns; no app call
            return
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request's head is timed from its first byte (until then, uvicorn's
        # keep-alive timeout closes an idle connection).
        self._in_head = True
        self._head_bytes = 0

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self._guards.send_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _arm_head_timer(self, delay: float) -> None:
        self._head_timer = self.loop.call_later(delay, self._head_expired)

    def _head_expired(self) -> None:
        """Close the connection if its current head has taken `head_timeout`; else look
        again when it would have (or a whole timeout later, when no head is arriving)."""
        self._head_timer = None
        if self.transport.is_closing():
            return
        since = self._head_since
        if not self._in_head or since is None:
            self._arm_head_timer(self._guards.head_timeout)
            return
        left = since + self._guards.head_timeout - self.loop.time()
        if left <= 0:
            self._refuse(TOO_SLOW)
            return
        self._arm_head_timer(left)

    def _stalled(self) -> None:
        """The client has read nothing for `send_timeout` seconds: drop what is buffered
        and the connection (the answer's sender sees a disconnect and ends)."""
        self._send_timer = None
        if not self.transport.is_closing():
            self.transport.abort()

    def _refuse(self, answer: bytes) -> None:
        self._in_head = False
        self._cancel_timers()
        if self.parser is not None and (self.cycle is None or self.cycle.response_complete):
            self.transport.write(answer)
        self.transport.close()

    def _cancel_timers(self) -> None:
        for timer in (self._head_timer, self._send_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._send_timer = None
