"""Reading a completion while it is written: events never contradict the final reading."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structio as sio
from structio.parsing.stream import StreamReader, ThinkFilter
from tests.adapters.test_round_trips import Everything, outputs
from tests.parsing.streaming import check, pieces, stream

ADAPTERS = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter()}
# STRUCTIO_STREAM_EXAMPLES=5000 searches harder (a few seconds per thousand).
EXAMPLES = int(os.environ.get("STRUCTIO_STREAM_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    reasoning: str = sio.OutputField()
    answer: int = sio.OutputField()
    tags: list[str] = sio.OutputField()


@SETTINGS
@given(
    st.sampled_from(sorted(ADAPTERS)),
    outputs(st.text(), st.none() | st.text()),
    st.lists(st.integers(min_value=0), max_size=40),
)
def test_written_answers_stream_to_what_parse_reads(
    name: str, values: dict[str, Any], cuts: list[int]
) -> None:
    adapter = ADAPTERS[name]
    text = adapter.format_assistant_message_content(Everything, values)
    during, at_end, reading = stream(adapter, Everything, pieces(text, cuts))
    if isinstance(reading, sio.ParseError):
        # Nothing to contradict: the values given were complete, and the call raises.
        assert not any(isinstance(e, sio.Reread) for e in during)
        return
    check(during + at_end, reading, Everything)
    assert reading == adapter.parse(Everything, text)
    if reading == values:
        # The answer round-trips: nothing is read again, and each output whose text was
        # closed before the end was given while the text still came.
        assert not any(isinstance(e, sio.Reread) for e in during + at_end)
        early = {e.field for e in during if isinstance(e, sio.FieldValue)}
        expected = {n for n, v in values.items() if v is not None}
        assert expected <= early


# Text with the pieces that matter to a reader, in any order: markers (whole, decorated,
# glued), drafts, fences, braces and quotes.
FRAGMENTS = st.sampled_from(
    [
        "[[ ## reasoning ## ]]",
        "[[ ## answer ## ]]",
        "[[ ## tags ## ]]",
        "[[ ## completed ## ]]",
        "**[[ ## answer ## ]]**",
        "[[ ## Answer ## ]]:",
        "\n",
        "\n\n",
        "42",
        "7",
        '["a", "b"]',
        "because",
        "<think>",
        "</think>",
        "```",
        "```json\n",
        "{",
        "}",
        '"reasoning": "r"',
        '"answer": 3',
        '"tags": []',
        ", ",
        "[",
        "]",
        '"',
        "\\",
        "None",
        " ",
    ]
)
COMPLETIONS = st.lists(FRAGMENTS | st.text(max_size=5), max_size=30).map("".join)


@SETTINGS
@given(
    st.sampled_from(sorted(ADAPTERS)),
    COMPLETIONS,
    st.lists(st.integers(min_value=0), max_size=20),
)
def test_any_completion_streams_without_contradiction(
    name: str, text: str, cuts: list[int]
) -> None:
    adapter = ADAPTERS[name]
    during, at_end, reading = stream(adapter, QA, pieces(text, cuts))
    if isinstance(reading, sio.ParseError):
        return
    check(during + at_end, reading, QA)


@SETTINGS
@given(st.sampled_from(sorted(ADAPTERS)), COMPLETIONS, st.data())
def test_the_events_do_not_depend_on_how_the_text_is_cut(
    name: str, text: str, data: st.DataObject
) -> None:
    adapter = ADAPTERS[name]
    cuts = data.draw(st.lists(st.integers(min_value=0), max_size=20))
    whole = stream(adapter, QA, [text])
    cut = stream(adapter, QA, pieces(text, cuts))
    assert summary(whole) == summary(cut)


LATE = "a late </think>"


def summary(
    result: tuple[list[sio.StreamEvent], list[sio.StreamEvent], Any],
) -> tuple[Any, ...]:
    """What a stream said, whatever the pieces: values in order, text per output, Rereads.

    A late ``</think>`` voids what was said before it with a `Reread` (a whole completion
    never said it): only what follows counts, and that Reread is not counted.
    """
    during, at_end, _ = result
    events = during + at_end
    late = [i for i, e in enumerate(events) if isinstance(e, sio.Reread) and LATE in e.reason]
    if late:
        events = events[late[-1] + 1 :]
    values = [(e.field, repr(e.value)) for e in events if isinstance(e, sio.FieldValue)]
    rereads = sum(isinstance(e, sio.Reread) for e in events)
    texts: dict[str, str] = {}
    for e in events:
        if isinstance(e, sio.FieldDelta):
            texts[e.field] = texts.get(e.field, "") + e.delta
    return values, rereads, texts


CHAT = (
    "[[ ## reasoning ## ]]\nTwo and two.\nMakes four [really].\n\n"
    '[[ ## answer ## ]]\n4\n\n[[ ## tags ## ]]\n["x"]\n\n[[ ## completed ## ]]\n'
)


@pytest.mark.parametrize("at", range(1, len(CHAT)))
def test_a_marker_split_anywhere_is_read_whole(at: int) -> None:
    during, at_end, reading = stream(ADAPTERS["chat"], QA, [CHAT[:at], CHAT[at:]])
    assert reading == {
        "reasoning": "Two and two.\nMakes four [really].",
        "answer": 4,
        "tags": ["x"],
    }
    check(during + at_end, reading, QA)  # type: ignore[arg-type]
    assert not any(isinstance(e, sio.Reread) for e in during + at_end)


def test_values_come_when_the_next_marker_line_arrives() -> None:
    reader = ADAPTERS["chat"].stream_reader(QA)
    said: list[sio.StreamEvent] = []
    for line in CHAT.splitlines(keepends=True):
        said.extend(reader.feed(line))
        if line.startswith("[[ ## answer"):
            assert sio.FieldValue("reasoning", "Two and two.\nMakes four [really].") in said
            assert not any(isinstance(e, sio.FieldValue) and e.field == "answer" for e in said)
        if line.startswith("[[ ## tags"):
            assert sio.FieldValue("answer", 4) in said


def test_text_is_streamed_before_its_line_ends_but_never_a_marker() -> None:
    reader = ADAPTERS["chat"].stream_reader(QA)
    events = reader.feed("Sure!\n[[ ## reasoning ## ]]\nThe sky is blue")
    assert events == [sio.FieldDelta("reasoning", "The sky is blue")]  # no preamble
    # A line that may end with a marker holds back from its "[[" (and decoration before it).
    assert reader.feed(" because **[[ ## ans") == [sio.FieldDelta("reasoning", " because")]
    assert reader.feed("wer ## ]]**\n4\n") == [
        sio.FieldValue("reasoning", "The sky is blue because")
    ]


def test_blank_space_and_a_closing_fence_are_held_until_text_follows() -> None:
    reader = ADAPTERS["chat"].stream_reader(QA)
    events = reader.feed("[[ ## reasoning ## ]]\n\n  Hi  \n\n")
    assert events == [sio.FieldDelta("reasoning", "Hi")]
    assert reader.feed("```\n") == []
    assert reader.feed("code\n") == [sio.FieldDelta("reasoning", "  \n\n```\ncode")]


def test_a_draft_is_never_streamed() -> None:
    text = (
        "<think>[[ ## reasoning ## ]]\nmaybe 5\n[[ ## answer ## ]]\n5\n</think>"
        "[[ ## reasoning ## ]]\nit is 4\n[[ ## answer ## ]]\n4\n[[ ## tags ## ]]\n[]\n"
        "[[ ## completed ## ]]"
    )
    for size in (1, 2, 3, 7):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        during, at_end, reading = stream(ADAPTERS["chat"], QA, chunks)
        events = during + at_end
        assert reading == {"reasoning": "it is 4", "answer": 4, "tags": []}
        assert not any(isinstance(e, sio.Reread) for e in events)
        assert sio.FieldValue("answer", 4) in during
        fields = [e.delta for e in events if isinstance(e, sio.FieldDelta)]
        assert all("maybe" not in delta for delta in fields)
        drafted = "".join(e.delta for e in events if isinstance(e, sio.ReasoningDelta))
        assert drafted == "[[ ## reasoning ## ]]\nmaybe 5\n[[ ## answer ## ]]\n5\n"
        check(events, reading, QA)


def test_a_late_close_tag_makes_the_draft_void_with_a_reread() -> None:
    # The chat template opened the draft: the model's text starts inside it.
    text = (
        "[[ ## reasoning ## ]]\nmaybe 5\n[[ ## answer ## ]]\n5\n[[ ## tags ## ]]\n[]\n"
        "</think>\n[[ ## reasoning ## ]]\nit is 4\n[[ ## answer ## ]]\n4\n"
        "[[ ## tags ## ]]\n[]\n[[ ## completed ## ]]"
    )
    cut = text.index("</think>")
    during, at_end, reading = stream(ADAPTERS["chat"], QA, [text[:cut], text[cut:]])
    assert reading == {"reasoning": "it is 4", "answer": 4, "tags": []}
    events = during + at_end
    assert sio.FieldValue("answer", 5) in during  # said from the text as it stood
    # The Reread comes with the close, not at the end; the draft follows as reasoning.
    reread = next(i for i, e in enumerate(during) if isinstance(e, sio.Reread))
    assert LATE in during[reread].reason
    assert during[reread + 1] == sio.ReasoningDelta(text[: text.index("</think>")])
    assert not any(isinstance(e, sio.Reread) for e in at_end)
    check(events, reading, QA)


def test_reasoning_given_before_a_late_close_comes_again_after_its_reread() -> None:
    chunks = ["<think>\nfirst\n</think>\n[[ ## answer ## ]]\n5\n\n[[ ## tags ## ]]\n", "</think>\n"]
    during, _, _ = stream(ADAPTERS["chat"], QA, chunks)
    reread = next(i for i, e in enumerate(during) if isinstance(e, sio.Reread))
    before = "".join(e.delta for e in during[:reread] if isinstance(e, sio.ReasoningDelta))
    after = "".join(e.delta for e in during[reread:] if isinstance(e, sio.ReasoningDelta))
    assert sio.FieldValue("answer", 5) in during[:reread]
    assert before == "\nfirst\n"
    assert after == "\nfirst\n\n[[ ## answer ## ]]\n5\n\n[[ ## tags ## ]]\n"
    assert not [e for e in during[reread:] if isinstance(e, sio.FieldValue)]


def test_a_late_close_before_anything_was_said_needs_no_reread() -> None:
    during, _, _ = stream(ADAPTERS["chat"], QA, ["I think 4.\n", "</think>\n[[ ## answer ## ]]\n4"])
    assert not any(isinstance(e, sio.Reread) for e in during)
    assert during[0] == sio.ReasoningDelta("I think 4.\n")


def test_json_members_come_as_each_closes() -> None:
    reader = ADAPTERS["json"].stream_reader(QA)
    assert reader.feed('```json\n{"reasoning": "Two ') == [sio.FieldDelta("reasoning", "Two ")]
    assert reader.feed('and two", "answer": 4') == [
        sio.FieldDelta("reasoning", "and two"),
        sio.FieldValue("reasoning", "Two and two"),
    ]
    # A number has nothing to close it until the comma: 4 may become 42.
    assert reader.feed("2") == []
    assert reader.feed(', "tags": ["a",') == [
        sio.FieldValue("answer", 42),
        sio.FieldItem("tags", 0, "a"),
    ]
    assert reader.feed(' "b"]}\n```') == [
        sio.FieldItem("tags", 1, "b"),
        sio.FieldValue("tags", ["a", "b"]),
    ]


@pytest.mark.parametrize("at", range(1, 40))
def test_json_escapes_split_anywhere_decode_whole(at: int) -> None:
    value = 'é "q" \\ 😀\n\tend'
    text = json.dumps({"reasoning": value, "answer": 1, "tags": []})
    assert "\\ud83d\\ude00" in text  # the emoji is written as a surrogate pair
    during, at_end, reading = stream(ADAPTERS["json"], QA, [text[:at], text[at:]])
    assert reading == {"reasoning": value, "answer": 1, "tags": []}
    events = during + at_end
    check(events, reading, QA)  # type: ignore[arg-type]
    assert not any(isinstance(e, sio.Reread) for e in events)
    deltas = [e.delta for e in during if isinstance(e, sio.FieldDelta)]
    assert all("\ud83d" not in d and "\ude00" not in d for d in deltas)  # never half a pair


def test_a_custom_adapter_without_a_reader_gives_everything_at_the_end() -> None:
    class Plain(sio.ChatAdapter):
        def stream_reader(
            self, signature: type[sio.Signature], *, inputs: Any = None
        ) -> StreamReader:
            return StreamReader(signature, lambda text: self.find(signature, text))

    during, at_end, _reading = stream(Plain(), QA, [CHAT[:30], CHAT[30:]])
    assert during == []
    assert at_end == [
        sio.FieldDelta("reasoning", "Two and two.\nMakes four [really]."),
        sio.FieldValue("reasoning", "Two and two.\nMakes four [really]."),
        sio.FieldValue("answer", 4),
        sio.FieldItem("tags", 0, "x"),
        sio.FieldValue("tags", ["x"]),
    ]


def test_finish_gives_the_rest_of_a_text_and_a_reread_when_it_disagrees() -> None:
    reader = ADAPTERS["chat"].stream_reader(QA)
    reader.feed("[[ ## reasoning ## ]]\nabc")
    assert reader.finish({"reasoning": "abcdef", "answer": 1, "tags": []}) == [
        sio.FieldDelta("reasoning", "def"),
        sio.FieldValue("reasoning", "abcdef"),
        sio.FieldValue("answer", 1),
        sio.FieldValue("tags", []),
    ]
    reader = ADAPTERS["chat"].stream_reader(QA)
    reader.feed("[[ ## reasoning ## ]]\nabc")
    events = reader.finish({"reasoning": "xyz", "answer": 1, "tags": []})
    assert isinstance(events[0], sio.Reread)
    assert events[1:3] == [sio.FieldDelta("reasoning", "xyz"), sio.FieldValue("reasoning", "xyz")]


def test_think_filter_holds_a_split_tag() -> None:
    f = ThinkFilter()
    assert f.feed("a\n<thi") == ("a\n", False)
    assert f.feed("nk>b</th") == ("", False)
    assert f.feed("ink>c<") == ("c", False)
    assert f.feed("d") == ("<d", False)
    # A close without an open, starting its line: all before is void.
    assert f.feed("x\n</think>y") == ("y", True)


def test_think_filter_reads_a_tag_in_the_middle_of_a_line_as_text() -> None:
    f = ThinkFilter()
    assert f.feed('{"tags": ["<think>", "</think>"') == ('{"tags": ["<think>", "</think>"', False)
    assert f.feed("]}") == ("]}", False)


def test_think_filter_waits_to_see_whether_a_close_ends_its_line() -> None:
    f = ThinkFilter()
    assert f.feed("draft</think>  ") == ("draft", False)
    assert f.feed("\nanswer") == ("  \nanswer", True)  # blanks are stripped by the readers
    g = ThinkFilter()
    assert g.feed("see </think>") == ("see ", False)
    assert g.feed(" for details") == ("</think> for details", False)
    h = ThinkFilter()
    assert h.feed("draft</think>") == ("draft", False)
    assert h.feed("[[ ## answer ## ]]") == ("[[ ## answer ## ]]", True)


def test_events_are_values() -> None:
    assert sio.FieldDelta("a", "b") == sio.FieldDelta("a", "b")
    assert sio.FieldDelta("a", "b") != sio.FieldValue("a", "b")
    assert repr(sio.FieldValue("a", 1)) == "FieldValue(field='a', value=1)"
    assert hash(sio.Reread("x")) == hash(sio.Reread("x"))
    with pytest.raises(AttributeError):
        sio.FieldDelta("a", "b").delta = "c"  # type: ignore[misc]
    match sio.FieldDelta("answer", "4"):
        case sio.FieldDelta(field, delta):
            assert (field, delta) == ("answer", "4")


def test_an_echoed_template_before_the_answer_does_not_end_the_stream() -> None:
    text = (
        "[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n"
        "[[ ## tags ## ]]\n{tags}\n\n[[ ## completed ## ]]\n\n"
        "[[ ## reasoning ## ]]\nTwo and two.\n\n[[ ## answer ## ]]\n4\n\n"
        '[[ ## tags ## ]]\n["x"]\n\n[[ ## completed ## ]]\nIgnored after the answer.'
    )
    for size in (1, 3, 11, len(text)):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        during, at_end, reading = stream(ADAPTERS["chat"], QA, chunks)
        assert reading == {"reasoning": "Two and two.", "answer": 4, "tags": ["x"]}
        check(during + at_end, reading, QA)  # type: ignore[arg-type]
        # The answer's values come while streaming, not only at the end, and the echoed
        # placeholders are never streamed: no Reread is needed.
        assert sio.FieldValue("answer", 4) in during
        assert not any(isinstance(e, sio.Reread) for e in during + at_end)
        deltas = "".join(e.delta for e in during if isinstance(e, sio.FieldDelta))
        assert deltas == "Two and two."
