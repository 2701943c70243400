"""The one decoding ladder: every reader of JSON-ish model text decodes it the same way."""

from __future__ import annotations

import pytest

import structio as sio
from structio.parsing.decode import (
    Conflict,
    DuplicateKeyError,
    decode_json,
    decode_marked,
    decode_object,
    decode_text,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),  # control characters allowed
        ("{'a': None, 'b': (1, 2)}", {"a": None, "b": (1, 2)}),  # a Python literal
        ('{"a": 1,}', {"a": 1}),  # json-repair, last
        ('{"a": 1 // the count\n}', {"a": 1}),
    ],
)
def test_the_ladder_and_its_users_agree(text: str, value: object) -> None:
    assert decode_json(text) == value
    assert decode_object(text) == value
    assert decode_text(text) == value
    # The adapters read objects through the same ladder.
    assert sio.JSONAdapter().parse("q -> a: dict", '{"a": ' + text + "}") == {"a": value}


def test_steps_can_be_left_out_and_cut_off_json_is_refused() -> None:
    with pytest.raises(ValueError, match="not JSON"):
        decode_json("None", python=False, repair=False)
    assert decode_json("None", repair=False) is None
    assert decode_object("[1, 2]") is None  # not an object
    with pytest.raises(ValueError, match="cut off"):
        decode_text('{"a": [1, 2')
    assert decode_text("yes") == "yes"  # no brackets: left for pydantic's own reading


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": <value>, "b": 1}', {"a": None, "b": 1}),
        ('{"a": undefined, "b": "x",}', {"a": None, "b": "x"}),
        ('{"a": [1, <more>], }', {"a": [1, None]}),
        # Inside a string, the same text is text.
        ('{"a": "x: <b>", "c": 2,}', {"a": "x: <b>", "c": 2}),
    ],
)
def test_a_placeholder_or_undefined_where_a_value_belongs_is_no_value(
    text: str, expected: object
) -> None:
    assert decode_json(text) == expected


# -- a key given two different values ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('{"a": 4, "a": 5}', "4 and 5"),  # JSON
        ('{"x": {"a": "p", "a": "q"}}', '"p" and "q"'),  # nested
        ('[{"a": 1, "a": true}]', "1 and true"),  # equal in Python, not the same value
        ("{'a': 4, 'a': 5}", "4 and 5"),  # a Python literal
        ('{"a": 4, "a": 5,}', "4 and 5"),  # json-repair: the values as written
        ("{a: 'p', a: 'q' // note\n}", "'p' and 'q'"),
    ],
)
def test_a_key_given_two_different_values_has_no_reading(text: str, shown: str) -> None:
    with pytest.raises(DuplicateKeyError, match=f"'a' is given two different values, {shown}"):
        decode_json(text)
    with pytest.raises(DuplicateKeyError):
        decode_text(text)  # not read as plain text instead


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 4, "a": 4}', {"a": 4}),
        ("{'a': [1], 'a': [1]}", {"a": [1]}),
        ('{"a": "x", "a": "x",}', {"a": "x"}),
    ],
)
def test_a_key_given_the_same_value_twice_is_read(text: str, value: object) -> None:
    assert decode_json(text) == value


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 4, "a": 5, "b": {"c": 1}}',
        "{'a': 4, 'a': 5, 'b': {'c': 1}}",
        '{"a": 4, "a": 5, "b": {"c": 1},}',
        '{"a": 4 "a": 5, "b": {"c": 1}}',  # json-repair: a comma missing too
    ],
)
def test_decode_marked_marks_each_repeated_key_and_keeps_the_rest(text: str) -> None:
    value, conflicted = decode_marked(text)
    assert conflicted
    assert value is not None
    assert value["b"] == {"c": 1}
    conflict = value["a"]
    assert isinstance(conflict, Conflict)
    assert conflict.error.key == "a"
    assert conflict.error.values == ("4", "5")


def test_decode_marked_of_an_object_with_no_repeat_is_not_conflicted() -> None:
    assert decode_marked('{"a": 4}') == ({"a": 4}, False)
    assert decode_marked("[1]") == (None, False)  # no object
    assert decode_marked('{"a": 4') == ({"a": 4}, False)  # json-repair closes it
