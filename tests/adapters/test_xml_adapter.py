"""XMLAdapter: prompts, nested values both ways, escaping, never a guessed value, streams."""

from __future__ import annotations

import enum
import json
import re
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import structio as sio
from structio._util.scan import MAX_DEPTH
from structio.adapters import XMLAdapter
from structio.parsing.read import NONE_WORDS
from structio.parsing.stream import ThinkFilter
from structio.parsing.xml import escape_text, leaf_text, unescape, written_text
from tests.parsing.streaming import check, pieces, stream

XML = XMLAdapter()
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Part(BaseModel):
    name: str
    count: int
    tags: list[str]
    note: str | None = None
    ratio: float | None


class Box(BaseModel):
    label: str
    parts: list[Part]
    main: Part | None
    sizes: dict[str, int]
    flags: list[bool]
    extra: dict[str, Any]


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
    note: str | None = sio.OutputField()
    box: Box = sio.OutputField()
    boxes: list[Box] = sio.OutputField()
    maybe_tags: list[str] | None = sio.OutputField()
    pair: tuple[int, str] = sio.OutputField()
    data: dict = sio.OutputField()  # type: ignore[type-arg]


# Text as models and users write it: markup, escapes, entities, blank space at the edges.
MARKUP = st.sampled_from(
    [
        "<",
        ">",
        "&",
        "&amp;",
        "&lt;",
        "&#32;",
        "&bogus;",
        "</text>",
        "<text>",
        "<item>",
        "</item>",
        "<b>",
        "<![CDATA[",
        "]]>",
        "{text}",
        "...",
        "None",
        "\n",
        " ",
        "\t",
        '"',
        "'",
    ]
)
TEXT = st.text() | st.lists(MARKUP | st.text(max_size=4), max_size=8).map("".join)
floats = st.floats(allow_nan=False, allow_infinity=False)


def optional_text() -> st.SearchStrategy[str | None]:
    """A `str | None` value: any text but a word that means no value there (fix 9)."""
    return st.none() | TEXT.filter(lambda s: s.strip() not in NONE_WORDS)


JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | floats | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
parts = st.builds(
    Part,
    name=TEXT,
    count=st.integers(),
    tags=st.lists(TEXT, max_size=3),
    note=optional_text(),
    ratio=st.none() | floats,
)
boxes = st.builds(
    Box,
    label=TEXT,
    parts=st.lists(parts, max_size=2),
    main=st.none() | parts,
    sizes=st.dictionaries(TEXT, st.integers(), max_size=3),
    flags=st.lists(st.booleans(), max_size=3),
    extra=st.dictionaries(TEXT, JSON_DATA, max_size=3),
)


def everything() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "text": TEXT,
            "count": st.integers(),
            "ratio": floats,
            "flag": st.booleans(),
            "label": st.sampled_from(["a", "b", "c"]),
            "color": st.sampled_from(list(Color)),
            "tags": st.lists(TEXT, max_size=4),
            "counts": st.dictionaries(TEXT, st.integers(), max_size=3),
            "maybe": st.none() | st.integers(),
            "note": optional_text(),
            "box": boxes,
            "boxes": st.lists(boxes, max_size=2),
            "maybe_tags": st.none() | st.lists(TEXT, max_size=3),
            "pair": st.tuples(st.integers(), TEXT),
            "data": st.dictionaries(TEXT, JSON_DATA, max_size=3),
        }
    )


# -- round trips ----------------------------------------------------------------------------


@FAST
@given(everything())
def test_what_the_adapter_writes_reads_back_exactly(values: dict[str, Any]) -> None:
    text = XML.format_assistant_message_content(Everything, values)
    assert XML.parse(Everything, text) == values


@FAST
@given(everything())
def test_finetune_target_reads_back(values: dict[str, Any]) -> None:
    record = XML.format_finetune_data(Everything, [], {"q": "question"}, values)
    assert record["messages"][:-1] == XML.format(Everything, [], {"q": "question"})
    assert XML.parse(Everything, record["messages"][-1]["content"]) == values


@given(TEXT)
def test_written_text_reads_back(text: str) -> None:
    assert leaf_text(escape_text(text)) == text
    assert leaf_text("\n" + written_text(text, "answer") + "\n") == text
    assert "<" not in escape_text(text)


@given(TEXT)
def test_escaped_text_has_one_reading(text: str) -> None:
    escaped = escape_text(text)
    # Every `&` written starts an escape: read, they give the text back, never more or less.
    assert escaped.count("&") == len(re.findall(r"&(?:amp|lt|#\d+);", escaped))
    assert unescape(escaped) == text


@given(TEXT.filter(lambda s: "</answer" not in s and "<![CDATA[" not in s))
def test_raw_text_with_a_bare_ampersand_is_kept_as_written(text: str) -> None:
    raw = f"AT&T {text}"  # a bare `&`: the text was written raw, every character kept
    sig = sio.Signature("q -> answer")
    assert XML.parse(sig, f"<answer>\n{raw}\n</answer>") == {"answer": raw.strip()}


@given(st.text(alphabet=st.characters(blacklist_characters="&<")))
def test_raw_text_without_escapes_is_kept_as_written(text: str) -> None:
    sig = sio.Signature("q -> answer")
    assert XML.parse(sig, f"<answer>{text}</answer>") == {"answer": text.strip()}


def test_escaped_and_raw_forms_of_the_same_text_read_the_same() -> None:
    sig = sio.Signature("q -> answer")
    for written in ("x < y && y > z", "x &lt; y &amp;&amp; y &gt; z", "<![CDATA[x < y && y > z]]>"):
        assert XML.parse(sig, f"<answer>{written}</answer>") == {"answer": "x < y && y > z"}
    # Escapes are decoded only when every `&` starts one: here one does not, so none is.
    assert XML.parse(sig, "<answer>&lt; & &gt;</answer>") == {"answer": "&lt; & &gt;"}
    assert XML.parse(sig, "<answer>&#128512; &#x1F600;</answer>") == {"answer": "😀 😀"}
    assert XML.parse(sig, "<answer>&#xD800;</answer>") == {"answer": "&#xD800;"}


def test_text_that_looks_like_tags_is_written_escaped_and_reads_back() -> None:
    sig = sio.Signature("q -> answer, other: int")
    values = {"answer": "</answer><other>5</other> & <b>", "other": 1}
    text = XML.format_assistant_message_content(sig, values)
    assert "<answer>\n&lt;/answer>&lt;other>5&lt;/other> &amp; &lt;b>\n</answer>" in text
    assert XML.parse(sig, text) == values


def test_edge_whitespace_and_placeholders_are_written_to_read_back() -> None:
    sig = sio.Signature("q -> answer, tags: list[str]")
    values = {"answer": "{answer}", "tags": [" a\n", "...", ""]}
    text = XML.format_assistant_message_content(sig, values)
    assert "<answer>\n&#123;answer}\n</answer>" in text
    assert "<tags><item>&#32;a&#10;</item><item>&#46;..</item><item></item></tags>" in text
    assert XML.parse(sig, text) == values


def test_none_and_empty_values_keep_their_difference() -> None:
    class Sig(sio.Signature):
        q: str = sio.InputField()
        items: list[str] | None = sio.OutputField()
        note: str | None = sio.OutputField()
        box: Part | None = sio.OutputField()

    for items in (None, [], [""]):
        for note in (None, ""):
            values = {"items": items, "note": note, "box": None}
            text = XML.format_assistant_message_content(Sig, values)
            assert XML.parse(Sig, text) == values
    # An empty list where None is allowed too is written with both tags (DSPy: `<items />`).
    assert "<items></items>" in XML.format_assistant_message_content(Sig, {"items": []})
    assert XML.format_assistant_message_content(Sig, {"items": None}) == "<items>\nNone\n</items>"


def test_values_of_no_declared_type_are_written_to_read_back() -> None:
    sig = sio.Signature("q -> data: dict[str, Any]")
    values = {
        "data": {"n": 1, "s": "1", "e": "", "t": "true", "l": [], "d": {"item": 2}, "item": 3}
    }
    text = XML.format_assistant_message_content(sig, values)
    # Text that would read as another value is JSON; a dict of no declared type holding the
    # key "item" writes it as an entry (else it would read as a list).
    assert text == (
        '<data><n>1</n><s>"1"</s><e></e><t>"true"</t><l>[]</l>'
        '<d><entry key="item">2</entry></d><item>3</item></data>'
    )
    assert XML.parse(sig, text) == values


# -- the prompt -----------------------------------------------------------------------------


class Triage(sio.Signature):
    """Triage the ticket."""

    ticket: str = sio.InputField()
    history: sio.History = sio.InputField()
    part: Part = sio.OutputField(desc="the part")
    score: float = sio.OutputField()


def test_system_message_shows_nested_structures_and_omits_history() -> None:
    system = XML.format(Triage, [], {"ticket": "t"})[0]["content"]
    assert system == (
        "Your input fields are:\n1. `ticket` (str):\nYour output fields are:\n"
        "1. `part` (Part): the part\n2. `score` (float):\n"
        "All interactions will be structured in the following way, with the appropriate "
        "values filled in.\n\n<ticket>\n{ticket}\n</ticket>\n\n"
        "<part><name>...</name><count>...</count><tags><item>...</item></tags><note>...</note>"
        "<ratio>...</ratio></part>\n\n"
        "<score>\n{score}        # note: the value you produce must be a single float value\n"
        "</score>\nIn adhering to this structure, your objective is: \n        Triage the ticket."
    )


def test_user_message_and_history_turns() -> None:
    history = sio.History(
        messages=[{"ticket": "old", "score": 0.5}, {"ticket": "unanswered"}, {"score": 1.0}]
    )
    messages = XML.format(Triage, [], {"ticket": "new", "history": history})
    reminder = (
        "Respond with the corresponding output fields wrapped in XML tags `<part>`, then "
        "`<score>`. Use this nested XML structure: <part><name>...</name><count>...</count>"
        "<tags><item>...</item></tags><note>...</note><ratio>...</ratio></part>"
    )
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[1]["content"] == f"<ticket>\nold\n</ticket>\n\n{reminder}"
    assert messages[2]["content"] == "<score>\n0.5\n</score>"
    assert messages[4]["content"] == "<score>\n1.0\n</score>"
    assert messages[-1]["content"] == f"<ticket>\nnew\n</ticket>\n\n{reminder}"


def test_a_signature_without_inputs() -> None:
    sig = sio.Signature("-> answer: int")
    messages = XML.format(sig, [], {})
    assert "values filled in.\n\n\n\n<answer>\n{answer}" in messages[0]["content"]
    assert messages[1]["content"] == (
        "Respond with the corresponding output fields wrapped in XML tags `<answer>`."
    )


def test_a_recursive_model_ends_its_structure() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    sig = sio.Signature("q -> tree: Node", custom_types={"Node": Node})
    system = XML.format(sig, [], {"q": "x"})[0]["content"]
    assert "\n<tree><name>...</name><children><item>...</item></children></tree>\n" in system
    value = Node(name="a", children=[Node(name="b", children=[Node(name="c")])])
    text = XML.format_assistant_message_content(sig, {"tree": value})
    assert XML.parse(sig, text) == {"tree": value}


def test_structio_types_are_not_nested() -> None:
    tools = sio.Signature("q, tools: list[Tool] -> calls: ToolCalls")
    messages = XMLAdapter(native_tools=False).format(tools, [], {"q": "x", "tools": []})
    assert "<calls>\n{calls}" in messages[0]["content"]
    assert "nested XML" not in messages[-1]["content"]


# -- options --------------------------------------------------------------------------------


def test_options_repr_saving_and_fallback() -> None:
    assert repr(XMLAdapter()) == "XMLAdapter()"
    adapter = XMLAdapter(fallback=None, native_tools=True)
    assert repr(adapter) == "XMLAdapter(fallback=None, native_tools=True)"
    assert adapter.fallback_adapter() is None
    assert sio.Adapter.from_dict(adapter.to_dict()) == adapter
    assert adapter.to_dict()["type"] == "XMLAdapter"
    fallback = XMLAdapter(native_reasoning=False).fallback_adapter()
    assert fallback == sio.JSONAdapter(native_reasoning=False)
    assert XMLAdapter.route == "xml"
    assert isinstance(XML, sio.ChatAdapter)  # as in DSPy
    with pytest.raises(ValueError, match="fallback"):
        XMLAdapter(fallback="chat")  # type: ignore[arg-type]


def test_finetune_data_is_the_prompt_plus_the_target() -> None:
    record = XML.format_finetune_data(
        Triage,
        [],
        {"ticket": "t"},
        {"part": Part(name="x", count=1, tags=[], ratio=None), "score": 1},
    )
    assert record["messages"][-1] == {
        "role": "assistant",
        "content": "<part><name>x</name><count>1</count><tags /><note /><ratio /></part>\n\n"
        "<score>\n1\n</score>",
    }


# -- reading --------------------------------------------------------------------------------

QA = sio.Signature("question -> reasoning, answer: int")


def parse(text: str, sig: type[sio.Signature] = QA) -> dict[str, Any]:
    return XML.parse(sig, text)


def refused(text: str, sig: type[sio.Signature] = QA) -> sio.ParseError:
    with pytest.raises(sio.ParseError) as info:
        XML.parse(sig, text)
    return info.value


def test_reads_what_models_write() -> None:
    expected = {"reasoning": "r", "answer": 4}
    for text in (
        "<reasoning>r</reasoning><answer>4</answer>",
        "Sure!\n<reasoning>\nr\n</reasoning>\n\n<answer>\n4\n</answer>\nHope it helps.",
        "```xml\n<reasoning>r</reasoning>\n<answer>4</answer>\n```",
        "<think>let me see <answer>3</answer></think><reasoning>r</reasoning><answer>4</answer>",
        "<Reasoning>r</Reasoning><ANSWER >4</ANSWER>",
        "<answer>4</answer><reasoning>r</reasoning>",
        "<answer>\n<![CDATA[4]]>\n</answer><reasoning>r</reasoning>",
    ):
        assert parse(text) == expected, text


def test_an_element_inside_an_output_is_text() -> None:
    text = "<reasoning>I will write <answer>3</answer> below</reasoning><answer>4</answer>"
    assert parse(text) == {"reasoning": "I will write <answer>3</answer> below", "answer": 4}
    text = "<reasoning>use <b>bold</b> and a < b</reasoning><answer>4</answer>"
    assert parse(text) == {"reasoning": "use <b>bold</b> and a < b", "answer": 4}


def test_cdata_hides_markup_and_an_unclosed_one_is_text() -> None:
    sig = sio.Signature("q -> answer")
    assert parse("<answer><![CDATA[a </answer> b]]></answer>", sig) == {"answer": "a </answer> b"}
    assert parse("<answer>see <![CDATA[ here</answer>", sig) == {"answer": "see <![CDATA[ here"}


def test_an_output_repeated_with_another_value_has_none() -> None:
    text = "<reasoning>r</reasoning><answer>4</answer> and again <answer>5</answer>"
    with pytest.raises(sio.ParseError) as info:
        parse(text)
    assert list(info.value.invalid) == ["answer"]
    assert "written twice, with two different values ('4' and '5')" in str(info.value)
    assert info.value.parsed == {"reasoning": "r"}


@pytest.mark.parametrize(
    "text",
    [
        "<reasoning>r</reasoning><answer>4</answer> so: <answer> 4 </answer>",  # the same
        "<reasoning>r</reasoning><answer>4</answer> then <answer>5",  # left open: no value
        "<reasoning>r</reasoning><answer>4</answer><answer>{answer}</answer>",  # echoed
    ],
)
def test_an_output_repeated_with_no_other_value_keeps_its_value(text: str) -> None:
    assert parse(text) == {"reasoning": "r", "answer": 4}


def test_a_structured_output_repeated_with_another_value_has_none() -> None:
    sig = sio.Signature("q -> part: Part", custom_types={"Part": Part})
    one = "<part><name>bolt</name><count>2</count><tags></tags><ratio>0.5</ratio></part>"
    assert sio.XMLAdapter().parse(sig, one + "\n" + one) == sio.XMLAdapter().parse(sig, one)
    other = one.replace("<count>2", "<count>3")
    with pytest.raises(sio.ParseError, match="two different values"):
        sio.XMLAdapter().parse(sig, one + other)


def test_the_prompt_structure_echoed_is_not_a_value() -> None:
    text = (
        "<reasoning>\n{reasoning}\n</reasoning>\n<answer>\n{answer}        # note: the value "
        "you produce must be a single int value\n</answer>\n"
        "<reasoning>r</reasoning><answer>4</answer>"
    )
    assert parse(text) == {"reasoning": "r", "answer": 4}
    sig = sio.Signature("q -> part: Part", custom_types={"Part": Part})
    text = (
        "<part><name>...</name><count>...</count><tags><item>...</item></tags></part>\n"
        "<part><name>x</name><count>2</count><tags /><ratio /></part>"
    )
    assert parse(text, sig) == {"part": Part(name="x", count=2, tags=[], ratio=None)}


def test_a_missing_element_is_missing() -> None:
    error = refused("<reasoning>r</reasoning>")
    assert error.missing == ["answer"]
    assert parse("<answer>4</answer>", sio.Signature("q -> answer: int, note: str | None")) == {
        "answer": 4,
        "note": None,
    }


def test_an_unclosed_element_is_cut_off_and_nothing_after_it_is_read() -> None:
    error = refused("<reasoning>r</reasoning><answer>4")
    assert set(error.invalid) == {"answer"}
    assert "cut off" in str(error)
    # The reasoning never closes: the answer written inside it is not guessed as the answer.
    error = refused("<reasoning>thinking... <answer>4</answer>")
    assert set(error.invalid) == {"reasoning", "answer"}
    # Nor is an optional output after it left to its default.
    error = refused(
        "<answer>4</answer><reasoning>r", sio.Signature("q -> answer: int, reasoning: str | None")
    )
    assert set(error.invalid) == {"reasoning"}


def test_an_unclosed_nested_element_is_an_error_not_a_guess() -> None:
    sig = sio.Signature("q -> part: Part", custom_types={"Part": Part})
    error = refused("<part><name>x</name><count>2</part>", sig)
    assert set(error.invalid) == {"part"}
    sig = sio.Signature("q -> parts: list[Part]", custom_types={"Part": Part})
    error = refused(
        "<parts><item><name>a</item><item><name>b</name><count>1</count><tags /><ratio />"
        "</item></parts>",
        sig,
    )
    assert set(error.invalid) == {"parts"}


def test_nested_values_are_read_by_their_declared_type() -> None:
    sig = sio.Signature("q -> box: Box", custom_types={"Box": Box})
    text = (
        "<box>\n  <label>L</label>\n  <parts>\n    <part><name>a</name><count>1</count>"
        "<tags>x</tags><tags>y</tags><ratio>0.5</ratio></part>\n  </parts>\n"
        "  <main><name>m</name><count>2</count><tags></tags><ratio /></main>\n"
        '  <sizes><small>1</small><entry key="very large">3</entry></sizes>\n'
        "  <flags><item>true</item><item>no</item></flags>\n"
        "  <extra><n>5</n><list><item>1</item><item>two</item></list><none /></extra>\n</box>"
    )
    assert parse(text, sig)["box"] == Box(
        label="L",
        parts=[Part(name="a", count=1, tags=["x", "y"], ratio=0.5)],
        main=Part(name="m", count=2, tags=[], ratio=None),
        sizes={"small": 1, "very large": 3},
        flags=[True, False],
        extra={"n": 5, "list": [1, "two"], "none": None},
    )


def test_nested_values_written_as_json_or_as_one_item() -> None:
    sig = sio.Signature("q -> parts: list[Part], tags: list[str]", custom_types={"Part": Part})
    text = (
        '<parts>\n[{"name": "a", "count": 1, "tags": [], "ratio": null}]\n</parts><tags>only</tags>'
    )
    assert parse(text, sig) == {
        "parts": [Part(name="a", count=1, tags=[], ratio=None)],
        "tags": ["only"],
    }
    text = "<parts><name>a</name><count>1</count><tags /><ratio /></parts><tags />"
    assert parse(text, sig) == {"parts": [Part(name="a", count=1, tags=[], ratio=None)], "tags": []}


def test_a_nested_leaf_that_does_not_fit_is_reported() -> None:
    sig = sio.Signature("q -> part: Part", custom_types={"Part": Part})
    error = refused("<part><name>x</name><count>many</count><tags /><ratio /></part>", sig)
    assert set(error.invalid) == {"part"}
    assert "many" in str(error)


def test_a_self_closing_output() -> None:
    sig = sio.Signature("q -> a: int | None, b: list[str], c: str, d: int")
    error = refused("<a /><b/><c/><d />", sig)
    assert error.missing == ["d"]
    assert error.parsed == {"b": [], "c": ""}  # `a` is not given, and so None


def test_none_words_and_empty_elements() -> None:
    sig = sio.Signature("q -> note: str | None, text: str, n: int | None")
    assert parse("<note>None</note><text>None</text><n>null</n>", sig) == {
        "note": None,
        "text": "None",
        "n": None,
    }
    assert parse("<note></note><text></text><n></n>", sig) == {"note": "", "text": "", "n": None}


def test_other_formats_are_read_as_chat_adapter_reads_them() -> None:
    assert parse('{"reasoning": "r", "answer": 4}') == {"reasoning": "r", "answer": 4}
    assert parse("[[ ## reasoning ## ]]\nr\n[[ ## answer ## ]]\n4") == {
        "reasoning": "r",
        "answer": 4,
    }
    assert parse("4", sio.Signature("q -> answer: int")) == {"answer": 4}
    assert XML.read(QA, '{"reasoning": "r", "answer": 4}').reader == "JSON"
    assert XML.read(QA, "<reasoning>r</reasoning><answer>4</answer>").reader == "XML"


def test_a_refusal_is_not_an_answer() -> None:
    error = refused("I cannot help with that.", sio.Signature("q -> answer"))
    assert error.missing == ["answer"]


def test_nesting_deeper_than_the_limit_is_read_as_text_not_a_crash() -> None:
    inner = "<a>" * 500 + "x" + "</a>" * 500
    value = parse(f"<data>{inner}</data>", sio.Signature("q -> data: Any"))["data"]
    depth = 0
    while isinstance(value, dict):
        value, depth = value["a"], depth + 1
    assert depth == MAX_DEPTH
    assert isinstance(value, str)
    assert value.startswith("<a><a>")


def test_long_completions_read_in_linear_time() -> None:
    import sys
    from types import FrameType

    sig = sio.Signature("q -> answer, tags: list[str]")

    def work(n: int) -> int:
        """The lines of structio's code run to parse a completion of size ``n``: counted,
        not timed, so the test says the same on a loaded machine."""
        text = "<answer>" + "a < b & c " * n + "</answer><tags>" + "<item>x</item>" * n + "</tags>"
        lines = 0

        def count(frame: FrameType, event: str, arg: object) -> object:
            nonlocal lines
            lines += event == "line"
            return count

        def calls(frame: FrameType, event: str, arg: object) -> object:
            return count if frame.f_globals.get("__name__", "").startswith("structio") else None

        sys.settrace(calls)
        try:
            XML.parse(sig, text)
        finally:
            sys.settrace(None)
        return lines

    work(10)  # plans and caches made once
    small, large = work(500), work(8_000)
    assert small > 0
    # Sixteen times the text: linear work grows sixteen-fold, a quadratic step 256-fold.
    assert large < 16 * small * 2


# -- streams --------------------------------------------------------------------------------


STREAM = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@STREAM
@given(everything(), st.lists(st.integers(min_value=0), max_size=40))
def test_written_answers_stream_to_what_parse_reads(
    values: dict[str, Any], cuts: list[int]
) -> None:
    text = XML.format_assistant_message_content(Everything, values)
    during, at_end, reading = stream(XML, Everything, pieces(text, cuts))
    assert reading == values
    check(during + at_end, values, Everything)
    assert not any(isinstance(e, sio.Reread) for e in during + at_end)
    # Each output was given while the text still came, when its closing tag arrived.
    early = {e.field for e in during if isinstance(e, sio.FieldValue)}
    assert {n for n, v in values.items() if v is not None} <= early


FRAGMENTS = st.sampled_from(
    [
        "<reasoning>",
        "</reasoning>",
        "<answer>",
        "</answer>",
        "<tags>",
        "</tags>",
        "<tags />",
        "<item>",
        "</item>",
        "<Answer >",
        "<![CDATA[",
        "]]>",
        "{answer}",
        "...",
        "&amp;",
        "&",
        "<",
        ">",
        "\n",
        "42",
        "7",
        '["a"]',
        "because",
        "<think>",
        "</think>",
        "```",
        "```xml\n",
        '{"answer": 3}',
        " ",
    ]
)
COMPLETIONS = st.lists(FRAGMENTS | st.text(max_size=5), max_size=30).map("".join)
SMALL = sio.Signature("question -> reasoning, answer: int, tags: list[str]")


@STREAM
@given(COMPLETIONS, st.lists(st.integers(min_value=0), max_size=20))
def test_any_completion_streams_without_contradiction(text: str, cuts: list[int]) -> None:
    during, at_end, reading = stream(XML, SMALL, pieces(text, cuts))
    if isinstance(reading, sio.ParseError):
        return
    check(during + at_end, reading, SMALL)


@STREAM
@given(COMPLETIONS, st.data())
def test_the_events_do_not_depend_on_how_the_text_is_cut(text: str, data: st.DataObject) -> None:
    # A closing `</think>` without its opening one voids what came before it, which a stream
    # may have said already (a Reread follows when the answer can be read): as ChatAdapter.
    # Whether it does depends on the pieces (in one piece nothing was said before it): leave
    # out a text whose `</think>` voids anything in some cutting, as one character a piece.
    think = ThinkFilter()
    assume(not any(think.feed(char)[1] for char in text))
    cuts = data.draw(st.lists(st.integers(min_value=0), max_size=20))

    def summary(chunks: list[str]) -> tuple[Any, ...]:
        during, at_end, _ = stream(XML, SMALL, chunks)
        events = during + at_end
        values = [(e.field, repr(e.value)) for e in events if isinstance(e, sio.FieldValue)]
        texts: dict[str, str] = {}
        for e in events:
            if isinstance(e, sio.FieldDelta):
                texts[e.field] = texts.get(e.field, "") + e.delta
        return values, sum(isinstance(e, sio.Reread) for e in events), texts

    assert summary([text]) == summary(pieces(text, cuts))


@pytest.mark.parametrize(
    "text",
    ["<tags><tags></tags></tags>", "<tags><item><tags></tags></item></tags><answer>1</answer>"],
)
def test_an_element_nested_in_one_of_its_name_streams_as_it_reads_whole(text: str) -> None:
    # Found by the property above: at `<tags><tags></tags>` the outer list's child had
    # closed but the list had not, and the stream took its text as the value (`['<tags>']`)
    # where the whole completion reads `['']`. A structure waits for its own close.
    def values(chunks: list[str]) -> list[tuple[str, str]]:
        during, at_end, _ = stream(XML, SMALL, chunks)
        return [(e.field, repr(e.value)) for e in during + at_end if isinstance(e, sio.FieldValue)]

    whole = values([text])
    for cut in range(len(text) + 1):
        assert values([text[:cut], text[cut:]]) == whole, cut


ANSWER = (
    "<reasoning>\nTwo and two make four, as 2 + 2 = 4 &amp; more.\n</reasoning>\n<answer>4</answer>"
)


@pytest.mark.parametrize("at", range(1, len(ANSWER)))
def test_a_tag_split_anywhere_is_read_whole(at: int) -> None:
    during, at_end, reading = stream(XML, QA, [ANSWER[:at], ANSWER[at:]])
    assert reading == {"reasoning": "Two and two make four, as 2 + 2 = 4 & more.", "answer": 4}
    check(during + at_end, reading, QA)
    assert not any(isinstance(e, sio.Reread) for e in during + at_end)


def test_text_streams_as_it_comes_and_each_value_when_its_element_closes() -> None:
    reader = XML.stream_reader(QA)
    assert reader.feed("<reasoning>\nTwo") == [sio.FieldDelta("reasoning", "Two")]
    assert reader.feed(" and two   ") == [sio.FieldDelta("reasoning", " and two")]
    # From the first `&` or `<` on, the text waits for the close: it decides how it reads.
    assert reader.feed("&amp; more") == []
    assert reader.feed("</reasoning>") == [
        sio.FieldDelta("reasoning", "   & more"),
        sio.FieldValue("reasoning", "Two and two   & more"),
    ]
    assert reader.feed("<answer>4") == []
    assert reader.feed("</answer>") == [sio.FieldValue("answer", 4)]
    assert reader.finish({"reasoning": "Two and two   & more", "answer": 4}) == []


def test_a_late_end_of_reasoning_rereads() -> None:
    text = "<reasoning>draft</reasoning></think><reasoning>real</reasoning><answer>1</answer>"
    during, at_end, reading = stream(XML, QA, [text[:30], text[30:]])
    assert reading == {"reasoning": "real", "answer": 1}
    check(during + at_end, reading, QA)  # type: ignore[arg-type]


def test_streamed_values_equal_the_json_written_answer_too() -> None:
    text = json.dumps({"reasoning": "r", "answer": 2})
    during, at_end, reading = stream(XML, QA, [text[:5], text[5:]])
    assert reading == {"reasoning": "r", "answer": 2}
    check(during + at_end, reading, QA)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["think", "THINKING", "Thinking"])
def test_a_dict_key_named_like_a_draft_tag_is_written_as_an_entry(key: str) -> None:
    # As a tag it would read as a reasoning draft (<think>...</think>) and be set aside.
    sig = "q -> d: dict[str, int]"
    record = XML.format_finetune_data(sig, [], {"q": "x"}, {"d": {key: 0, "a": 1}})
    text = record["messages"][-1]["content"]
    assert f'<entry key="{key}">0</entry>' in text
    assert XML.parse(sig, text) == {"d": {key: 0, "a": 1}}
