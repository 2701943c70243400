"""DSPy's field prefixes: `infer_prefix`, ``prefix=`` and ``field.json_schema_extra``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import structio as sio
from structio.signatures import infer_prefix

# Names and the prefixes DSPy 3.4.1's own infer_prefix gives them (hand-picked names and
# hypothesis-drawn identifiers); regenerate with make_dspy_prefix_pairs.py.
PAIRS_FILE = Path(__file__).with_name("dspy_infer_prefix.json")


def test_infer_prefix_matches_dspy_on_every_recorded_name() -> None:
    data = json.loads(PAIRS_FILE.read_text(encoding="utf-8"))
    assert data["source"].startswith("dspy 3.4.1")
    pairs = data["pairs"]
    assert len(pairs) > 2000
    wrong = [(name, dspy, infer_prefix(name)) for name, dspy in pairs if infer_prefix(name) != dspy]
    assert wrong == []


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("question", "Question"),
        ("some_name", "Some Name"),
        ("camelCaseText", "Camel Case Text"),
        ("text2number", "Text 2 Number"),
        ("HTMLParser", "HTML Parser"),
        ("parseHTMLString", "Parse HTML String"),
        ("userID", "User ID"),
        ("_private", " Private"),
        ("x\nYz", "X\nyz"),  # DSPy splits no word after a line break
    ],
)
def test_infer_prefix_examples(name: str, prefix: str) -> None:
    assert infer_prefix(name) == prefix


@given(st.from_regex(r"[a-z]+(_[a-z]+)*", fullmatch=True))
def test_snake_case_names_become_capitalised_words(name: str) -> None:
    assert infer_prefix(name) == " ".join(word.capitalize() for word in name.split("_"))


@given(st.from_regex(r"[A-Z]{2,5}", fullmatch=True), st.from_regex(r"[a-z]{2,6}", fullmatch=True))
def test_an_acronym_before_a_word_is_kept(acronym: str, word: str) -> None:
    # "HTMLParser": the acronym ends where the capitalised word begins.
    assert infer_prefix(acronym + word.capitalize()) == f"{acronym} {word.capitalize()}"


class Triage(sio.Signature):
    """Route a ticket."""

    ticketText: str = sio.InputField(desc="the ticket", min_length=1)  # noqa: N815 - DSPy-style
    customer_id: int = sio.InputField()
    category: str = sio.OutputField(description="where it goes")
    urgency: int = sio.OutputField(prefix="How Urgent:", ge=1, le=5)


def test_json_schema_extra_is_dspys() -> None:
    # As DSPy 3.4.1 gives them for the same declarations.
    extras = {name: field.json_schema_extra for name, field in Triage.fields.items()}
    assert extras == {
        "ticketText": {
            "desc": "the ticket",
            "__dspy_field_type": "input",
            "constraints": "minimum length: 1",
            "prefix": "Ticket Text:",
        },
        "customer_id": {
            "__dspy_field_type": "input",
            "prefix": "Customer Id:",
            "desc": "${customer_id}",
        },
        "category": {"__dspy_field_type": "output", "desc": "where it goes", "prefix": "Category:"},
        "urgency": {
            "__dspy_field_type": "output",
            "constraints": "greater than or equal to: 1, less than or equal to: 5",
            "prefix": "How Urgent:",
            "desc": "${urgency}",
        },
    }
    spec = sio.Signature("a, b: int -> c")
    assert {n: f.json_schema_extra for n, f in spec.fields.items()} == {
        "a": {
            "IS_TYPE_UNDEFINED": True,
            "__dspy_field_type": "input",
            "prefix": "A:",
            "desc": "${a}",
        },
        "b": {"__dspy_field_type": "input", "prefix": "B:", "desc": "${b}"},
        "c": {"__dspy_field_type": "output", "prefix": "C:", "desc": "${c}"},
    }
    # A field not yet in a signature has no name to infer from, as in DSPy.
    assert sio.InputField().json_schema_extra == {"__dspy_field_type": "input"}
    assert sio.OutputField(prefix="P:").json_schema_extra == {
        "__dspy_field_type": "output",
        "prefix": "P:",
    }


def test_json_schema_extra_is_a_copy() -> None:
    extra = Triage.fields["category"].json_schema_extra
    extra["prefix"] = "Changed:"
    assert Triage.fields["category"].json_schema_extra["prefix"] == "Category:"


def test_prefix_is_stored_updated_saved_and_pickled() -> None:
    field = Triage.fields["urgency"]
    assert field.prefix == "How Urgent:"
    assert Triage.fields["category"].prefix is None  # inferred, never stored
    updated = Triage.with_updated_fields("category", prefix="Route:")
    assert updated.fields["category"].json_schema_extra["prefix"] == "Route:"
    assert updated.fields["category"].desc == "where it goes"
    loaded = sio.Signature.from_dict(updated.to_dict())
    assert loaded.fields["category"].prefix == "Route:"
    assert loaded.fields["urgency"].prefix == "How Urgent:"
    copied = pickle.loads(pickle.dumps(field))  # noqa: S301 - the test's own bytes
    assert copied.prefix == "How Urgent:"
    assert copied.json_schema_extra == field.json_schema_extra


def test_prefix_must_be_text() -> None:
    with pytest.raises(TypeError, match="prefix= must be a string, not int"):
        sio.InputField(prefix=3)


def test_a_prefix_never_changes_the_prompt() -> None:
    plain = sio.Signature("question -> answer: int", "Answer.")
    labelled = plain.with_updated_fields("question", prefix="Q:").with_updated_fields(
        "answer", prefix="The Answer:"
    )
    assert labelled.fields["answer"].prefix == "The Answer:"
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        assert adapter.format(labelled, [], {"question": "2+2?"}) == adapter.format(
            plain, [], {"question": "2+2?"}
        )
