"""Manipulation methods: each returns a new signature and leaves the original unchanged."""

from __future__ import annotations

import pytest

import structio as sio


class QA(sio.Signature):
    """Answer the question."""

    context: list[str] = sio.InputField(desc="passages")
    question: str = sio.InputField()
    answer: int = sio.OutputField(ge=0)


SNAPSHOT = (QA.instructions, list(QA.fields.items()))


@pytest.fixture(autouse=True)
def original_is_never_mutated() -> object:
    yield None
    assert (QA.instructions, list(QA.fields.items())) == SNAPSHOT


def test_with_instructions() -> None:
    new = QA.with_instructions("Be terse.")
    assert new is not QA
    assert new.instructions == "Be terse."
    assert list(new.fields.items()) == list(QA.fields.items())
    assert new.__name__ == "QA"


def test_append_instructions() -> None:
    assert QA.append_instructions("Cite.").instructions == "Answer the question.\n\nCite."


def test_with_updated_fields_desc_type_and_constraints() -> None:
    new = QA.with_updated_fields("answer", type_=float, desc="a score", le=1.0)
    field = new.output_fields["answer"]
    assert field.annotation is float
    assert field.desc == "a score"
    assert dict(field.constraints) == {"ge": 0, "le": 1.0}
    removed = new.with_updated_fields("answer", ge=None)
    assert dict(removed.output_fields["answer"].constraints) == {"le": 1.0}


def test_with_updated_fields_unknown_name_or_attribute() -> None:
    with pytest.raises(
        sio.SignatureError, match=r"`answr` is not a field of QA \(did you mean `answer`\?\)"
    ):
        QA.with_updated_fields("answr", desc="x")
    with pytest.raises(sio.SignatureError, match="colour"):
        QA.with_updated_fields("answer", colour="red")


def test_prepend_output_is_chain_of_thought() -> None:
    cot = QA.prepend("reasoning", sio.OutputField(), type_=str)
    assert list(cot.output_fields) == ["reasoning", "answer"]
    assert list(cot.input_fields) == ["context", "question"]
    assert cot.instructions == QA.instructions


def test_append_and_insert_inputs() -> None:
    appended = QA.append("hint", sio.InputField())
    assert list(appended.input_fields) == ["context", "question", "hint"]
    inserted = QA.insert(1, "hint", sio.InputField(), type_=int)
    assert list(inserted.input_fields) == ["context", "hint", "question"]
    assert inserted.input_fields["hint"].annotation is int
    assert QA.insert(-2, "x", sio.InputField()).signature == "context, x, question -> answer"


def test_insert_type_defaults() -> None:
    assert QA.append("x", sio.OutputField()).output_fields["x"].annotation is str
    typed = QA.output_fields["answer"]
    assert QA.append("copy", typed).output_fields["copy"].annotation is int


def test_insert_index_out_of_range() -> None:
    with pytest.raises(IndexError, match=r"\[-3, 2\]"):
        QA.insert(5, "x", sio.InputField())
    with pytest.raises(IndexError):
        QA.insert(-4, "x", sio.InputField())


def test_insert_existing_name_is_an_error() -> None:
    with pytest.raises(sio.SignatureError, match="`answer` already exists"):
        QA.append("answer", sio.InputField())


def test_insert_needs_a_signature_field() -> None:
    with pytest.raises(sio.SignatureError, match="InputField"):
        QA.append("x", "not a field")  # type: ignore[arg-type]


def test_delete() -> None:
    smaller = QA.delete("context")
    assert smaller.signature == "question -> answer"
    with pytest.raises(sio.SignatureError, match="`contxt` is not a field of QA"):
        QA.delete("contxt")  # close to a field: a typo
    # Close to none: nothing to delete, as DSPy documents.
    assert QA.delete("nope").signature == QA.signature


def test_manipulations_chain() -> None:
    chained = (
        QA.delete("context")
        .prepend("reasoning", sio.OutputField())
        .with_instructions("Think, then answer.")
    )
    assert chained.signature == "question -> reasoning, answer"
    assert chained.instructions == "Think, then answer."


def test_string_signature_keeps_its_default_instructions_after_changes() -> None:
    sig = sio.Signature("q -> a")
    assert sig.append("b", sio.OutputField()).instructions == (
        "Given the fields `q`, produce the fields `a`."
    )
