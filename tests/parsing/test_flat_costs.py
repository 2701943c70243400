"""The fast paths that keep parsing flat agree with the readings they stand for.

Long answers (plain markers found by `str.find`, named escapes decoded by `str.replace`,
JSON read whole without a second scan) and many live signatures (`norm` without a cache,
no per-names pattern compiled for text that names no output) take shortcuts; each is
checked here against the plain reading it replaces.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structio.parsing import decode, locate
from structio.parsing.decode import decode_text, decode_text_whole
from structio.parsing.found import norm
from structio.parsing.labels import _label_line
from structio.parsing.read import _stated_whole
from structio.parsing.xml_text import _ENTITY, _decoded, _entity_char

# -- plain markers --

_REGEX_MARKER = re.compile(r"^\[\[ ## ([A-Za-z]\w*) ## \]\][ \t]*$", re.MULTILINE)
PIECES = [
    "[[ ## answer ## ]]",
    "[[ ## answer ## ]] \t",
    "[[ ## answer ## ]]x",
    "[[[ ## answer ## ]]",
    "[[ ## a1_b ## ]]",
    "[[ ## 1a ## ]]",
    "[[",
    "[[[[",
    "[ [ [ [ [ [ [ [ [ [",
    "]]",
    "\n",
    "\r\n",
    "\r",
    " ",
    "text",
    "é",
]


@given(st.lists(st.sampled_from(PIECES), max_size=14))
@settings(max_examples=1000, deadline=None)
def test_plain_split_is_the_multiline_pattern_split(pieces: list[str]) -> None:
    text = "".join(pieces)
    pieces = _REGEX_MARKER.split(text)
    every = text.count("[[") == len(pieces) // 2
    assert locate._plain_split(text) == (pieces if every else None)
    assert locate._find_pair(text, 1) == text.find("[[", 1)


# -- norm --


@given(st.text(alphabet=st.sampled_from("aB_-  \t\n\u00a0é1٣ßİK")))
@settings(max_examples=500, deadline=None)
def test_norm_is_the_pattern_reading(name: str) -> None:
    assert norm(name) == re.sub(r"[\s_\-]+", "", name).lower()


# -- XML escapes --


def _decoded_by_pattern(text: str) -> str | None:
    """The reading `_decoded` stands for: every `&` starts an escape, each decoded."""
    pieces: list[str] = []
    position = 0
    matches = list(_ENTITY.finditer(text))
    for match in matches:
        char = _entity_char(match)
        if char is None:
            return None
        pieces += (text[position : match.start()], char)
        position = match.end()
    if len(matches) != text.count("&"):
        return None
    return "".join(pieces) + text[position:]


ESCAPE_PIECES = ["&", "amp;", "lt;", "gt;", "quot;", "apos;", "#38;", "#x3c;", "#1114112;", "a"]


@given(st.lists(st.sampled_from(ESCAPE_PIECES), max_size=12))
@settings(max_examples=1000, deadline=None)
def test_named_escapes_decode_as_the_pattern_reads_them(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _decoded(text) == _decoded_by_pattern(text)
    # Few escapes in a long text: decoded one by one.
    padded = text + "x" * (200 * text.count("&"))
    assert _decoded(padded) == _decoded_by_pattern(padded)


# -- JSON read whole --

JSON_PIECES = ['["a"', ", ", '"b]"', "]", "[", "{", '"k": 1', "}", "'", "x", "```", "\n", "(1,)"]


@given(st.lists(st.sampled_from(JSON_PIECES), max_size=10))
@settings(max_examples=1000, deadline=None)
def test_json_read_whole_is_stated_whole(pieces: list[str]) -> None:
    text = "".join(pieces).strip()
    try:
        expected = decode_text(text)
    except ValueError:
        return
    value, whole = decode_text_whole(text)
    assert value == expected
    if whole:
        assert _stated_whole(text)


def test_json_too_deep_is_refused_as_decode_text_refuses_it() -> None:
    text = "[" * 70 + "]" * 70
    with pytest.raises(ValueError, match="nested deeper") as plain:
        decode_text(text)
    with pytest.raises(ValueError, match="nested deeper") as whole:
        decode_text_whole(text)
    assert str(whole.value) == str(plain.value)


# -- many signatures --


NAME_PIECES = ["answer", "An-swer", "ans wer", "_", "1", '"', ":", "<", ">", " ", "\\", "é", "K"]


@given(st.lists(st.sampled_from(NAME_PIECES), max_size=10))
@settings(max_examples=1000, deadline=None)
def test_text_that_may_not_mark_holds_no_key_tag_or_label(pieces: list[str]) -> None:
    text = "".join(pieces)
    outputs = ("answer", "answer_1")
    if not locate._may_mark(text, outputs):
        assert not list(locate._output_marks(outputs).finditer(text))
        assert not list(_label_line(outputs).finditer(text))


def test_inputs_that_name_no_output_compile_no_pattern_per_signature() -> None:
    # More output names than the pattern caches hold, as with thousands of live signatures.
    question = "What is the capital of France, in one word please?"
    before = _label_line.cache_info().misses, locate._output_marks.cache_info().misses
    for index in range(600):
        locate._marks(question, (f"answer_{index}",))
    after = _label_line.cache_info().misses, locate._output_marks.cache_info().misses
    assert after == before
    # Text that does name the output is still searched.
    assert locate._marks("Answer_7: Paris", ("answer_7",))


# -- depth --

_VALUES = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(alphabet="a[{", max_size=3)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=200,
)


@given(_VALUES, st.integers(min_value=0, max_value=80), st.booleans())
@settings(max_examples=300, deadline=None)
def test_depth_shortcuts_refuse_what_the_walk_refuses(value: Any, wraps: int, long: bool) -> None:
    for _ in range(wraps):
        value = [value]
    text = json.dumps(value) + (" " * 5000 if long else "")
    try:
        decode._shallow(value)
    except ValueError:
        with pytest.raises(ValueError, match="nested deeper"):
            decode._depth_checked(text, value)
    else:
        assert decode._depth_checked(text, value) is value
