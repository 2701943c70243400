"""Values as the text formats write them, and free text that cannot start a marker line."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from structio.grammar import Grammar, text_without
from structio.grammar.ir import Ref, Rules, seq
from structio.grammar.json import RuleSet
from structio.grammar.values import line_free_text, text_value
from tests.grammar.llg import SYNTAXES, accepts

MARKER = "[[ ## "
END = "\n\n[[ ## end ## ]]\n"


def _free(end: str = END) -> Grammar:
    return Grammar(Rules(Ref("v"), (("v", seq(line_free_text(MARKER), end)),)))


pieces = st.lists(st.sampled_from(["a", " ", "\t", "\n", "[", "[[", "#", "##", MARKER, "]]"]))


@settings(max_examples=80, deadline=None)
@given(pieces, st.sampled_from(SYNTAXES))
def test_free_text_is_any_text_without_a_marker_line(parts: list[str], syntax: str) -> None:
    text = "".join(parts)
    marker_line = any(re.match(r"[ \t]*\[\[ ## ", line) for line in text.split("\n"))
    assert accepts(_free(), text + END, syntax) == (not marker_line)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["<", "/", "t", "think", "</think", ">", "x", "\n"])))
def test_text_without_a_word_ends_at_its_first_occurrence(parts: list[str]) -> None:
    text = "".join(parts)
    grammar = Grammar(Rules(Ref("v"), (("v", seq(text_without("</think>"), "</think>")),)))
    for syntax in SYNTAXES:
        assert accepts(grammar, text + "</think>", syntax) == ("</think>" not in text)


def _value(schema: dict[str, Any]) -> Grammar:
    rules = RuleSet()
    free = rules.add("text", lambda: line_free_text(MARKER))
    node = text_value(schema, rules, {}, free)
    rules.add("v", lambda: seq(node, END))
    return Grammar(Rules(Ref("v"), tuple(rules.rules.items())))


@settings(max_examples=40, deadline=None)
@given(st.integers(-(2**63), 2**63 - 1), st.floats(), st.sampled_from(SYNTAXES))
def test_numbers_as_str_writes_them(number: int, real: float, syntax: str) -> None:
    assert accepts(_value({"type": "integer"}), f"{number}{END}", syntax)
    assert accepts(_value({"type": "number"}), f"{real}{END}", syntax)
    assert not accepts(_value({"type": "integer"}), f"{number}.5{END}", syntax)


def test_choices_booleans_and_none_as_written() -> None:
    optional_bool = _value({"anyOf": [{"type": "boolean"}, {"type": "null"}]})
    choices = _value({"enum": ["yes", 2, True]})
    for syntax in SYNTAXES:
        assert all(accepts(optional_bool, t + END, syntax) for t in ("True", "False", "None"))
        assert not accepts(optional_bool, "true" + END, syntax)
        assert all(accepts(choices, t + END, syntax) for t in ("yes", "2", "True"))
        assert not accepts(choices, "no" + END, syntax)
