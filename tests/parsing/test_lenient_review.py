"""Each lenient reading held to "exactly one meaning": one reading kept, its look-alikes refused.

`number_reading` and `list_items` have their own files (`test_lenient_numbers.py`,
`test_lenient_lists.py`); `without_remark`, `bool_reading` and `final_label` are in
`test_lenient.py`.
"""

from __future__ import annotations

import pytest

import structio as sio
from structio.parsing.lenient import NO_READING, label_forms, names_only, python_call_reading

LABELS = [("pos", ["pos"]), ("neg", ["neg"])]


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("**Billing**.", "Billing"),
        ("Category: 'bug'", "bug"),
        ("Literal['x']", "x"),
        ("Urgency.HIGH", "HIGH"),
    ],
)
def test_label_forms_strip_only_decoration(text: str, form: str) -> None:
    assert form in label_forms(text)


@pytest.mark.parametrize(
    ("text", "ok"),
    [("it is pos", True), ("pos, not neg", False), ("positive", True), ("pos or neg", False)],
)
def test_names_only_sees_every_other_choice_named(text: str, ok: bool) -> None:
    assert names_only(text, LABELS, "pos") is ok


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Patient(name='Al', age=3)", {"name": "Al", "age": 3}),
        ("P(items=[Q(a=1)])", {"items": [{"a": 1}]}),
        ("P(age=10**2)", NO_READING),  # arithmetic: not a value written
        ("P('Al', age=3)", NO_READING),  # a positional argument: which field?
        ("P(a=1)(b=2)", NO_READING),
        ("f(x)", NO_READING),
    ],
)
def test_a_constructor_call_is_read_only_when_written_as_values(text: str, value: object) -> None:
    assert python_call_reading(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("Level 2", 2), ("**3**", 3), ("Level 2½", None), ("2²", None), ("2 or 3", None)],
)
def test_a_numeric_choice_is_its_number_only_when_whole(text: str, value: int | None) -> None:
    spec = "q -> a: Literal[1, 2, 3]"
    if value is None:
        with pytest.raises(sio.ParseError):
            sio.ChatAdapter().parse(spec, f"[[ ## a ## ]]\n{text}")
    else:
        assert sio.ChatAdapter().parse(spec, f"[[ ## a ## ]]\n{text}") == {"a": value}
