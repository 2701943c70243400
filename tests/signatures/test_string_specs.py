"""String specs: ``"context: list[str], question -> answer: int"``."""

from __future__ import annotations

import datetime
import typing
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from pydantic import BaseModel

import structio as sio


class Patient(BaseModel):
    name: str


def types_of(spec: str, **kwargs: Any) -> dict[str, Any]:
    sig = sio.Signature(spec, **kwargs)
    return {name: field.annotation for name, field in sig.fields.items()}


def test_basic_spec() -> None:
    sig = sio.Signature("context: list[str], question -> answer: int", "Answer.")
    assert sig.__name__ == "StringSignature"
    assert sig.signature == "context, question -> answer"
    assert sig.instructions == "Answer."
    assert types_of("context: list[str], question -> answer: int") == {
        "context": list[str],
        "question": str,
        "answer": int,
    }


def test_default_instructions_for_a_spec() -> None:
    sig = sio.Signature("context, question -> answer")
    assert (
        sig.instructions == "Given the fields `context`, `question`, produce the fields `answer`."
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("list[str]", list[str]),
        ("dict[str, list[int]]", dict[str, list[int]]),
        ("tuple[int, ...]", tuple[int, ...]),
        ("tuple[int, str]", tuple[int, str]),
        ("set[str]", set[str]),
        ("Literal['a', 'b']", Literal["a", "b"]),
        ("Literal[1, 2, -3]", Literal[1, 2, -3]),
        ("Optional[int]", Optional[int]),  # noqa: UP045 - the spelling under test
        ("Union[int, str]", Union[int, str]),  # noqa: UP007 - the spelling under test
        ("int | None", Optional[int]),  # noqa: UP045
        ("List[str]", typing.List[str]),  # noqa: UP006 - the spelling under test
        ("Dict[str, Any]", typing.Dict[str, Any]),  # noqa: UP006
        ("Any", Any),
        ("bool", bool),
        ("float", float),
        ("bytes", bytes),
        ("datetime.date", datetime.date),
        ("History", sio.History),
    ],
)
def test_type_names_resolve(text: str, expected: Any) -> None:
    assert types_of(f"q -> a: {text}")["a"] == expected


def test_annotated_with_field_constraints() -> None:
    annotation = types_of("q -> a: Annotated[int, Field(gt=0)]")["a"]
    assert typing.get_origin(annotation) is Annotated
    assert typing.get_args(annotation)[0] is int
    assert sio.ChatAdapter().parse(
        sio.Signature("q -> a: Annotated[int, Field(gt=0)]"), "[[ ## a ## ]]\n3"
    ) == {"a": 3}
    with pytest.raises(sio.ParseError, match="greater than 0"):
        sio.ChatAdapter().parse(
            sio.Signature("q -> a: Annotated[int, Field(gt=0)]"), "[[ ## a ## ]]\n-3"
        )


def test_custom_types() -> None:
    sig = sio.Signature("note -> patient: Patient", custom_types={"Patient": Patient})
    assert sig.output_fields["patient"].annotation is Patient


def test_names_from_the_calling_scope_resolve() -> None:
    class Local(BaseModel):
        x: int

    sig = sio.Signature("q -> a: Local, b: list[Patient]")
    assert sig.output_fields["a"].annotation is Local
    assert sig.output_fields["b"].annotation == list[Patient]


def test_custom_types_win_over_the_calling_scope() -> None:
    class Other(BaseModel):
        y: int

    sig = sio.Signature("q -> a: Patient", custom_types={"Patient": Other})
    assert sig.output_fields["a"].annotation is Other


def test_whitespace_around_names_is_ignored() -> None:
    sig = sio.Signature("  a ,b  ->  c  ")
    assert sig.signature == "a, b -> c"


def test_an_empty_input_side_is_allowed() -> None:
    sig = sio.Signature(" -> c")
    assert (list(sig.input_fields), list(sig.output_fields)) == ([], ["c"])


@pytest.mark.parametrize("spec", ["a ->", "question -> ", "a, b ->   "])
def test_a_spec_without_outputs_is_refused_at_declaration(spec: str) -> None:
    # Every call would fail, blaming the model: say so where the spec is written.
    with pytest.raises(sio.SignatureError, match=r"it has no outputs.*'question -> answer'"):
        sio.Signature(spec)


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ("question, -> answer", "after the last comma in the inputs"),
        ("q -> a,", "after the last comma in the outputs"),
        (", q -> a", "before the first comma in the inputs"),
        ("q -> a,, b", "between commas in the outputs"),
    ],
)
def test_an_empty_field_name_is_refused(spec: str, where: str) -> None:
    with pytest.raises(sio.SignatureError) as info:
        sio.Signature(spec)
    assert f"empty field name {where}" in str(info.value)
    assert "remove the comma" in str(info.value)


def test_defaults_are_kept() -> None:
    sig = sio.Signature("q: int = 3, tag: str = 'x' -> a")
    assert sig.input_fields["q"].default == 3
    assert sig.input_fields["tag"].default == "x"
    assert not sig.input_fields["q"].required


def test_commas_and_arrows_inside_brackets_and_strings() -> None:
    sig = sio.Signature("q -> a: Literal['x, y', 'p->q'], b: dict[str, int]")
    assert sig.output_fields["a"].annotation == Literal["x, y", "p->q"]
    assert sig.signature == "q -> a, b"


def test_make_signature_from_a_dict() -> None:
    sig = sio.make_signature(
        {"q": (str, sio.InputField()), "a": (int, sio.OutputField(desc="a number"))},
        instructions="Compute.",
        name="Dyn",
    )
    assert sig.__name__ == "Dyn"
    assert sig.instructions == "Compute."
    assert sig.output_fields["a"].annotation is int
    assert sig.output_fields["a"].desc == "a number"


def test_make_signature_bare_fields_and_type_text() -> None:
    sig = sio.make_signature({"q": sio.InputField(), "a": ("list[int]", sio.OutputField())})
    assert sig.input_fields["q"].annotation is str
    assert sig.output_fields["a"].annotation == list[int]
    assert sig.instructions == "Given the fields `q`, produce the fields `a`."


def test_make_signature_accepts_a_spec() -> None:
    assert sio.make_signature("q -> a: int") == sio.Signature("q -> a: int")


def test_signature_from_a_dict_via_the_class() -> None:
    sig = sio.Signature({"q": (str, sio.InputField()), "a": (int, sio.OutputField())})
    assert sig.signature == "q -> a"


def test_reusing_one_field_object_in_two_signatures() -> None:
    shared = sio.OutputField(desc="shared")
    one = sio.make_signature({"q": sio.InputField(), "a": (int, shared)})
    two = sio.make_signature({"q": sio.InputField(), "b": (str, shared)})
    assert one.output_fields["a"].name == "a"
    assert two.output_fields["b"].name == "b"
    assert one.output_fields["a"].annotation is int
