"""Property tests: parse(format(outputs)) == outputs for both adapters, on random values."""

from __future__ import annotations

import enum
import re
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import structio as sio
from structio.parsing.read import NONE_WORDS

ADAPTERS = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter(), "compact": sio.CompactAdapter()}
HEADER_LINE = re.compile(r"^\s*\[\[ ## \w+ ## \]\]", re.MULTILINE)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Result(BaseModel):
    items: list[str]
    score: float
    ok: bool


class Everything(sio.Signature):
    """Produce every kind of value."""

    q: str = sio.InputField()
    text: str = sio.OutputField()
    count: int = sio.OutputField()
    ratio: float = sio.OutputField()
    flag: bool = sio.OutputField()
    label: Literal["a", "b", "c"] = sio.OutputField()
    color: Color = sio.OutputField()
    tags: list[str] = sio.OutputField()
    counts: dict[str, int] = sio.OutputField()
    maybe: int | None = sio.OutputField()
    result: Result = sio.OutputField()
    results: list[Result] = sio.OutputField()
    note: str | None = sio.OutputField()


floats = st.floats(allow_nan=False, allow_infinity=False)
any_text = st.text()


def section_text() -> st.SearchStrategy[str]:
    """Text a ChatAdapter section can carry verbatim: stripped, non-empty, no header lines."""
    return st.text(min_size=1).filter(lambda s: s == s.strip() and s and not HEADER_LINE.search(s))


def note_text() -> st.SearchStrategy[str]:
    """A section text for the `str | None` output: not a word that means no value there."""
    return section_text().filter(lambda s: s not in NONE_WORDS)


results = st.builds(Result, items=st.lists(any_text, max_size=3), score=floats, ok=st.booleans())


def outputs(
    text: st.SearchStrategy[str], note: st.SearchStrategy[str | None]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "text": text,
            "count": st.integers(),
            "ratio": floats,
            "flag": st.booleans(),
            "label": st.sampled_from(["a", "b", "c"]),
            "color": st.sampled_from(list(Color)),
            "tags": st.lists(any_text, max_size=4),
            "counts": st.dictionaries(any_text, st.integers(), max_size=3),
            "maybe": st.none() | st.integers(),
            "result": results,
            "results": st.lists(results, max_size=2),
            "note": note,
        }
    )


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(outputs(section_text(), note_text()))
def test_chat_round_trip(values: dict[str, Any]) -> None:
    adapter = ADAPTERS["chat"]
    text = adapter.format_assistant_message_content(Everything, values)
    assert adapter.parse(Everything, text) == values


@FAST
@given(st.sampled_from(["json", "compact"]), outputs(any_text, st.none() | any_text))
def test_json_round_trip(name: str, values: dict[str, Any]) -> None:
    adapter = ADAPTERS[name]  # CompactAdapter answers in JSON too
    text = adapter.format_assistant_message_content(Everything, values)
    assert adapter.parse(Everything, text) == values


@FAST
@given(st.sampled_from(sorted(ADAPTERS)), outputs(section_text(), note_text()))
def test_finetune_target_parses_back(name: str, values: dict[str, Any]) -> None:
    adapter = ADAPTERS[name]
    record = adapter.format_finetune_data(Everything, [], {"q": "question"}, values)
    assert record["messages"][-1]["role"] == "assistant"
    assert adapter.parse(Everything, record["messages"][-1]["content"]) == values


def test_chat_writes_none_for_an_optional_str_which_reads_back_as_none() -> None:
    # The one rule: a `str | None` output of None is written as `None`, and a section that
    # holds only `None` (or `null`) is no value, so it reads back as None. A JSON string
    # "None" stays the string.
    sig = Everything
    adapter = ADAPTERS["chat"]
    text = adapter.format_assistant_message_content(sig, {"note": None}, "x")
    assert "[[ ## note ## ]]\nNone" in text
    optional = sio.Signature("q -> note: str | None")
    assert adapter.parse(optional, "[[ ## note ## ]]\nNone") == {"note": None}
    assert adapter.parse(optional, "[[ ## note ## ]]\nnull") == {"note": None}
    assert adapter.parse(optional, '{"note": "None"}') == {"note": "None"}
    assert ADAPTERS["json"].parse(optional, '{"note": "None"}') == {"note": "None"}
    assert adapter.parse(sio.Signature("q -> note: str"), "[[ ## note ## ]]\nNone") == {
        "note": "None"  # a plain str output has no "no value"
    }


SMALL = sio.Signature("q -> reasoning, answer: int, tags: list[str], ok: bool | None")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(ADAPTERS)),
    st.text() | st.from_regex(r"\[\[ ## (answer|tags|ok) ## \]\]\n.*"),
)
def test_arbitrary_text_gives_a_typed_dict_or_a_parse_error(name: str, text: str) -> None:
    try:
        parsed = ADAPTERS[name].parse(SMALL, text)
    except sio.ParseError:
        return
    assert set(parsed) == {"reasoning", "answer", "tags", "ok"}
    assert isinstance(parsed["answer"], int)
    assert isinstance(parsed["tags"], list)
