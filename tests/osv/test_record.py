"""The strict OSV reader: every real record reads; bad ones are refused with file and path."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.osv.conftest import OSV_ASSETS, valid_record_files

from assay.errors import IngestError
from assay.osv.record import MAX_DEPTH, read_record, timestamp_key

GOOD = (
    b'{"id":"X-1","modified":"2024-01-02T03:04:05Z","affected":[{"package":'
    b'{"ecosystem":"PyPI","name":"a"},"ranges":[{"type":"ECOSYSTEM","events":'
    b'[{"introduced":"0"},{"fixed":"1.0"}]}]}]}'
)


@pytest.mark.parametrize("path", valid_record_files(), ids=lambda p: p.name)
def test_every_real_record_reads(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    record = read_record(path.read_bytes(), str(path))
    assert record.id
    assert orjson.loads(record.raw)["id"] == record.id


def test_yaml_and_json_of_one_record_give_the_same_bytes() -> None:
    path = OSV_ASSETS / "pypa" / "vulns" / "accesscontrol" / "PYSEC-2021-335.yaml"
    from_yaml = read_record(path.read_bytes(), str(path))
    from_json = read_record(from_yaml.raw, "PYSEC-2021-335.json")
    assert from_yaml.raw == from_json.raw
    # YAML times stay text, as JSON has them.
    assert orjson.loads(from_yaml.raw)["modified"] == "2021-09-26T23:32:08.989778Z"
    assert from_yaml.aliases == ("CVE-2021-32807", "GHSA-qcx9-j53g-ccgf")
    ranges = from_yaml.affected[0].ranges
    assert [r.type for r in ranges] == ["GIT", "ECOSYSTEM"]
    assert [(e.kind, e.value) for e in ranges[1].events][:2] == [
        ("introduced", "4.0"),
        ("fixed", "4.3"),
    ]


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (b'{"modified":"2024-01-02T03:04:05Z"}', "x.json at $: object missing required field `id`"),
        (b'{"id":"X","modified":"yesterday"}', "x.json at $.modified: expected an RFC 3339 time"),
        (
            GOOD.replace(b'"name":"a"', b'"name":1'),
            "x.json at $.affected[0].package.name: expected `str`, got `int`",
        ),
        (
            GOOD.replace(b'{"fixed":"1.0"}', b'{"fixed":"1.0","introduced":"2"}'),
            "x.json at $.affected[0].ranges[0].events[1]: expected exactly one of",
        ),
        (
            GOOD.replace(b'"ECOSYSTEM"', b'"RANGE"'),
            "x.json at $.affected[0].ranges[0].type: expected one of SEMVER, ECOSYSTEM, GIT",
        ),
        (
            GOOD.replace(b'{"introduced":"0"},', b""),
            "x.json at $.affected[0].ranges[0].events: expected an introduced event",
        ),
        (b'{"id":"X","id":"Y","modified":"2024-01-02T03:04:05Z"}', "x.json at $.id: "),
        (b"[1]", "x.json at $: expected an object, found an array"),
        (b"{", "x.json: expected a JSON object"),
        (
            b'{"id":"X","modified":"2024-01-02T03:04:05Z","database_specific":'
            + b"[" * 40
            + b"]" * 40
            + b"}",
            "x.json at $",
        ),
    ],
    ids=[
        "no-id",
        "bad-time",
        "wrong-type",
        "two-kinds",
        "range-type",
        "no-introduced",
        "repeated-key",
        "array",
        "not-json",
        "too-deep",
    ],
)
def test_bad_records_are_refused_with_file_and_path(document: bytes, where: str) -> None:
    with pytest.raises(IngestError) as caught:
        read_record(document, "x.json")
    assert str(caught.value).startswith(where), str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b"id: X\nmodified: '2024-01-02T03:04:05Z'\naliases: &a [A]\nrelated: *a\n",
            "x.yaml at line 3: expected no YAML aliases",
        ),
        (
            b"id: X\nid: Y\nmodified: '2024-01-02T03:04:05Z'\n",
            "x.yaml at line 2: expected each key once, found 'id' twice",
        ),
        (
            b"id: X\nmodified: 2024-01-02T03:04:05Z\ndatabase_specific: "
            + b"[" * (MAX_DEPTH + 2)
            + b"]" * (MAX_DEPTH + 2)
            + b"\n",
            "x.yaml at line 3: expected nesting at most",
        ),
        (b"id: [\n", "x.yaml: expected a YAML or JSON record"),
        (
            b"id: !!python/object:os.system x\nmodified: '2024-01-02T03:04:05Z'\n",
            "x.yaml: expected a YAML or JSON record",
        ),
    ],
    ids=["alias", "repeated-key", "too-deep", "broken", "python-tag"],
)
def test_bad_yaml_is_refused(text: bytes, message: str) -> None:
    with pytest.raises(IngestError) as caught:
        read_record(text, "x.yaml")
    assert str(caught.value).startswith(message), str(caught.value)


def test_a_record_over_the_size_limit_is_refused_before_parsing() -> None:
    from assay.osv import record

    with pytest.raises(IngestError, match="at most"):
        read_record(b" " * (record.MAX_RECORD_BYTES + 1), "x.json")


def test_modified_orders_as_text_in_utc() -> None:
    assert timestamp_key("2021-09-26T23:32:08Z") < timestamp_key("2021-09-26T23:32:08.5Z")
    assert timestamp_key("2021-09-27T01:00:00+02:00") == "2021-09-26T23:00:00.000000Z"


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
_shaped = st.fixed_dictionaries(
    {
        "id": st.text(max_size=5) | _values,
        "modified": st.sampled_from(["2024-01-02T03:04:05Z", "x"]),
    },
    optional={
        "affected": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "package": st.fixed_dictionaries(
                        {"ecosystem": st.sampled_from(["PyPI", ""]), "name": st.text(max_size=4)}
                    )
                    | _values,
                    "ranges": st.lists(
                        st.fixed_dictionaries(
                            {
                                "type": st.sampled_from(["ECOSYSTEM", "GIT", "SEMVER", "X"]),
                                "events": st.lists(
                                    st.dictionaries(
                                        st.sampled_from(["introduced", "fixed", "limit", "x"]),
                                        st.sampled_from(["0", "1.0", ""]) | _values,
                                        max_size=2,
                                    ),
                                    max_size=3,
                                ),
                            },
                            optional={"repo": _values},
                        ),
                        max_size=2,
                    ),
                    "versions": _values,
                },
            ),
            max_size=2,
        ),
        "aliases": _values,
        "withdrawn": _values,
    },
)


@given(document=_shaped | _values)
def test_any_document_is_read_or_refused_with_its_path(document: object) -> None:
    import json

    from assay.osv.evaluate import affected_hit

    data = json.dumps(document).encode()
    try:
        record = read_record(data, "x.json")
    except IngestError as error:
        refusal = str(error)
        assert refusal.startswith("x.json"), refusal
        return
    for entry in record.affected:  # a record that reads can be evaluated
        affected_hit(entry, "1.0")
    assert read_record(record.raw, "again.json").raw == record.raw
