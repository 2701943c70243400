"""What DSPy code expects of a signature: ValueError for bad declarations, equals, instances."""

from __future__ import annotations

import pytest

import structio as sio


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()
    note: str = sio.OutputField(default="none")


@pytest.mark.parametrize(
    "spec",
    ["question -> question", "", "context: Bogus -> answer", "a, a -> b"],
)
def test_a_wrong_declaration_is_a_value_error_as_in_dspy(spec: str) -> None:
    with pytest.raises(ValueError, match="StringSignature") as caught:
        sio.Signature(spec)
    assert isinstance(caught.value, sio.SignatureError)
    assert isinstance(caught.value, TypeError)  # as before: both builtins


def test_equals_is_structural_equality() -> None:
    made = sio.Signature("question: str -> answer: int, note: str", "Answer the question.")
    assert QA.equals(QA)
    assert not QA.equals(made)  # `note` has a default in QA only
    same = sio.Signature("a -> b", "Do it.", name="One")
    assert same.equals(sio.Signature("a -> b", "Do it.", name="Two"))
    assert not same.equals(sio.Signature("a -> b", "Do it differently."))
    assert not same.equals("a -> b")


def test_a_signature_called_with_field_values_holds_them() -> None:
    held = QA(question="2+2?", answer=4)
    assert (held.question, held.answer, held.note) == ("2+2?", 4, "none")
    assert isinstance(held, QA)
    assert repr(held) == "QA(question='2+2?', answer=4, note='none')"
    assert QA(question="q", answer=1, note="n").note == "n"


def test_field_values_must_name_fields_and_fill_those_without_defaults() -> None:
    with pytest.raises(sio.FormatError, match=r"missing: `answer`"):
        QA(question="q")
    with pytest.raises(sio.FormatError, match=r"`answr` is not a field of QA"):
        QA(question="q", answr=1)
    with pytest.raises(TypeError, match=r"pass them by name"):
        QA("question -> answer")


def test_the_base_class_still_builds_signatures_and_is_not_instantiated() -> None:
    built = sio.Signature("q -> a: int", "Do.", name="Built")
    assert built.__name__ == "Built"
    assert list(built.output_fields) == ["a"]
    with pytest.raises(TypeError, match="is not instantiated"):
        sio.Signature()
