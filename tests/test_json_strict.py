"""The shared strict-JSON walk: repeated keys and nesting found with their JSON path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._json_strict import _Duplicated, first_problem, member, parse, parse_checked


def test_a_repeated_key_is_named_with_its_path() -> None:
    value = parse('{"a": [{"b": 1}, {"c": 1, "c": 2}], "d": {"d": 1, "d": 2}}')
    assert first_problem(value, 10) == ("$.a[1].c", "duplicate")


def test_nesting_past_the_limit_is_found_at_the_first_container_too_deep() -> None:
    value = parse('{"a": {"b": {"c": []}}}')
    assert first_problem(value, 3) is None
    assert first_problem(value, 2) == ("$.a.b.c", "depth")


def test_keys_that_are_not_identifiers_are_quoted() -> None:
    assert first_problem(parse('{"node_modules/x": {"k": 1, "k": 2}}'), 5) == (
        '$["node_modules/x"].k',
        "duplicate",
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(json_values)
def test_documents_without_repeated_keys_have_no_problem_within_their_depth(value: object) -> None:
    assert first_problem(parse(json.dumps(value)), 64) is None


def _reference(value: object, max_depth: int, path: str = "$", depth: int = 0) -> object:
    """The specification, as a plain recursive walk in document order."""
    if depth > max_depth:
        return (path, "depth")
    if isinstance(value, _Duplicated):
        return (member(path, value.duplicate), "duplicate")
    if isinstance(value, dict):
        children: list[tuple[str | int, object]] = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    else:
        return None
    for key, child in children:
        if isinstance(child, dict | list):
            found = _reference(child, max_depth, member(path, key), depth + 1)
            if found is not None:
                return found
    return None


def _text(draw: st.DrawFn, depth: int = 0) -> str:
    """JSON text whose objects may repeat a key (json.dumps cannot write those)."""
    kind = draw(st.sampled_from(["scalar", "array", "object"] if depth < 6 else ["scalar"]))
    if kind == "scalar":
        return json.dumps(draw(st.none() | st.booleans() | st.integers() | st.text(max_size=3)))
    count = draw(st.integers(0, 3))
    if kind == "array":
        return "[" + ",".join(_text(draw, depth + 1) for _ in range(count)) + "]"
    keys = [draw(st.sampled_from(["a", "b", "node/x", ""])) for _ in range(count)]
    return "{" + ",".join(f"{json.dumps(k)}:{_text(draw, depth + 1)}" for k in keys) + "}"


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    return _text(draw)


@given(json_texts(), st.integers(-1, 7))
def test_the_first_problem_is_the_one_a_recursive_walk_finds_first(text: str, limit: int) -> None:
    value = parse(text)
    assert first_problem(value, limit) == _reference(value, limit)


@given(json_texts(), st.integers(-1, 7))
def test_a_problem_is_found_exactly_when_one_exists(text: str, limit: int) -> None:
    value = parse(text)
    duplicated = _has_repeated_key(json.loads(text, object_pairs_hook=lambda pairs: pairs))
    too_deep = _depth(value) > limit
    assert (first_problem(value, limit) is None) == (not duplicated and not too_deep)


def _has_repeated_key(value: object) -> bool:
    # Parsed with object_pairs_hook=list: objects are lists of (key, value) tuples.
    if isinstance(value, list):
        if value and all(isinstance(p, tuple) for p in value):
            keys = [k for k, _ in value]
            if len(set(keys)) != len(keys):
                return True
            return any(_has_repeated_key(v) for _, v in value)
        return any(_has_repeated_key(v) for v in value)
    return False


def _depth(value: object) -> int:
    """How deep the deepest container lies below the document (the document is 0)."""
    children = value.values() if isinstance(value, dict) else value
    if not isinstance(value, dict | list):
        return 0
    return max((1 + _depth(v) for v in children if isinstance(v, dict | list)), default=0)


@given(json_texts(), st.integers(-1, 7), st.sampled_from(["str", "utf-8", "utf-16", "utf-32"]))
def test_parse_checked_is_parse_then_first_problem(text: str, limit: int, form: str) -> None:
    data: str | bytes = text if form == "str" else text.encode(form)
    if form in ("utf-16", "utf-32"):  # JSON exchanged is UTF-8 (RFC 8259 8.1)
        with pytest.raises(json.JSONDecodeError):
            parse_checked(data, limit)
        with pytest.raises(json.JSONDecodeError):
            parse(data)
        return
    value, problem = parse_checked(data, limit)
    assert value == parse(data)
    assert problem == first_problem(parse(data), limit)


@pytest.mark.parametrize(
    "text",
    [
        b'\xef\xbb\xbf{"a": 1}',
        '\ufeff{"a": 1}',
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        b'{"a": 1e999}',
        b'{"a": "\\ud800"}',
        b'{"\\udc00": 1}',
        '{"a": "\ud800"}',
        b'{"a": "\xe9"}',
        '{"a": 1}'.encode("utf-16"),
    ],
    ids=[
        "bom",
        "bom-str",
        "nan",
        "infinity",
        "minus-infinity",
        "out-of-range",
        "lone-high-surrogate",
        "lone-low-surrogate-key",
        "surrogate-str",
        "latin-1",
        "utf-16",
    ],
)
def test_what_python_json_accepts_beyond_rfc_8259_is_refused_with_a_position(
    text: str | bytes,
) -> None:
    for reader in (parse, lambda t: parse_checked(t, 8)):
        with pytest.raises(json.JSONDecodeError) as caught:
            reader(text)
        assert caught.value.lineno == 1
        assert caught.value.colno >= 1


def test_a_surrogate_pair_and_big_integers_are_read() -> None:
    assert parse(b'{"a": "\\ud83d\\ude00", "n": 123456789012345678901234567890}') == {
        "a": "\U0001f600",
        "n": 123456789012345678901234567890,
    }


def test_parse_checked_walks_only_when_it_must() -> None:
    deep = "[" * 9 + "]" * 9
    assert parse_checked(deep, 8) == (parse(deep), None)
    assert parse_checked(deep, 7)[1] == ("$" + "[0]" * 8, "depth")
    assert parse_checked('{"a": "[[[[", "a": 1}', 8)[1] == ("$.a", "duplicate")
    assert parse_checked('{"a": "[[[["}', 1)[1] is None  # brackets in strings are not nesting
