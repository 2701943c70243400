"""The one rule of what a stream shows: a value shown is a value kept, or voided out loud.

A `FieldValue` or `FieldItem` is final: the result holds it, unless a later `Reread`
voids it (the answer is read again or asked again) or the stream ends with `Failed` and
raises. Held here over fuzzed completions (each adapter's own answer, then cut, doubled,
dropped or spliced with marker-like junk) fed in random chunkings, with re-asks on and off,
sync and async.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structio as sio
from structio.lm.types import LMResponse, StreamItem, response_pieces


class Sheet(sio.Signature):
    """Summarise the question."""

    question: str = sio.InputField()
    summary: str = sio.OutputField()
    score: int = sio.OutputField()
    tags: list[str] = sio.OutputField()


ADAPTERS: dict[str, Callable[[], sio.Adapter]] = {
    "chat": sio.ChatAdapter,
    "json": sio.JSONAdapter,
    "xml": sio.XMLAdapter,
    "compact": sio.CompactAdapter,
}
JUNK = st.text(alphabet='[]#{}<>/",: \nabc0123-`', min_size=1, max_size=12) | st.sampled_from(
    [
        "[[ ## summary ## ]]\n",
        "[[ ## score ## ]]\n7\n",
        "[[ ## completed ## ]]",
        '"score": 9, ',
        "<score>3</score>",
        "</think>\n",
        "<think>x</think>\n",
        ', "tags": ["z"]',
        "\n\n",
    ]
)
VALUES = st.fixed_dictionaries(
    {
        "summary": st.text(alphabet="ab ,.\n[]{}:#", max_size=30),
        "score": st.integers(-5, 500),
        "tags": st.lists(st.text(alphabet="abc ,", min_size=1, max_size=6), max_size=4),
    }
)


@st.composite
def completions(draw: st.DrawFn, adapter: sio.Adapter) -> str:
    """An adapter's own answer for random values, then damaged (or not) at random."""
    text = adapter.format_assistant_message_content(Sheet, draw(VALUES))
    for _ in range(draw(st.integers(0, 3))):
        cut = draw(st.integers(0, len(text)))
        end = draw(st.integers(cut, min(len(text), cut + 40)))
        action = draw(st.sampled_from(["truncate", "double", "drop", "splice", "keep"]))
        if action == "truncate":
            text = text[:cut]
        elif action == "double":
            text = text[:end] + text[cut:]
        elif action == "drop":
            text = text[:cut] + text[end:]
        elif action == "splice":
            text = text[:cut] + draw(JUNK) + text[cut:]
    return text


class ChunkedLM(sio.FakeLM):
    """A scripted model that streams each reply in the chunks a test drew."""

    def __init__(self, replies: list[str], cuts: list[int]) -> None:
        # A fallback may ask once more than the re-asks: the last reply answers it too.
        super().__init__([*replies, replies[-1], replies[-1]])
        self.cuts = cuts

    def _pieces(self, text: str) -> list[str]:
        points = sorted({c % (len(text) + 1) for c in self.cuts} | {0, len(text)})
        return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def check_contract(items: list[Any], error: BaseException | None) -> None:
    """The rule, for one stream's items (events, then the result unless it raised)."""
    events = [item for item in items if isinstance(item, sio.StreamEvent)]
    if error is not None:
        assert not isinstance(items[-1:], sio.Prediction)
        if events:  # something was shown: the stream says it is void before raising
            assert isinstance(events[-1], sio.Failed)
            assert events[-1].error is error
        assert not any(isinstance(e, sio.Failed) for e in events[:-1])
        return
    result = items[-1]
    assert isinstance(result, sio.Prediction)
    assert not any(isinstance(e, sio.Failed) for e in events)
    last = max((i for i, e in enumerate(events) if isinstance(e, sio.Reread)), default=-1)
    kept = events[last + 1 :]
    values = {e.field: e.value for e in kept if isinstance(e, sio.FieldValue)}
    assert len(values) == sum(isinstance(e, sio.FieldValue) for e in kept)  # each once
    assert values == {name: result[name] for name in Sheet.output_fields}
    items_seen = [(e.index, e.value) for e in kept if isinstance(e, sio.FieldItem)]
    assert items_seen == list(enumerate(result["tags"]))
    text = "".join(e.delta for e in kept if isinstance(e, sio.FieldDelta))
    assert text == result["summary"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(ADAPTERS)),
    st.data(),
    st.lists(st.integers(0, 10_000), max_size=12),
    st.integers(0, 1),
)
def test_no_value_shown_is_contradicted_by_the_result(
    name: str, data: st.DataObject, cuts: list[int], retries: int
) -> None:
    adapter = ADAPTERS[name]()
    replies = [data.draw(completions(adapter)) for _ in range(retries + 1)]
    predict = sio.Predict(Sheet, lm=ChunkedLM(replies, cuts), adapter=adapter)
    items, error = _read_with(predict, retries)
    check_contract(items, error)


def _read_with(predict: sio.Predict, retries: int) -> tuple[list[Any], BaseException | None]:
    items: list[Any] = []
    try:
        for item in predict.stream(question="q", max_retries=retries):
            items.append(item)
    except sio.ParseError as error:
        return items, error
    return items, None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ADAPTERS)), st.data(), st.lists(st.integers(0, 10_000), max_size=8))
def test_the_async_stream_keeps_the_same_rule(
    name: str, data: st.DataObject, cuts: list[int]
) -> None:
    adapter = ADAPTERS[name]()
    reply = data.draw(completions(adapter))
    predict = sio.Predict(Sheet, lm=ChunkedLM([reply], cuts), adapter=adapter)

    async def read() -> tuple[list[Any], BaseException | None]:
        items: list[Any] = []
        try:
            async for item in predict.astream(question="q", max_retries=0):
                items.append(item)
        except sio.ParseError as error:
            return items, error
        return items, None

    check_contract(*asyncio.run(read()))


def test_a_value_shown_then_an_unreadable_answer_ends_with_failed() -> None:
    # The summary is complete (the next marker came), then the answer stops short of score.
    reply = "[[ ## summary ## ]]\nshort\n\n[[ ## score ## ]]\nlots"
    predict = sio.Predict(Sheet, lm=ChunkedLM([reply], list(range(0, 60, 5))))
    items: list[Any] = []
    with pytest.raises(sio.ParseError) as raised:
        items.extend(predict.stream(question="q", max_retries=0))  # what came before it stays
    assert sio.FieldValue("summary", "short") in items
    assert items[-1] == sio.Failed(raised.value)
    assert "score" in str(raised.value)


def test_a_reask_after_values_were_shown_voids_them_with_a_reread() -> None:
    bad = "[[ ## summary ## ]]\nfirst try\n\n[[ ## score ## ]]\nlots\n\n[[ ## completed ## ]]"
    good = sio.ChatAdapter().format_assistant_message_content(
        Sheet, {"summary": "second", "score": 2, "tags": ["a"]}
    )
    predict = sio.Predict(Sheet, lm=ChunkedLM([bad, good], list(range(0, 200, 7))))
    items = list(predict.stream(question="q", max_retries=1))
    rereads = [i for i, e in enumerate(items) if isinstance(e, sio.Reread)]
    assert len(rereads) == 1
    assert sio.FieldValue("summary", "first try") in items[: rereads[0]]
    check_contract(items, None)
    assert items[-1].summary == "second"


def test_a_provider_error_after_text_ends_with_failed() -> None:
    class Broken(sio.FakeLM):
        def _stream(self, messages: Any, params: Any) -> Iterator[StreamItem]:
            yield "[[ ## summary ## ]]\nhalf"
            raise sio.LMConnectionError("the connection dropped")

    items: list[Any] = []
    with (
        sio.Predict(Sheet, lm=Broken(["x"])).stream(question="q") as stream,
        pytest.raises(sio.LMConnectionError) as raised,
    ):
        items.extend(stream)
    assert items == [sio.FieldDelta("summary", "half"), sio.Failed(raised.value)]


def test_an_error_before_any_event_raises_with_no_failed() -> None:
    class Refusing(sio.FakeLM):
        def _stream(self, messages: Any, params: Any) -> Iterator[StreamItem]:
            raise sio.LMConnectionError("no connection")
            yield  # a generator

    stream = sio.Predict(Sheet, lm=Refusing(["x"])).stream(question="q")
    with pytest.raises(sio.LMConnectionError):
        next(stream)


def test_response_pieces_give_reasoning_first_and_calls_last() -> None:
    response = LMResponse(
        completions=(
            sio.Completion(  # type: ignore[attr-defined]
                text="hi",
                reasoning="think",
                tool_calls=({"id": "1", "function": {"name": "f", "arguments": {"a": 1}}},),
            ),
        ),
        model="m",
    )
    from structio.lm import ReasoningPiece, ToolCallPiece

    assert list(response_pieces(response, ["h", "i"])) == [
        ReasoningPiece("think"),
        "h",
        "i",
        ToolCallPiece(0, "f", '{"a": 1}'),
        response,
    ]
