"""The shared strict-JSON walk: repeated keys and nesting found with their JSON path."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from assay._json_strict import first_problem, parse


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
