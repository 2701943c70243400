"""SignatureField objects and the History input type."""

from __future__ import annotations

from typing import Any, Literal

import pytest

import structio as sio
from structio.signatures import MISSING, SignatureField


def test_input_and_output_field_kinds() -> None:
    assert sio.InputField().is_input
    assert sio.OutputField().is_output
    assert sio.InputField().default is MISSING


def test_constraints_are_ordered_and_rendered_like_dspy() -> None:
    field = sio.OutputField(le=1.0, ge=0.0, max_length=3, multiple_of=2, gt=-1, lt=9)
    assert list(field.constraints) == ["gt", "ge", "lt", "le", "max_length", "multiple_of"]
    assert field.constraints_text == (
        "greater than: -1, greater than or equal to: 0.0, less than: 9, "
        "less than or equal to: 1.0, maximum length: 3, a multiple of the given number: 2"
    )


@pytest.mark.parametrize(
    ("annotation", "admits_none"),
    [
        (int, False),
        (str, False),
        (int | None, True),
        (Any, True),
        (Literal["a", None], True),
        (list[int | None], False),
    ],
)
def test_admits_none_and_required(annotation: Any, admits_none: bool) -> None:
    sig = sio.make_signature({"q": sio.InputField(), "a": (annotation, sio.OutputField())})
    field = sig.output_fields["a"]
    assert field.admits_none is admits_none
    assert field.required is (not admits_none)


def test_fields_are_immutable() -> None:
    field = sio.InputField(desc="x")
    with pytest.raises(AttributeError, match="immutable"):
        field.desc = "y"  # type: ignore[misc]


def test_replace_returns_a_new_field() -> None:
    field = sio.OutputField(desc="x", ge=1)
    changed = field.replace(desc="y", le=3)
    assert (field.desc, dict(field.constraints)) == ("x", {"ge": 1})
    assert (changed.desc, dict(changed.constraints)) == ("y", {"ge": 1, "le": 3})
    assert changed.replace(default=5).default == 5
    with pytest.raises(TypeError, match="unknown field attribute"):
        field.replace(colour="red")


def test_field_repr_and_equality() -> None:
    sig = sio.Signature("q -> a: int")
    assert repr(sig.output_fields["a"]) == "OutputField(name='a', type=int)"
    assert sig.output_fields["a"] == sio.Signature("q -> a: int").output_fields["a"]
    assert sig.output_fields["a"] != sio.Signature("q -> a: str").output_fields["a"]


def test_signature_field_kind_is_checked() -> None:
    with pytest.raises(ValueError, match="'input' or 'output'"):
        SignatureField("middle")  # type: ignore[arg-type]


def test_history_holds_copies_of_the_messages() -> None:
    turns = [{"question": "2+2?", "answer": "4"}]
    history = sio.History(messages=turns)
    turns[0]["answer"] = "5"
    assert history.messages == [{"question": "2+2?", "answer": "4"}]
    assert len(history) == 1
    assert history == sio.History([{"question": "2+2?", "answer": "4"}])
    assert repr(history) == "History(messages=[{'question': '2+2?', 'answer': '4'}])"


def test_history_is_immutable() -> None:
    history = sio.History()
    with pytest.raises(AttributeError, match="immutable"):
        history.messages = []  # type: ignore[misc]


def test_history_rejects_bad_messages() -> None:
    with pytest.raises(TypeError, match="message 1 must be a dict"):
        sio.History([{"q": 1}, "hello"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of dicts"):
        sio.History("hello")  # type: ignore[arg-type]


def test_history_coerce() -> None:
    turns = [{"q": "x"}]
    assert sio.History.coerce(sio.History(turns)) == sio.History(turns)
    assert sio.History.coerce({"messages": turns}) == sio.History(turns)
    assert sio.History.coerce(turns) == sio.History(turns)
    assert sio.History.coerce(None) == sio.History()
    with pytest.raises(TypeError, match="exactly one key"):
        sio.History.coerce({"turns": turns})


def test_history_as_a_field_type() -> None:
    sig = sio.Signature("question, history: History -> answer")
    assert sig.input_fields["history"].annotation is sio.History
