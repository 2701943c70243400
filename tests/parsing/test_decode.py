"""The one decoding ladder: every reader of JSON-ish model text decodes it the same way."""

from __future__ import annotations

import pytest

import structio as sio
from structio.parsing.decode import decode_json, decode_object, decode_text


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
