"""`Example`: DSPy's record of data, with its inputs marked."""

from __future__ import annotations

import copy
import pickle

import pytest

import structio as sio


def test_reads_as_a_dict_and_by_attribute() -> None:
    ex = sio.Example(question="2+2?", answer="4")
    assert ex.question == ex["question"] == "2+2?"
    assert ex.keys() == ["question", "answer"]
    assert ex.values() == ["2+2?", "4"]
    assert ex.items() == [("question", "2+2?"), ("answer", "4")]
    assert ex.get("city", "none") == "none"
    assert "answer" in ex
    assert "city" not in ex
    assert len(ex) == 2
    assert list(ex) == ["question", "answer"]
    assert dict(ex) == {"question": "2+2?", "answer": "4"}
    assert {**ex} == {"question": "2+2?", "answer": "4"}
    with pytest.raises(AttributeError, match="no value 'city'; its keys: question, answer"):
        _ = ex.city


def test_writes_by_attribute_and_key() -> None:
    ex = sio.Example({"a": 1}, b=2)
    ex.c = 3
    ex["d"] = 4
    del ex["a"]
    del ex.b
    assert ex.toDict() == {"c": 3, "d": 4}


def test_inputs_and_labels() -> None:
    ex = sio.Example(question="2+2?", context="math", answer="4").with_inputs("question", "context")
    assert ex.inputs().toDict() == {"question": "2+2?", "context": "math"}
    assert ex.inputs().input_keys == {"question", "context"}
    assert ex.labels().toDict() == {"answer": "4"}
    assert ex.labels().input_keys is None
    assert ex.input_keys == frozenset({"question", "context"})


def test_with_inputs_returns_a_copy() -> None:
    plain = sio.Example(question="q", answer="a")
    marked = plain.with_inputs("question")
    assert plain.input_keys is None
    marked.answer = "changed"
    assert plain.answer == "a"


def test_inputs_without_marks_is_an_error_that_says_what_to_do() -> None:
    ex = sio.Example(question="q", answer="a")
    with pytest.raises(sio.FormatError, match=r"call \.with_inputs\(\.\.\.\)"):
        ex.inputs()
    with pytest.raises(ValueError, match="with_inputs"):  # DSPy raises ValueError too
        ex.labels()


def test_with_inputs_refuses_a_name_it_does_not_hold() -> None:
    with pytest.raises(sio.FormatError, match="'questoin' is not a key of the example"):
        sio.Example(question="q").with_inputs("questoin")


def test_copy_and_without_keep_the_marks() -> None:
    ex = sio.Example(question="q", answer="a", source="web").with_inputs("question")
    changed = ex.copy(answer="b")
    assert changed.answer == "b"
    assert ex.answer == "a"
    assert changed.inputs().toDict() == {"question": "q"}
    smaller = ex.without("source")
    assert smaller.toDict() == {"question": "q", "answer": "a"}
    assert smaller.input_keys == {"question"}
    assert sio.Example(ex).input_keys == {"question"}
    with pytest.raises(KeyError):
        ex.without("missing")


def test_equality_and_hash() -> None:
    one = sio.Example(a=1, b="x")
    assert one == sio.Example(a=1, b="x")
    assert one == sio.Example(a=1, b="x").with_inputs("a")  # values decide, as in DSPy
    assert one != sio.Example(a=2, b="x")
    assert one == {"a": 1, "b": "x"}
    assert one == sio.Prediction(a=1, b="x")
    assert sio.Prediction(a=1, b="x") == one
    assert len({one, sio.Example(a=1, b="x")}) == 1


def test_to_dict_turns_nested_examples_and_models_into_dicts() -> None:
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int

    inner = sio.Example(x=1)
    ex = sio.Example(inner=inner, items=[inner], point=Point(x=2), by_name={"p": Point(x=3)})
    assert ex.toDict() == {
        "inner": {"x": 1},
        "items": [{"x": 1}],
        "point": {"x": 2},
        "by_name": {"p": {"x": 3}},
    }
    assert ex.to_dict() == ex.toDict()


def test_repr_is_dspys() -> None:
    assert repr(sio.Example(a=1)) == "Example({'a': 1}) (input_keys=None)"
    assert repr(sio.Example(a=1).with_inputs("a")) == "Example({'a': 1}) (input_keys={'a'})"


@pytest.mark.parametrize(
    "copier",
    [lambda e: pickle.loads(pickle.dumps(e)), copy.deepcopy],  # noqa: S301 - our own bytes
)
def test_pickles_and_copies_with_its_marks(copier: object) -> None:
    ex = sio.Example(question="q", answer="a").with_inputs("question")
    again = copier(ex)  # type: ignore[operator]
    assert again == ex
    assert again.input_keys == {"question"}
    assert again.inputs().toDict() == {"question": "q"}


def test_is_a_mapping_for_code_that_checks() -> None:
    from collections.abc import Mapping, MutableMapping

    assert isinstance(sio.Example(a=1), Mapping)
    assert isinstance(sio.Example(a=1), MutableMapping)


def test_takes_only_a_mapping_or_keywords() -> None:
    with pytest.raises(TypeError, match="not list"):
        sio.Example([("a", 1)])  # type: ignore[arg-type]
