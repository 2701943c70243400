"""`Adapter.grammar`: every completion an adapter writes is accepted, damaged ones are not."""

from __future__ import annotations

import enum
import re
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import structio as sio
from structio.adapters.base import Adapter
from structio.grammar import Grammar
from tests.adapters.test_native import Ask
from tests.grammar.llg import SYNTAXES, accepts

TEXT_ADAPTERS = (sio.ChatAdapter, sio.XMLAdapter)
ADAPTERS = (*TEXT_ADAPTERS, sio.JSONAdapter, sio.CompactAdapter)


class Mood(enum.Enum):
    GOOD = "good"
    BAD = "bad"


class Point(pydantic.BaseModel):
    x: int
    y: float = 0.0
    note: str | None = None


class Shape(pydantic.BaseModel):
    name: str
    points: list[Point]


class Scalars(sio.Signature):
    """Labels and scalars."""

    question: str = sio.InputField()
    label: Literal["yes", "no", "maybe not"] = sio.OutputField()
    mood: Mood = sio.OutputField()
    count: int = sio.OutputField()
    ratio: float = sio.OutputField()
    sure: bool = sio.OutputField()


class Structured(sio.Signature):
    """Free text, models, lists of models, dicts and optional values."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()
    shape: Shape = sio.OutputField()
    points: list[Point] = sio.OutputField()
    weights: dict[str, int] = sio.OutputField()
    maybe: int | None = sio.OutputField()
    note: str | None = sio.OutputField()


# Free text of the pieces that could confuse a reader: brackets, hashes, tags, blank lines.
free_text = st.lists(
    st.sampled_from(["a", "B c", " ", "\n", "\n\n", "[", "]]", "[[", "#", "##", "<", "&", "é"]),
    max_size=12,
).map("".join)
finite = st.floats(allow_nan=False, allow_infinity=False)
points = st.builds(Point, x=st.integers(-(10**6), 10**6), y=finite, note=st.none() | free_text)

scalar_outputs = st.fixed_dictionaries(
    {
        "label": st.sampled_from(["yes", "no", "maybe not"]),
        "mood": st.sampled_from(list(Mood)),
        "count": st.integers(-(2**63), 2**63 - 1),
        "ratio": finite,
        "sure": st.booleans(),
    }
)
structured_outputs = st.fixed_dictionaries(
    {
        "answer": free_text,
        "shape": st.builds(Shape, name=free_text, points=st.lists(points, max_size=3)),
        "points": st.lists(points, max_size=3),
        "weights": st.dictionaries(free_text, st.integers(-5, 5), max_size=3),
        "maybe": st.none() | st.integers(-5, 5),
        "note": st.none() | free_text,
    }
)


def _marker_line(outputs: dict[str, Any]) -> bool:
    """Whether a free-text output holds a line that starts a ``[[ ## `` section."""
    texts = [v for v in outputs.values() if isinstance(v, str)]
    return any(re.search(r"(^|\n)[ \t]*\[\[ ## ", text) for text in texts)


def _written(adapter: Adapter, signature: type[sio.Signature], outputs: dict[str, Any]) -> str:
    record = adapter.format_finetune_data(signature, [], {"question": "q?"}, outputs)
    content: str = record["messages"][-1]["content"]
    return content


def _grammar(adapter: Adapter, signature: type[sio.Signature], think: bool = False) -> Grammar:
    grammar = adapter.grammar(signature, think=think)
    assert grammar is not None
    return grammar


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from(ADAPTERS),
    st.sampled_from([(Scalars, scalar_outputs), (Structured, structured_outputs)]),
    st.data(),
)
def test_every_written_completion_is_accepted(
    adapter_class: type[Adapter], case: tuple[type[sio.Signature], Any], data: st.DataObject
) -> None:
    signature, strategy = case
    outputs = data.draw(strategy)
    assume(adapter_class is not sio.ChatAdapter or not _marker_line(outputs))
    adapter = adapter_class()
    text = _written(adapter, signature, outputs)
    for syntax in SYNTAXES:
        assert accepts(_grammar(adapter, signature), text, syntax), (syntax, text)
        draft = f"<think>\nFirst </thi <b>, then {text[:20]!r}.\n</think>\n\n"
        assert accepts(_grammar(adapter, signature, think=True), draft + text, syntax)
        assert not accepts(_grammar(adapter, signature), draft + text, syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_keys_past_ascii_are_accepted(adapter_class: type[Adapter], syntax: str) -> None:
    # Found by CI's hypothesis run: XMLAdapter writes the key "é" as the tag <é>, which a
    # grammar of ASCII tag names refused.
    outputs = {
        "answer": "",
        "shape": Shape(name="", points=[]),
        "points": [],
        "weights": {"é": 0, "日本": 1, "Ünïcode_ß-2": 2},
        "maybe": None,
        "note": None,
    }
    adapter = adapter_class()
    text = _written(adapter, Structured, outputs)
    if adapter_class is sio.XMLAdapter:
        assert "<é>0</é>" in text
        assert "<日本>1</日本>" in text
    assert accepts(_grammar(adapter, Structured), text, syntax), text


SCALARS = {"label": "maybe not", "mood": Mood.BAD, "count": 3, "ratio": 0.5, "sure": False}
STRUCTURED = {
    "answer": "Two lines,\n[[ not a marker ]] and # hashes",
    "shape": Shape(name="tri", points=[Point(x=1), Point(x=2, note="<b> & c")]),
    "points": [],
    "weights": {"a": 1},
    "maybe": None,
    "note": None,
}


def _damage(text: str, adapter_class: type[Adapter]) -> list[str]:
    """Completions that the adapter would not write for these outputs, with what went wrong."""
    if adapter_class is sio.ChatAdapter:
        return [
            text.replace("maybe not", "perhaps"),  # not a choice
            text.replace("[[ ## mood ## ]]\n", ""),  # a marker missing
            text.replace("[[ ## count ## ]]\n3", "[[ ## count ## ]]\nthree"),  # not an int
            text.replace("label", "LABEL"),  # a marker misspelled
            text + "More text.",  # text after the completed marker
            text.replace("[[ ## completed ## ]]\n", ""),  # no completed marker
        ]
    if adapter_class is sio.XMLAdapter:
        return [
            text.replace("maybe not", "perhaps"),
            text.replace("<mood>\nbad\n</mood>\n\n", ""),
            text.replace("<sure>\nFalse", "<sure>\nno"),
            text + "\n<extra>1</extra>",
        ]
    return [
        text.replace("maybe not", "perhaps"),
        text.replace('"mood": "bad",\n', ""),
        text.replace('"count": 3', '"count": "3"'),
        text.replace("}", ""),  # invalid JSON
        text + ",",
    ]


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_damaged_completions_are_refused(adapter_class: type[Adapter], syntax: str) -> None:
    adapter = adapter_class()
    text = _written(adapter, Scalars, SCALARS)
    grammar = _grammar(adapter, Scalars)
    assert accepts(grammar, text, syntax)
    for damaged in _damage(text, adapter_class):
        assert damaged != text
        assert not accepts(grammar, damaged, syntax), damaged


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_sections_out_of_order_or_a_marker_line_in_text_are_refused(syntax: str) -> None:
    adapter = sio.ChatAdapter()
    grammar = _grammar(adapter, Structured)
    text = _written(adapter, Structured, STRUCTURED)
    assert accepts(grammar, text, syntax)
    head, _, rest = text.partition("\n\n[[ ## shape ## ]]")
    shape, _, tail = rest.partition("\n\n[[ ## points ## ]]")
    swapped = "[[ ## shape ## ]]" + shape + "\n\n" + head + "\n\n[[ ## points ## ]]" + tail
    assert not accepts(grammar, swapped, syntax)
    injected = text.replace("Two lines,\n", "Two lines,\n[[ ## shape ## ]]\n")
    assert not accepts(grammar, injected, syntax)
    assert not accepts(grammar, text.replace('"name": "tri"', '"name": tri'), syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_xml_nested_values_and_escaped_text(syntax: str) -> None:
    adapter = sio.XMLAdapter()
    grammar = _grammar(adapter, Structured)
    text = _written(adapter, Structured, STRUCTURED)
    assert "&lt;b&gt;" in text or "&lt;b>" in text
    assert accepts(grammar, text, syntax)
    assert not accepts(grammar, text.replace("&lt;b", "<b"), syntax)
    assert not accepts(grammar, text.replace("</shape>", "</shap>"), syntax)


def test_grammars_are_cached_per_signature_options_and_think() -> None:
    adapter = sio.ChatAdapter()
    grammar = _grammar(adapter, Scalars)
    assert _grammar(sio.ChatAdapter(), Scalars) is grammar
    assert grammar.gbnf() is grammar.gbnf()
    assert _grammar(adapter, Scalars, think=True) is not grammar
    assert _grammar(sio.ChatAdapter(fallback=None), Scalars) is not grammar
    assert _grammar(sio.XMLAdapter(), Scalars) is not grammar


def test_formats_without_a_text_grammar_give_none() -> None:
    class Plain(sio.ChatAdapter):
        grammar = Adapter.grammar

    assert Plain().grammar(Scalars) is None
    assert sio.ToolOutputAdapter().grammar(Scalars) is None
    assert "grammar" in Adapter.hooks()


def test_the_gbnf_uses_only_llama_cpps_april_2024_syntax() -> None:
    for adapter_class in ADAPTERS:
        text = _grammar(adapter_class(), Structured, think=True).gbnf()
        assert text.startswith("root ::= ")
        body = re.sub(r'"(\\.|[^"\\])*"|\[(\\.|[^\]\\])*\]', "", text)  # literals, classes
        assert not re.search(r"[^\w\s\-:=|()*+?]", body), body  # no {m,n}, no other syntax


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_native_tool_calls_are_left_out_as_the_text_leaves_them_out(syntax: str) -> None:
    adapter = sio.ChatAdapter()
    native = adapter.native(Ask, sio.FakeLM([], profile={"tools": True}))
    assert native is not None
    assert native.native_calls
    grammar = _grammar(adapter, native.wire)
    assert accepts(
        grammar, adapter.format_assistant_message_content(native.wire, {"answer": "Hi"}), syntax
    )
    in_text = adapter.format_assistant_message_content(
        Ask, {"calls": sio.ToolCalls(tool_calls=[]), "answer": "Hi"}
    )
    assert not accepts(grammar, in_text, syntax)
    assert accepts(_grammar(adapter, Ask), in_text, syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("note", ["", " \n ", "text"])
def test_a_blank_last_text_that_stripping_removed_is_accepted(note: str, syntax: str) -> None:
    adapter = sio.ChatAdapter()
    text = _written(adapter, Structured, {**STRUCTURED, "note": note})
    assert text.endswith("[[ ## note ## ]]\n\n[[ ## completed ## ]]\n") == (note != "text")
    assert accepts(_grammar(adapter, Structured), text, syntax)
    blank_bool = _written(adapter, Scalars, SCALARS).replace("\nFalse\n", "\n")
    assert not accepts(_grammar(adapter, Scalars), blank_bool, syntax)
