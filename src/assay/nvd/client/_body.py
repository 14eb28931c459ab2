"""An answer's body, read within bounds: on the wire and once decoded. Free of I/O.

The clients feed `BodyReader` the raw bytes as they arrive (`iter_raw`, before any
content decoding) and decode here, so that a cap holds while reading: a gzip bomb stops
at `max_decoded` bytes of output (each step of the decoder makes at most `STEP` bytes),
an endless body at `max_wire` bytes received, and a declared `Content-Length` over the
cap is refused before anything is read. An NVD page is a few MiB (a 2000-CVE page is
about 6 MiB, 1.3 MiB in gzip): the defaults leave a wide margin.
"""

from __future__ import annotations

import zlib
from typing import IO, Any, Final, cast

from assay.nvd.client._errors import NvdResponseTooLarge, NvdTransportError

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_DECODED_BYTES",
    "MAX_WIRE_BYTES",
    "BodyReader",
]

MAX_WIRE_BYTES: Final = 64 * 2**20
"""Default cap on an answer's body as received (compressed, if it is)."""
MAX_DECODED_BYTES: Final = 256 * 2**20
"""Default cap on an answer's body once decoded."""
STEP: Final = 2**20
"""The most a decoder makes from one step before the cap is checked again."""
ACCEPT_ENCODING: Final = "zstd, gzip, deflate"
"""The content codings this module decodes, sent as `Accept-Encoding`."""


def _mib(size: int) -> str:
    return f"{size >> 20} MiB" if size % 2**20 == 0 else f"{size} bytes"


class BodyReader:
    """Collects one answer's body: `feed` each raw chunk, then `finish` for the bytes.

    Raises `NvdResponseTooLarge` past a cap and `NvdTransportError` for a coding it does
    not know or data that does not decode (as a cut body does, which is worth a retry).
    """

    def __init__(
        self,
        url: str,
        headers: Any,
        *,
        max_wire: int = MAX_WIRE_BYTES,
        max_decoded: int = MAX_DECODED_BYTES,
    ) -> None:
        self.url = url
        self.max_wire = max_wire
        self.max_decoded = max_decoded
        self.wire = 0
        self._body = bytearray()
        self._zlib: Any = None
        self._zstd: Any = None
        declared = str(headers.get("content-length", "")).strip()
        if declared.isdigit() and int(declared) > max_wire:
            raise self._too_large(f"declares {int(declared)} bytes, more than {_mib(max_wire)}")
        coding = str(headers.get("content-encoding", "identity")).strip().lower()
        if coding in ("gzip", "x-gzip", "deflate"):
            # 32 + 15: a gzip or zlib header, whichever comes (servers mix them up).
            self._zlib = zlib.decompressobj(32 + zlib.MAX_WBITS)
        elif coding == "zstd":
            import zstandard

            self._zstd = zstandard.ZstdDecompressor().stream_writer(
                cast("IO[bytes]", _Sink(self)),  # it only ever calls write()
                write_size=STEP,
                write_return_read=True,
            )
        elif coding not in ("", "identity"):
            raise NvdTransportError(f"unsupported Content-Encoding {coding[:40]!r}", url)

    def _too_large(self, what: str) -> NvdResponseTooLarge:
        return NvdResponseTooLarge(f"the answer {what}; not read further", self.url)

    def _keep(self, data: bytes) -> None:
        if len(self._body) + len(data) > self.max_decoded:
            raise self._too_large(f"is more than {_mib(self.max_decoded)} once decoded")
        self._body += data

    def feed(self, raw: bytes) -> None:
        """One chunk as received."""
        self.wire += len(raw)
        if self.wire > self.max_wire:
            raise self._too_large(f"is more than {_mib(self.max_wire)}")
        try:
            if self._zlib is not None:
                data = raw
                while data:
                    self._keep(self._zlib.decompress(data, STEP))
                    data = self._zlib.unconsumed_tail
            elif self._zstd is not None:
                self._zstd.write(raw)
            else:
                self._keep(raw)
        except NvdResponseTooLarge:
            raise
        except Exception as exc:  # zlib.error, zstandard.ZstdError: a damaged body
            raise NvdTransportError(f"the body does not decode: {exc}", self.url) from exc

    def finish(self) -> bytearray:
        """The decoded body (not copied: parsers read a `bytearray` as they read bytes)."""
        if self._zlib is not None and self.wire and not self._zlib.eof:
            raise NvdTransportError("the compressed body ends early", self.url)
        if self._zstd is not None:
            self._zstd.flush()
        return self._body


class _Sink:
    """Where the zstd decoder writes: into the reader, within its cap."""

    def __init__(self, reader: BodyReader) -> None:
        self._reader = reader

    def write(self, data: bytes) -> int:
        self._reader._keep(data)
        return len(data)
