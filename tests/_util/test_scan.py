"""`open_brackets`: what strict JSON text leaves open, and when it cannot say."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from structio._util.scan import MAX_DEPTH, open_brackets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', ""),
        ('{"a": [1, {"b": "x"', "{[{"),
        ('{"a": "}]"', "{"),  # brackets in strings do not count
        ('{"a": "say \\"hi\\"", "b": [', "{["),  # escaped quotes stay in the string
        ('{"a": "x', None),  # ends inside a string
        ('{"a": [1}', None),  # a closer that does not pair
        ("[" * (MAX_DEPTH + 1), None),
    ],
)
def test_open_brackets(text: str, expected: str | None) -> None:
    assert open_brackets(text) == expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(json_values)
def test_a_whole_document_leaves_nothing_open(value: object) -> None:
    assert open_brackets(json.dumps(value)) == ""


@given(st.dictionaries(st.text(), json_values, min_size=1, max_size=4))
def test_an_object_without_its_last_brace_leaves_one_open(value: dict[str, object]) -> None:
    assert open_brackets(json.dumps(value)[:-1]) == "{"
