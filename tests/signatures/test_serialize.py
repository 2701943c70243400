"""Signature.to_dict / from_dict: types as text, user classes as module:QualName, equal back."""

from __future__ import annotations

import datetime
import enum
import json
from typing import Annotated, Any, Literal, Optional, Union

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio._util.refs import ImportPolicy
from structio.rendering.formatting import NumberedList
from structio.signatures._serialize import type_from_text, type_to_text


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Patient(pydantic.BaseModel):
    name: str
    born: datetime.date | None = None


class Outer:
    class Inner(pydantic.BaseModel):
        x: int


class Everything(sio.Signature):
    """Read the chart: carefully.

    Two paragraphs of instructions survive too."""

    notes: list[str] = sio.InputField(desc="what the nurse wrote")
    age: Optional[int] = sio.InputField(default=40)  # noqa: UP045 - the typing spelling is tested
    patients: dict[str, list[Patient]] = sio.InputField()
    history: sio.History = sio.InputField()
    label: Literal["a:b", "it's", 1, True] = sio.OutputField()
    colour: Colour = sio.OutputField(default=Colour.BLUE)
    when: datetime.date | None = sio.OutputField()
    score: float = sio.OutputField(ge=0, le=1)
    steps: NumberedList[str] = sio.OutputField()
    inner: Outer.Inner = sio.OutputField()
    extra: Any = sio.OutputField()
    either: Union[int, str] = sio.OutputField()  # noqa: UP007 - the typing spelling is tested
    pair: tuple[int, ...] = sio.OutputField()


def test_round_trip_through_json_gives_an_equal_signature() -> None:
    data = Everything.to_dict()
    again = sio.Signature.from_dict(json.loads(json.dumps(data)))
    assert again == Everything
    assert again.__name__ == "Everything"
    assert again.fields["colour"].default is Colour.BLUE
    assert again.fields["score"].constraints == {"ge": 0, "le": 1}


def test_the_data_is_readable() -> None:
    types = {f["name"]: f["type"] for f in Everything.to_dict()["fields"]}
    assert types == {
        "notes": "list[str]",
        "age": "int | None",
        "patients": "dict[str, list[tests.signatures.test_serialize:Patient]]",
        "history": "structio:History",
        "label": "Literal['a:b', \"it's\", 1, True]",
        "colour": "tests.signatures.test_serialize:Colour",
        "when": "datetime:date | None",
        "score": "float",
        "steps": "structio:NumberedList[str]",
        "inner": "tests.signatures.test_serialize:Outer.Inner",
        "extra": "Any",
        "either": "int | str",
        "pair": "tuple[int, ...]",
    }
    data = Everything.to_dict()
    assert data["instructions"].startswith("Read the chart: carefully.")
    assert data["fields"][0] == {
        "name": "notes",
        "kind": "input",
        "type": "list[str]",
        "desc": "what the nurse wrote",
    }


def test_default_instructions_are_not_written() -> None:
    sig = sio.make_signature("question -> answer: int")
    data = sig.to_dict()
    assert data["instructions"] is None
    assert sio.Signature.from_dict(data) == sig


def test_unsavable_types_say_why() -> None:
    class Local(pydantic.BaseModel):
        x: int

    sig = sio.make_signature({"q": (Local, sio.InputField()), "a": (str, sio.OutputField())})
    with pytest.raises(sio.SignatureError, match="defined inside a function"):
        sig.to_dict()
    annotated = sio.make_signature(
        {"q": (Annotated[int, "meta"], sio.InputField()), "a": (str, sio.OutputField())}
    )
    with pytest.raises(sio.SignatureError, match="Annotated"):
        annotated.to_dict()


def test_unimportable_types_name_the_type() -> None:
    data = sio.make_signature("q -> a").to_dict()
    data["fields"][1]["type"] = "no_such_module_xyz:Thing"
    with pytest.raises(sio.SignatureError, match="'no_such_module_xyz:Thing' is not importable"):
        sio.Signature.from_dict(data, allowed_modules=["no_such_module_xyz"])
    data["fields"][1]["type"] = "datetime:NoSuchClass"
    with pytest.raises(sio.SignatureError, match="has no 'NoSuchClass'"):
        sio.Signature.from_dict(data)
    with pytest.raises(sio.SignatureError, match="list of 'fields'"):
        sio.Signature.from_dict({"name": "X"})


def test_a_class_of_the_saving_script_says_what_to_do() -> None:
    data = Everything.to_dict()
    data["name"] = "Chart"
    data["module"] = "__main__"  # saved by a script: its classes live in __main__
    data["fields"][2]["type"] = "dict[str, list[__main__:Patient]]"
    with pytest.raises(sio.SignatureError) as info:
        sio.Signature.from_dict(data)
    message = str(info.value)
    assert (
        "type '__main__:Patient' is not importable (module '__main__' has no 'Patient')" in message
    )
    assert "define Patient in a module that both programs import" in message
    assert "structio.Predict(Chart).load(path)" in message
    other = sio.make_signature("q -> a").to_dict()
    other["fields"][1]["type"] = "datetime:NoSuchClass"
    with pytest.raises(sio.SignatureError) as plain:
        sio.Signature.from_dict(other)
    assert "__main__" not in str(plain.value)  # the advice is for scripts' classes only


def test_types_given_by_name_are_used_and_nothing_is_imported_for_them() -> None:
    data = sio.make_signature("q -> a").to_dict()
    data["fields"][1]["type"] = "no_such_module_xyz:Thing"
    data["fields"][1]["desc"] = "the answer"
    sig = sio.Signature.from_dict(data, types={"a": Patient})
    assert sig.output_fields["a"].annotation is Patient
    assert sig.output_fields["a"].desc == "the answer"
    assert sig.input_fields["q"].annotation is str  # read from the data as before


@pytest.mark.parametrize(
    "annotation",
    [str, int, list[dict[str, float]], Literal["x", 2], Colour, datetime.datetime, set[int]],
)
def test_type_text_round_trips(annotation: Any) -> None:
    policy = ImportPolicy([__name__])
    assert type_from_text(type_to_text(annotation), policy=policy) == annotation


TYPES: list[Any] = [
    str,
    int,
    float,
    bool,
    list[str],
    dict[str, int],
    int | None,
    Literal["x", "y:z"],
    Colour,
    Patient,
    datetime.date,
    NumberedList[int],
    tuple[int, str],
    Any,
]
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@st.composite
def signatures(draw: st.DrawFn) -> type[sio.Signature]:
    names = draw(st.lists(NAMES, min_size=2, max_size=6, unique=True))
    cut = draw(st.integers(1, len(names) - 1))
    fields: dict[str, Any] = {}
    for index, name in enumerate(names):
        make = sio.InputField if index < cut else sio.OutputField
        annotation = draw(st.sampled_from(TYPES))
        options: dict[str, Any] = {"desc": draw(st.none() | st.text(max_size=20))}
        if annotation is int and draw(st.booleans()):
            options["ge"] = draw(st.integers(-5, 5))
        if annotation is str and draw(st.booleans()):
            options["default"] = draw(st.text(max_size=10))
        fields[name] = (annotation, make(**options))
    instructions = draw(st.none() | st.text(min_size=1, max_size=40))
    return sio.make_signature(fields, instructions, name=draw(st.sampled_from(["A", "QA"])))


@given(signatures())
@settings(max_examples=150, deadline=None)
def test_signatures_round_trip(sig: type[sio.Signature]) -> None:
    again = sio.Signature.from_dict(json.loads(json.dumps(sig.to_dict())))
    assert again == sig
    assert again.to_dict() == sig.to_dict()


def test_files_naming_structio_classes_by_an_old_module_path_still_load() -> None:
    # Files written before the re-layering name structio's classes by their old modules.
    assert type_from_text("structio.formatting:NumberedList[str]") == sio.NumberedList[str]
    assert type_from_text("structio.signatures.history:History") is sio.History
