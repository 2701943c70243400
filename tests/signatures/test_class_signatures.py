"""Class-based signatures: fields, types, instructions, inheritance, equality and repr."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pytest

import structio as sio
from structio.signatures import MISSING


class Triage(sio.Signature):
    """Route a support ticket.

    Be brief."""

    ticket: str = sio.InputField(desc="raw ticket text")
    customer = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)
    note: str | None = sio.OutputField(default=None)


def test_fields_keep_declaration_order_with_inputs_first() -> None:
    assert list(Triage.input_fields) == ["ticket", "customer"]
    assert list(Triage.output_fields) == ["category", "urgency", "note"]
    assert list(Triage.fields) == ["ticket", "customer", "category", "urgency", "note"]
    assert Triage.signature == "ticket, customer -> category, urgency, note"


def test_field_attributes_are_bound() -> None:
    urgency = Triage.output_fields["urgency"]
    assert urgency.name == "urgency"
    assert urgency.annotation is int
    assert urgency.kind == "output"
    assert urgency.desc == "1 (low) to 5 (high)"
    assert dict(urgency.constraints) == {"ge": 1, "le": 5}
    assert urgency.required
    note = Triage.output_fields["note"]
    assert note.default is None
    assert not note.required
    assert Triage.input_fields["ticket"].default is MISSING


def test_a_field_without_annotation_is_str() -> None:
    customer = Triage.input_fields["customer"]
    assert customer.annotation is str
    assert customer.type_given is False
    assert Triage.input_fields["ticket"].type_given is True


def test_instructions_are_the_cleaned_docstring() -> None:
    assert Triage.instructions == "Route a support ticket.\n\nBe brief."


def test_default_instructions_name_the_fields() -> None:
    class NoDoc(sio.Signature):
        a: str = sio.InputField()
        b: int = sio.InputField()
        c: str = sio.OutputField()

    assert NoDoc.instructions == "Given the fields `a`, `b`, produce the fields `c`."


def test_default_instructions_with_no_inputs() -> None:
    class OnlyOutput(sio.Signature):
        c: str = sio.OutputField()

    assert OnlyOutput.instructions == "Given the fields , produce the fields `c`."


def test_subclass_adds_fields_after_the_base_and_inherits_instructions() -> None:
    class Detailed(Triage):
        reason: str = sio.OutputField()

    assert list(Detailed.output_fields) == ["category", "urgency", "note", "reason"]
    assert Detailed.instructions == Triage.instructions
    assert list(Triage.output_fields) == ["category", "urgency", "note"]  # base unchanged


def test_subclass_can_redeclare_a_field() -> None:
    class Looser(Triage):
        urgency: int = sio.OutputField(desc="any number")

    assert Looser.output_fields["urgency"].desc == "any number"
    assert list(Looser.output_fields) == ["category", "urgency", "note"]


def test_subclass_without_docstring_of_a_docless_base_gets_default_instructions() -> None:
    class Base(sio.Signature):
        q: str = sio.InputField()

    class Child(Base):
        a: str = sio.OutputField()

    assert Child.instructions == "Given the fields `q`, produce the fields `a`."


def test_classvars_private_attributes_and_methods_are_allowed() -> None:
    class WithExtras(sio.Signature):
        """Doc."""

        LIMIT: ClassVar[int] = 3
        _cache: dict[str, Any] = {}  # noqa: RUF012 - a private class attribute, not a field
        q: str = sio.InputField()
        a: str = sio.OutputField()

        @classmethod
        def describe(cls) -> str:
            return cls.signature

    assert WithExtras.LIMIT == 3
    assert WithExtras.describe() == "q -> a"
    assert list(WithExtras.fields) == ["q", "a"]


def test_a_signature_without_its_field_values_holds_nothing() -> None:
    # Called, a signature with fields holds their values (as in DSPy): all are needed.
    with pytest.raises(sio.FormatError, match="needs a value for every field"):
        Triage()


def test_field_values_are_not_class_attributes() -> None:
    assert "ticket" not in vars(Triage)


def test_equal_signatures_compare_and_hash_equal() -> None:
    one = sio.Signature("question: str -> answer: int", "Answer.")
    two = sio.Signature("question -> answer: int", "Answer.")
    assert one is not two
    assert one == two
    assert hash(one) == hash(two)
    assert len({one, two}) == 1


@pytest.mark.parametrize(
    "other",
    [
        "question -> answer: str",  # another type
        "question -> response: int",  # another name
        "query -> answer: int",
    ],
)
def test_signatures_differing_in_type_or_name_are_not_equal(other: str) -> None:
    assert sio.Signature("question -> answer: int", "Answer.") != sio.Signature(other, "Answer.")


def test_signatures_differing_in_instructions_or_description_are_not_equal() -> None:
    base = sio.Signature("question -> answer", "Answer.")
    assert base != base.with_instructions("Answer briefly.")
    assert base != base.with_updated_fields("answer", desc="short")


def test_class_and_string_signature_can_be_equal() -> None:
    class QA(sio.Signature):
        """Answer."""

        question: str = sio.InputField()
        answer: int = sio.OutputField()

    assert sio.Signature("question -> answer: int", "Answer.") == QA


def test_repr_shows_fields_and_types() -> None:
    text = repr(Triage)
    assert text.startswith("Triage(ticket: str, customer: str -> ")
    assert "category: Literal['billing', 'bug', 'other']" in text
    assert "urgency: int" in text
    assert "note: Union[str, NoneType]" in text
    assert "Route a support ticket." in text


def test_properties_are_read_only() -> None:
    with pytest.raises(AttributeError):
        Triage.instructions = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Triage.input_fields["x"] = Triage.input_fields["ticket"]  # type: ignore[index]


def test_prefix_and_description_aliases() -> None:
    class Aliases(sio.Signature):
        q: str = sio.InputField(description="the question", prefix="Question:")
        a: str = sio.OutputField(desc="${a}")

    assert Aliases.input_fields["q"].desc == "the question"
    assert Aliases.input_fields["q"].prefix == "Question:"
    assert Aliases.output_fields["a"].desc is None  # DSPy's placeholder is no description


def test_default_factory() -> None:
    class Tags(sio.Signature):
        q: str = sio.InputField()
        tags: list[str] = sio.OutputField(default_factory=list)

    field = Tags.output_fields["tags"]
    assert field.get_default() == []
    assert field.get_default() is not field.get_default()
