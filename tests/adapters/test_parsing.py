"""Adapter.parse beyond the golden files, and what a ParseError carries."""

from __future__ import annotations

import pickle
from typing import Literal

import pytest
from pydantic import BaseModel

import structio as sio

chat = sio.ChatAdapter()
json_ = sio.JSONAdapter()


class Item(BaseModel):
    name: str
    qty: int


class Order(sio.Signature):
    """Read the order."""

    text: str = sio.InputField()
    items: list[Item] = sio.OutputField()
    total: float = sio.OutputField(ge=0)
    rush: bool = sio.OutputField()
    note: str | None = sio.OutputField()
    channel: Literal["web", "phone"] = sio.OutputField(default="web")


def test_chat_parse_returns_typed_values_in_signature_order() -> None:
    completion = (
        "[[ ## rush ## ]]\nyes\n\n[[ ## total ## ]]\n12.5\n\n"
        '[[ ## items ## ]]\n[{"name": "tea", "qty": 2}]\n\n[[ ## completed ## ]]'
    )
    parsed = chat.parse(Order, completion)
    assert list(parsed) == ["items", "total", "rush", "note", "channel"]
    assert parsed == {
        "items": [Item(name="tea", qty=2)],
        "total": 12.5,
        "rush": True,
        "note": None,  # optional and omitted
        "channel": "web",  # omitted: the declared default
    }


def test_chat_parse_sections_rules() -> None:
    sig = sio.Signature("q -> a, b: int")
    completion = (
        "Sure, here you go.\n[[ ## a ## ]] first line\nsecond line\n[[ ## other ## ]]\nignored\n"
        "[[ ## b ## ]]\n  7  \n[[ ## b ## ]]\n7\n[[ ## completed ## ]]\n[[ ## a ## ]]\nlater"
    )
    # `b` twice with the same value is one value; `a` after `completed` is not read.
    assert chat.parse(sig, completion) == {"a": "first line\nsecond line", "b": 7}


@pytest.mark.parametrize(
    ("adapter", "completion", "shown"),
    [
        (chat, "[[ ## b ## ]]\n7\n\n[[ ## b ## ]]\n8\n\n[[ ## completed ## ]]", ("'7'", "'8'")),
        (chat, "[[ ## b ## ]]\n{b}\n\n[[ ## b ## ]]\n7\n\n[[ ## b ## ]]\n8", ("'7'", "'8'")),
        (chat, "B: 7\nA: x\nB: 8", ("'7'", "'8'")),
        (json_, '{"b": 7, "b": 8}', ("7", "8")),
        (json_, '{"a": "x", "b": 7, "b": 8,}', ("7", "8")),  # json-repair's reading
        (json_, "{'a': 'x', 'b': 7, 'b': 8}", ("7", "8")),  # a Python literal
        (json_, '{"output": {"b": 7, "b": 8}}', ("7", "8")),  # in a wrapper
        (json_, '{"a": "x", "b": 7, "b": 8', ("7", "8")),  # cut off after the second
        (json_, 'b": 7, "b": 8}', ("7", "8")),  # the object lost its brace
    ],
)
def test_an_output_given_two_different_values_is_refused(
    adapter: sio.Adapter, completion: str, shown: tuple[str, str]
) -> None:
    with pytest.raises(sio.ParseError) as info:
        adapter.parse("q -> a: str | None, b: int", completion)
    assert list(info.value.invalid) == ["b"]
    reason = info.value.invalid["b"][1]
    assert f"two different values, {shown[0]} and {shown[1]}" in reason or (
        f"({shown[0]} and {shown[1]})" in reason
    )


@pytest.mark.parametrize(
    ("adapter", "completion"),
    [
        (chat, "[[ ## b ## ]]\n7\n\n[[ ## b ## ]]\n 7\n\n[[ ## completed ## ]]"),
        (chat, "B: 7\nA: x\nB: 7"),
        (json_, '{"b": 7, "b": 7}'),
        (json_, '{"b": 7, "b": 7,}'),
        # A key repeated outside the outputs leaves them one reading.
        (json_, '{"b": 7, "c": {"k": 1, "k": 2}}'),
    ],
)
def test_an_output_given_the_same_value_twice_is_read(
    adapter: sio.Adapter, completion: str
) -> None:
    assert adapter.parse("q -> a: str | None, b: int", completion)["b"] == 7


def test_a_repeated_key_inside_an_output_value_refuses_that_output() -> None:
    completion = '{"a": "x", "b": 7, "c": {"k": 1, "k": 2}}'
    with pytest.raises(sio.ParseError) as info:
        json_.parse("q -> a, b: int, c: dict[str, int]", completion)
    assert list(info.value.invalid) == ["c"]
    assert "the key 'k' is given two different values, 1 and 2" in str(info.value)
    assert info.value.parsed == {"a": "x", "b": 7}


def test_chat_str_value_is_kept_verbatim() -> None:
    sig = sio.Signature("q -> zip, maybe: str | None")
    parsed = chat.parse(sig, "[[ ## zip ## ]]\n02139\n\n[[ ## maybe ## ]]\nNone")
    assert parsed == {"zip": "02139", "maybe": None}  # only None: no value (golden fix 9)


def test_chat_indented_header_with_value_on_the_line() -> None:
    assert chat.parse("q -> a: int", "   [[ ## a ## ]]   7") == {"a": 7}


def test_chat_empty_section_for_an_optional_value_is_none() -> None:
    assert chat.parse("q -> a: int | None", "[[ ## a ## ]]\n\n[[ ## completed ## ]]") == {"a": None}


def test_json_parse_details() -> None:
    completion = (
        'Here: {"items": [{"name": "tea", "qty": "2"}], "total": "12.5", "rush": true, '
        '"note": null, "extra": 1} done'
    )
    assert json_.parse(Order, completion) == {
        "items": [Item(name="tea", qty=2)],
        "total": 12.5,
        "rush": True,
        "note": None,
        "channel": "web",
    }


def test_json_nested_value_given_as_a_json_string() -> None:
    completion = '{"items": "[{\\"name\\": \\"tea\\", \\"qty\\": 1}]", "total": 1, "rush": false}'
    assert json_.parse(Order, completion)["items"] == [Item(name="tea", qty=1)]


def test_json_non_string_value_for_a_str_field() -> None:
    sig = sio.Signature("q -> a, b, c")
    parsed = json_.parse(sig, '{"a": 42, "b": [1, 2], "c": {"k": "v"}}')
    assert parsed == {"a": "42", "b": "[1, 2]", "c": '{"k": "v"}'}


def test_json_python_literals_and_single_quotes() -> None:
    completion = "{'items': [], 'total': 3, 'rush': False, 'note': None}"
    assert json_.parse(Order, completion)["rush"] is False


def test_json_none_inside_a_model_stays_none() -> None:
    class Person(BaseModel):
        name: str
        age: int | None

    sig = sio.make_signature({"q": sio.InputField(), "p": (Person, sio.OutputField())})
    assert json_.parse(sig, "{'p': {'name': 'Al', 'age': None}}")["p"].age is None
    assert chat.parse(sig, "[[ ## p ## ]]\n{'name': 'Al', 'age': None}")["p"].age is None


def test_string_spec_can_be_parsed_against() -> None:
    assert json_.parse("q -> a: list[int]", '```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}


# -- ParseError -----------------------------------------------------------------------------


def test_parse_error_carries_everything() -> None:
    completion = "[[ ## items ## ]]\n[]\n\n[[ ## total ## ]]\n-4\n\n[[ ## rush ## ]]\nperhaps"
    with pytest.raises(sio.ParseError) as info:
        chat.parse(Order, completion)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.adapter == "ChatAdapter"
    assert error.signature is Order
    assert error.completion == completion
    assert error.parsed == {"items": []}
    assert error.missing == []
    assert set(error.invalid) == {"total", "rush"}
    assert error.invalid["total"][0] == "-4"
    assert "constraint ge=0" in error.invalid["total"][1]
    assert error.invalid["rush"][0] == "perhaps"
    message = str(error)
    for fragment in ("field `total`", "'-4'", "expected float", "field `rush`", "expected bool"):
        assert fragment in message
    assert "what to do" in message


def test_parse_error_for_missing_fields() -> None:
    with pytest.raises(sio.ParseError) as info:
        chat.parse(Order, "[[ ## total ## ]]\n3")
    assert info.value.missing == ["items", "rush"]
    assert "missing required field(s): `items`, `rush`" in str(info.value)


def test_parse_error_for_an_empty_completion() -> None:
    for adapter in (chat, json_):
        with pytest.raises(sio.ParseError, match="the completion is empty") as info:
            adapter.parse(Order, "   ")
        assert info.value.missing == ["items", "total", "rush"]


def test_json_parse_error_when_there_is_no_object() -> None:
    with pytest.raises(sio.ParseError) as info:
        json_.parse(Order, "I cannot help with that.")
    assert "found no outputs" in str(info.value)
    assert info.value.problem is not None


def test_json_parse_error_names_the_invalid_value() -> None:
    with pytest.raises(sio.ParseError) as info:
        json_.parse(Order, '{"items": [{"name": "tea"}], "total": 1, "rush": true}')
    assert set(info.value.invalid) == {"items"}
    assert "qty" in info.value.invalid["items"][1]


def test_parse_error_pickles() -> None:
    with pytest.raises(sio.ParseError) as info:
        chat.parse(Order, "[[ ## total ## ]]\nlots")
    copy = pickle.loads(pickle.dumps(info.value))  # noqa: S301 - our own bytes, just written
    assert isinstance(copy, sio.ParseError)
    assert (copy.adapter, copy.completion, copy.missing) == (
        info.value.adapter,
        info.value.completion,
        info.value.missing,
    )
    assert copy.invalid == info.value.invalid
    assert str(copy) == str(info.value)


def test_long_completions_are_clipped_in_the_message_but_kept_whole() -> None:
    completion = "x" * 5000
    with pytest.raises(sio.ParseError) as info:
        chat.parse("q -> a: int", completion)
    assert info.value.completion == completion
    assert len(str(info.value)) < 1500
