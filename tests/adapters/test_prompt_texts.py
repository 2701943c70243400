"""The prompt's own text copied into a value: its hint set aside, its placeholder no value.

Real completions of a small model (Qwen2.5-Coder-1.5B) copied the type note of the JSON
skeleton into a label, and kept the ``...`` of an XML structure in an optional element.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structio as sio
from structio.parsing.found import PromptText
from tests.parsing.streaming import check, pieces, stream

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

REAL_JSON = (
    '{"sentiment": "negative         # note: the value you produce must exactly match (no extra'
    ' characters) one of: positive; negative"}'
)


class Sentiment(sio.Signature):
    """Classify the text."""

    text: str = sio.InputField()
    sentiment: Literal["positive", "negative"] = sio.OutputField()


class Measures(sio.Signature):
    """Measure the text."""

    text: str = sio.InputField()
    label: Literal["low", "high"] = sio.OutputField()
    count: int = sio.OutputField()
    score: float = sio.OutputField()
    flag: bool = sio.OutputField()


class Person(sio.Signature):
    """Describe the person."""

    text: str = sio.InputField()
    name: str = sio.OutputField()
    age: int | None = sio.OutputField()
    height: int = sio.OutputField()


class Patient(pydantic.BaseModel):
    name: str
    age: int | None = None


class Record(sio.Signature):
    """Read the record."""

    text: str = sio.InputField()
    patient: Patient = sio.OutputField()


def without_prompt_texts(adapter: sio.Adapter) -> sio.Adapter:
    """The same adapter reading as before this rule: nothing set aside."""

    def prompt_texts(self: sio.Adapter, signature: type[sio.Signature]) -> dict[str, PromptText]:
        return {}

    return type(
        f"Plain{type(adapter).__name__}", (type(adapter),), {"prompt_texts": prompt_texts}
    )()


def hint(name: str, annotation: Any) -> str:
    """The type note the skeleton writes after ``{name}`` (the prompt's own text)."""
    from structio.typemodel.info import type_info

    return type_info(annotation).placeholder(name)[len(name) + 2 :]


def answer(adapter: str, values: dict[str, str]) -> str:
    """A completion writing each output's text as ``adapter``'s format does."""
    if adapter == "chat":
        sections = [f"[[ ## {k} ## ]]\n{v}" for k, v in values.items()]
        return "\n\n".join([*sections, "[[ ## completed ## ]]"])
    if adapter == "xml":
        return "\n".join(f"<{k}>{v}</{k}>" for k, v in values.items())
    return json.dumps(values, indent=2)


ADAPTERS = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter(), "xml": sio.XMLAdapter()}


def outcome(adapter: sio.Adapter, sig: type[sio.Signature], text: str) -> Any:
    try:
        return adapter.parse(sig, text)
    except sio.ParseError:
        return "ParseError"


# -- the real completions -----------------------------------------------------------------


def test_the_real_json_label_with_its_copied_note_reads_as_the_label() -> None:
    assert sio.JSONAdapter().parse(Sentiment, REAL_JSON) == {"sentiment": "negative"}
    with pytest.raises(sio.ParseError):  # the rule, not another reading, reads it
        without_prompt_texts(sio.JSONAdapter()).parse(Sentiment, REAL_JSON)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_each_format_sets_its_own_note_aside(adapter: str) -> None:
    note = hint("sentiment", Literal["positive", "negative"])
    text = answer(adapter, {"sentiment": "negative" + note})
    assert ADAPTERS[adapter].parse(Sentiment, text) == {"sentiment": "negative"}


def test_the_real_xml_answer_with_the_structures_dots_in_an_optional_leaf() -> None:
    text = "<patient><name>Bo</name><age>...</age></patient>"
    assert sio.XMLAdapter().parse(Record, text) == {"patient": Patient(name="Bo", age=None)}


def test_dots_the_adapter_wrote_as_a_value_read_back_as_the_value() -> None:
    class Noted(pydantic.BaseModel):
        name: str
        note: str | None = None

    class Sig(sio.Signature):
        noted: Noted = sio.OutputField()

    values = {"noted": Noted(name="a", note="...")}
    text = sio.XMLAdapter().format_assistant_message_content(Sig, values)
    assert sio.XMLAdapter().parse(Sig, text) == values
    assert sio.XMLAdapter().parse(Sig, text.replace("&#46;", ".")) == {"noted": Noted(name="a")}


def test_dots_in_a_required_leaf_stay_an_error() -> None:
    class Strict(pydantic.BaseModel):
        name: str
        age: int

    class Sig(sio.Signature):
        patient: Strict = sio.OutputField()

    with pytest.raises(sio.ParseError):
        sio.XMLAdapter().parse(Sig, "<patient><name>Bo</name><age>...</age></patient>")


# -- placeholders ---------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("with_note", [False, True])
def test_an_optional_output_holding_its_placeholder_has_no_value(
    adapter: str, with_note: bool
) -> None:
    shown = "{age}" + (hint("age", int | None) if with_note else "")
    text = answer(adapter, {"name": "Bo", "age": shown, "height": "180"})
    assert ADAPTERS[adapter].parse(Person, text) == {"name": "Bo", "age": None, "height": 180}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_required_output_holding_its_placeholder_is_an_error(adapter: str) -> None:
    shown = "{height}" + hint("height", int)
    text = answer(adapter, {"name": "Bo", "age": "3", "height": shown})
    with pytest.raises(sio.ParseError):
        ADAPTERS[adapter].parse(Person, text)


def test_compact_reads_its_own_type_notation_in_an_optional_output_as_no_value() -> None:
    adapter = sio.CompactAdapter()
    assert "age: int | null" in adapter.format_field_structure(Person)
    text = json.dumps({"name": "Bo", "age": "int | null", "height": 180})
    assert adapter.parse(Person, text) == {"name": "Bo", "age": None, "height": 180}
    with pytest.raises(sio.ParseError):  # a required output's type is not its value
        adapter.parse(Person, json.dumps({"name": "Bo", "age": 3, "height": "int"}))


def test_formats_whose_prompt_shows_no_note_leave_it_as_written() -> None:
    for adapter in (sio.CompactAdapter(), sio.ToolOutputAdapter()):
        assert adapter.prompt_texts(Sentiment).get("sentiment", PromptText()).hint == ""
        assert "# note" not in adapter.format_field_structure(Sentiment)
        with pytest.raises(sio.ParseError):
            adapter.parse(Sentiment, REAL_JSON)


def test_the_hint_alone_is_no_value() -> None:
    note = hint("sentiment", Literal["positive", "negative"]).strip()
    with pytest.raises(sio.ParseError):
        sio.JSONAdapter().parse(Sentiment, json.dumps({"sentiment": note}))


# -- properties -----------------------------------------------------------------------------

VALUES = st.fixed_dictionaries(
    {
        "label": st.sampled_from(["low", "high"]),
        "count": st.integers(-(10**6), 10**6).map(str),
        "score": st.floats(-1e6, 1e6, allow_nan=False).map(repr),
        "flag": st.sampled_from(["True", "False"]),
    }
)
SPACE = st.text(alphabet=" \t", min_size=1, max_size=9)


@SETTINGS
@given(st.sampled_from(sorted(ADAPTERS)), VALUES, SPACE, st.data())
def test_a_value_and_its_own_note_read_as_the_value(
    adapter: str, values: dict[str, str], space: str, data: st.DataObject
) -> None:
    annotations = {n: f.annotation for n, f in Measures.output_fields.items()}
    noted = data.draw(st.sets(st.sampled_from(sorted(values)), min_size=1), label="noted")
    written = {
        n: v + space + hint(n, annotations[n]).strip() if n in noted else v
        for n, v in values.items()
    }
    parsed = ADAPTERS[adapter].parse(Measures, answer(adapter, written))
    assert parsed == ADAPTERS[adapter].parse(Measures, answer(adapter, values))


@SETTINGS
@given(st.sampled_from(sorted(ADAPTERS)), VALUES, st.data())
def test_any_other_text_after_a_value_reads_as_before(
    adapter: str, values: dict[str, str], data: st.DataObject
) -> None:
    annotations = {n: f.annotation for n, f in Measures.output_fields.items()}
    name = data.draw(st.sampled_from(sorted(values)), label="name")
    other = data.draw(st.sampled_from([n for n in values if n != name]), label="other")
    words = hint(name, annotations[name]).split()
    changed = data.draw(st.integers(0, len(words) - 1), label="word")
    altered = " ".join(w if i != changed else w + "x" for i, w in enumerate(words))
    tail = data.draw(st.sampled_from([altered, hint(other, annotations[other]).strip()]))
    # Only a note that differs from this output's own: another's may be the same text.
    written = {**values, name: values[name] + "        " + tail}
    text = answer(adapter, written)
    if tail == hint(name, annotations[name]).strip():
        return
    assert outcome(ADAPTERS[adapter], Measures, text) == outcome(
        without_prompt_texts(ADAPTERS[adapter]), Measures, text
    )


@SETTINGS
@given(
    st.sampled_from(sorted(ADAPTERS)),
    st.sampled_from(["negative", "positive"]),
    st.lists(st.integers(min_value=0), max_size=30),
)
def test_a_streamed_value_is_never_shown_with_its_note(
    adapter: str, label: str, cuts: list[int]
) -> None:
    note = hint("sentiment", Literal["positive", "negative"])
    text = answer(adapter, {"sentiment": label + note})
    during, at_end, values = stream(ADAPTERS[adapter], Sentiment, pieces(text, cuts))
    assert values == {"sentiment": label}
    assert not any(isinstance(e, sio.Reread) for e in during + at_end)
    check(during + at_end, values, Sentiment)


@SETTINGS
@given(st.sampled_from(sorted(ADAPTERS)), st.lists(st.integers(min_value=0), max_size=30))
def test_a_streamed_placeholder_of_an_optional_output_is_none(
    adapter: str, cuts: list[int]
) -> None:
    text = answer(adapter, {"name": "Bo", "age": "{age}" + hint("age", int | None), "height": "2"})
    during, at_end, values = stream(ADAPTERS[adapter], Person, pieces(text, cuts))
    assert values == {"name": "Bo", "age": None, "height": 2}
    check(during + at_end, values, Person)


@SETTINGS
@given(st.lists(st.integers(min_value=0), max_size=30))
def test_streamed_dots_in_an_optional_xml_leaf_are_none(cuts: list[int]) -> None:
    text = "<patient><name>Bo</name><age>...</age></patient>"
    during, at_end, values = stream(sio.XMLAdapter(), Record, pieces(text, cuts))
    assert values == {"patient": Patient(name="Bo", age=None)}
    check(during + at_end, values, Record)
