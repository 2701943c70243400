"""Lists: read from a list the text states, whole, or refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.parsing.lenient import NO_READING, list_items

ADAPTERS = (sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter())


def forms(text: str) -> list[str]:
    """The text as each adapter's section, label line, element and JSON string."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return [f"[[ ## a ## ]]\n{text}", f"<a>{text}</a>", f'{{"a": "{quoted}"}}']


# The examples, then more of the kind.
REFUSED_STR = [
    "[1, 2]",  # a JSON array of numbers: data, and no list of strings (never `['[1', '2]']`)
    '{"x": [1, 2]}',  # JSON text is never split on its commas
    "I cannot answer {that}",
    "hmm [that] is it",
    "I cannot\nanswer that",  # a two-line refusal
    '["a", "b"] or ["c"]',  # two lists: the first does not win
    "[a, b] and [c, d]",
    "Sorry, no",  # unmarked text with a comma: prose as much as a list
    "red, green",
    'Here they are: ["a", "b"]',  # a list inside prose
    "- a\n- b\n\nor maybe\n\n- c",  # bullets mixed with prose
    "1. a\n2. b\n1. c\n2. d",  # a numbering that starts again: two lists
    "- a\n* b",  # two bullets: two lists
    "- a\n  - b",  # nested: which level is the list?
    "1. a\n3. b",
]


@pytest.mark.parametrize("text", REFUSED_STR)
def test_a_list_of_strings_the_text_does_not_state_whole_is_refused(text: str) -> None:
    for adapter in ADAPTERS:
        for completion in forms(text):
            with pytest.raises(sio.ParseError):
                adapter.parse("q -> a: list[str]", completion)


@pytest.mark.parametrize(
    ("spec", "text", "value"),
    [
        ("list[str]", '["a", "b"]', ["a", "b"]),
        ("list[str]", "['a', 'b']", ["a", "b"]),
        ("list[str]", '```json\n["a", "b"]\n```', ["a", "b"]),
        ("list[str]", "[a, b]", ["a", "b"]),  # damaged JSON, repaired: still the whole text
        ("list[str]", "[apple, banana split]", ["apple", "banana split"]),
        ("list[str]", '[a, "b, c"]', ["a", "b, c"]),  # json-repair 0.31 read `a,`
        ("list[str]", "[it's, 'x']", ["it's", "x"]),
        ("list[str | None]", "[a, null]", ["a", None]),
        ("list[str | int]", "[a, 5]", ["a", 5]),
        ("list[list[str]]", "[[a, b], [c]]", [["a", "b"], ["c"]]),
        ("list[str]", "- a\n- b", ["a", "b"]),
        ("list[str]", "1. a, b\n2. c", ["a, b", "c"]),
        ("list[str]", "3) x\n4) y", ["x", "y"]),
        ("list[str]", "* **bold**\n* `code`", ["bold", "code"]),
        ("list[int]", "[1, 2]", [1, 2]),
        ("list[int]", "1, 2, 3", [1, 2, 3]),  # prose does not validate as numbers
        ("list[int]", "1\n2", [1, 2]),
        ("set[str]", "- a\n- b", {"a", "b"}),
    ],
)
def test_a_list_the_text_states_whole_is_read(spec: str, text: str, value: object) -> None:
    for adapter in ADAPTERS:
        assert adapter.parse(f"q -> a: {spec}", f"[[ ## a ## ]]\n{text}") == {"a": value}


@pytest.mark.parametrize(
    "text", ["[1, 2] and [3]", "1, 2 or 3", "I cannot\nanswer that", "hmm [1] is it"]
)
def test_a_list_of_numbers_not_stated_whole_is_refused(text: str) -> None:
    for adapter in ADAPTERS:
        with pytest.raises(sio.ParseError):
            adapter.parse("q -> a: list[int]", f"[[ ## a ## ]]\n{text}")


@pytest.mark.parametrize(
    ("text", "marked_only", "items"),
    [
        ("- a\n- b", True, ["a", "b"]),
        ("a\nb", False, ["a", "b"]),
        ("a, b", False, ["a", "b"]),
        ("a\nb", True, NO_READING),
        ("a, b", True, NO_READING),
        ("just prose", False, NO_READING),
        ("[1, 2]", False, NO_READING),
        ("a, {b}", False, NO_READING),
    ],
)
def test_list_items_reads_only_a_whole_list(text: str, marked_only: bool, items: object) -> None:
    assert list_items(text, marked_only=marked_only) == items


WORDS = st.text(alphabet="abc XYZ.,;:!?'\"-*[]{}()\n0123", max_size=40)


@settings(max_examples=300, deadline=None)
@given(WORDS, st.sampled_from(["list[str]", "list[int]", "set[str]", "tuple[str, ...]"]))
def test_never_an_item_that_is_not_in_the_text(text: str, spec: str) -> None:
    for adapter in ADAPTERS:
        for completion in forms(text):
            try:
                parsed = adapter.parse(f"q -> a: {spec}", completion)
            except sio.ParseError:
                continue
            for item in parsed["a"]:
                assert str(item) in text, f"{item!r} from {completion!r}"
            if "list[str]" not in spec or "\n" in text.strip() or "-" in text or "*" in text:
                continue
            if text.strip()[:1] in "[(\"'`":
                continue  # JSON or a Python literal
            # One unmarked line is no list of strings, except XML's one element holding one
            # item (`<tags>home</tags>`), which is then the whole text, with no comma.
            assert completion.startswith("<"), f"{parsed!r} from {completion!r}"
            assert "," not in text, f"{parsed!r} from {completion!r}"
            assert [str(item).strip() for item in parsed["a"]] in ([], [text.strip()])
