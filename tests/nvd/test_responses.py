"""The NVD envelope sent in pieces (`assay.nvd.server.responses`): the pieces are the
whole body, in order, whatever the records and the piece size."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock

import orjson
from hypothesis import given
from hypothesis import strategies as st

from assay.nvd.dates import format_nvd_timestamp
from assay.nvd.server import responses
from assay.nvd.server.responses import Envelope

RECORDS = st.lists(
    st.builds(
        lambda n, text: orjson.dumps({"id": f"CVE-2024-{n:04d}", "text": text}),
        st.integers(0, 99_999),
        st.text(max_size=400),
    ),
    max_size=40,
)


@given(RECORDS, st.integers(1, 5000), st.integers(0, 10**6), st.integers(0, 10**6))
def test_the_pieces_make_one_nvd_envelope(
    records: list[bytes], chunk_bytes: int, start_index: int, total: int
) -> None:
    chunks = list(
        Envelope(
            format_name="NVD_CVE",
            list_key="vulnerabilities",
            wrapper="cve",
            start_index=start_index,
            total=total,
            records=records,
            chunk_bytes=chunk_bytes,
        ).pieces()
    )
    assert all(chunks)
    # The length is known before any piece is made, and is the pieces' length.
    envelope = Envelope(
        format_name="NVD_CVE", list_key="vulnerabilities", wrapper="cve",
        start_index=start_index, total=total, records=records, chunk_bytes=chunk_bytes,
    )  # fmt: skip
    assert envelope.length == sum(map(len, envelope.pieces())) == sum(map(len, chunks))
    body = orjson.loads(b"".join(chunks))
    assert body["resultsPerPage"] == len(records)
    assert (body["startIndex"], body["totalResults"]) == (start_index, total)
    assert [item["cve"] for item in body["vulnerabilities"]] == [orjson.loads(r) for r in records]
    # Only the last piece may be smaller than asked (a piece closes after a whole record).
    assert all(len(chunk) >= chunk_bytes for chunk in chunks[:-1])


@given(RECORDS, st.integers(1, 3000), st.sampled_from(["cve", None]))
def test_the_pieces_are_the_records_as_stored_in_nvds_envelope(
    records: list[bytes], chunk_bytes: int, wrapper: str | None
) -> None:
    """Byte for byte: the head, each record under its wrapper (or bare), commas between."""
    envelope = Envelope(
        format_name="NVD_SOURCE", list_key="sources", wrapper=wrapper,
        start_index=0, total=len(records), records=records, chunk_bytes=chunk_bytes,
    )  # fmt: skip
    pieces = list(envelope.pieces())
    body = b"".join(pieces)
    items = [b'{"%s":%s}' % (wrapper.encode(), r) if wrapper else r for r in records]
    assert body.endswith(b'"sources":[' + b",".join(items) + b"]}")
    assert envelope.length == len(body)


@given(st.lists(st.integers(0, 4_102_444_800_000), min_size=1, max_size=8))
def test_the_timestamp_is_nvds_form_of_now(instants: list[int]) -> None:
    """Made from the second's text and the milliseconds: the same text as formatting the
    whole instant, whatever instants come one after another (same second or not)."""
    for millisecond in [*instants, *(m + 1 for m in instants)]:
        with mock.patch.object(responses.time, "time_ns", return_value=millisecond * 1_000_000):
            made = responses.now_timestamp()
        seconds, rest = divmod(millisecond, 1000)
        expected = datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest * 1000)
        assert made == format_nvd_timestamp(expected)
