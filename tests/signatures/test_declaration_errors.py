"""Bad declarations fail at class creation with a SignatureError naming class and field."""

from __future__ import annotations

import pytest
from pydantic import Field

import structio as sio


def test_signature_error_is_a_type_error() -> None:
    assert issubclass(sio.SignatureError, TypeError)
    assert issubclass(sio.SignatureError, sio.UsageError)


def test_annotation_without_a_field() -> None:
    with pytest.raises(sio.SignatureError) as info:

        class Bad(sio.Signature):
            q: str
            a: str = sio.OutputField()

    message = str(info.value)
    assert "`q`" in message
    assert "Bad" in message
    assert "InputField()" in message


def test_annotated_plain_value() -> None:
    with pytest.raises(sio.SignatureError, match=r"field `z` in Bad .*found 3"):

        class Bad(sio.Signature):
            z: int = 3


def test_plain_class_attribute() -> None:
    with pytest.raises(sio.SignatureError, match=r"class attribute `x` in Bad"):

        class Bad(sio.Signature):
            x = 5


def test_pydantic_field_is_not_a_signature_field() -> None:
    with pytest.raises(sio.SignatureError, match="pydantic's Field"):

        class Bad(sio.Signature):
            x = Field(default=1)


def test_underscore_field_name() -> None:
    with pytest.raises(sio.SignatureError, match="'_q' is not a valid field name"):

        class Bad(sio.Signature):
            _q: str = sio.InputField()


def test_annotation_that_is_not_a_type() -> None:
    with pytest.raises(sio.SignatureError, match=r"field `q` in Bad .*not a type"):

        class Bad(sio.Signature):
            q: 3 = sio.InputField()  # type: ignore[valid-type]


def test_constraints_that_cannot_apply() -> None:
    with pytest.raises(
        sio.SignatureError, match=r"field `name` in Bad: constraints ge need a number"
    ):

        class Bad(sio.Signature):
            name: str = sio.OutputField(ge=1)

    with pytest.raises(sio.SignatureError, match=r"max_length need a string or collection"):

        class Bad2(sio.Signature):
            n: int = sio.OutputField(max_length=3)


def test_unknown_constraint_keyword() -> None:
    with pytest.raises(TypeError, match="OutputField\\(\\) got unexpected keyword argument"):
        sio.OutputField(maximum=3)  # type: ignore[call-arg]


def test_default_and_default_factory_together() -> None:
    with pytest.raises(TypeError, match="not both"):
        sio.OutputField(default=1, default_factory=int)


def test_same_name_as_input_and_output() -> None:
    with pytest.raises(sio.SignatureError, match="`q` is used as both an input and an output"):
        sio.Signature("q -> q")


def test_same_name_twice_on_one_side() -> None:
    with pytest.raises(sio.SignatureError, match="`a` is declared twice"):
        sio.Signature("a, a -> b")


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("a b -> c", "unexpected token 'b'"),
        ("a -> b -> c", "exactly one '->'"),
        ("a, b", "exactly one '->'"),
        ("a,, b -> c", "empty field"),
        ("a: -> c", "has ':' but no type"),
        ("a: list[str -> c", "unclosed '[' opened at character 7"),
        ("a: list[str]] -> c", "unexpected ']' at character 12"),
        ("a: Literal['x] -> c", "unclosed quote"),
        ("a: Literal[x y] -> c", "invalid type"),
        ("1a -> c", "'1a' is not a field name"),
        ("class -> c", "'class' is not a field name"),
        ("a: int = foo -> c", "not a Python literal"),
        ("a: 3 -> c", "constant is only allowed"),
    ],
)
def test_malformed_specs_say_which_token(spec: str, fragment: str) -> None:
    with pytest.raises(sio.SignatureError) as info:
        sio.Signature(spec)
    assert fragment in str(info.value)
    assert "StringSignature" in str(info.value)


def test_unknown_type_name_says_how_to_pass_it() -> None:
    with pytest.raises(sio.SignatureError) as info:
        sio.Signature("note -> patient: Pateint")
    message = str(info.value)
    assert "unknown type name `Pateint`" in message
    assert "field `patient`" in message
    assert "custom_types={'Pateint': Pateint}" in message


def test_unknown_dotted_type_name() -> None:
    with pytest.raises(sio.SignatureError, match=r"unknown type name `nomodule\.Thing`"):
        sio.Signature("q -> a: nomodule.Thing")
    with pytest.raises(sio.SignatureError, match="`Nope` not found"):
        sio.Signature("q -> a: datetime.Nope")


def test_spec_must_be_text_or_dict() -> None:
    with pytest.raises(sio.SignatureError, match="string spec or a dict"):
        sio.Signature(42)  # type: ignore[arg-type]


def test_make_signature_bad_values() -> None:
    with pytest.raises(sio.SignatureError, match="field `q` must be given as"):
        sio.make_signature({"q": str})
    with pytest.raises(sio.SignatureError, match="not a Python identifier"):
        sio.make_signature({"q": sio.InputField()}, name="not valid")
    with pytest.raises(sio.SignatureError, match=r"instructions .* must be a string"):
        sio.make_signature({"q": sio.InputField()}, instructions=3)  # type: ignore[arg-type]


def test_building_from_a_signature_that_has_fields() -> None:
    qa = sio.Signature("q -> a")
    with pytest.raises(TypeError, match="already has fields"):
        qa("x -> y")
