"""IR spelled as GBNF: only what llama.cpp parsed in April 2024, and the same language."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from structio.grammar import Grammar
from structio.grammar.gbnf import to_gbnf
from structio.grammar.ir import Lit, Ref, Repeat, Rules, alt, chars, seq
from tests.grammar.llg import accepts


def _grammar(root: object, **rules: object) -> Grammar:
    return Grammar(Rules(root, tuple(rules.items())))  # type: ignore[arg-type]


def test_bounded_repeats_are_spelled_out_without_braces() -> None:
    text = to_gbnf(Rules(Repeat(chars("0-9"), 2, 4)))
    assert text == "root ::= [0-9] [0-9] ([0-9] [0-9]?)?\n"
    assert "{" not in text


def test_open_repeats_use_star_and_plus() -> None:
    assert to_gbnf(Rules(Repeat(Lit("ab")))) == 'root ::= "ab"*\n'
    assert to_gbnf(Rules(Repeat(Lit("ab"), 2))) == 'root ::= "ab" "ab"+\n'


def test_class_specials_and_controls_are_escaped() -> None:
    text = to_gbnf(Rules(seq(chars("^]\\[-", negated=True), Lit('"\\\x01\n'))))
    assert text == 'root ::= [^\\x5E\\x5D\\x5C\\x5B\\x2D] "\\x22\\x5C\\x01\\n"\n'


def test_rules_follow_root_in_first_use_order() -> None:
    text = to_gbnf(Rules(seq(Ref("b"), Ref("a")), (("a", Lit("x")), ("b", Ref("a")))))
    assert [line.split(" ::=")[0] for line in text.splitlines()] == ["root", "b", "a"]


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_a_literal_accepts_exactly_itself(text: str) -> None:
    grammar = _grammar(Lit(text))
    assert accepts(grammar, text, "gbnf")
    assert not accepts(grammar, text + "x", "gbnf")
    assert not accepts(grammar, text[:-1], "gbnf") or text[:-1] == text


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.integers(0, 4), st.integers(0, 8))
def test_a_bounded_repeat_accepts_its_counts_only(low: int, extra: int, count: int) -> None:
    grammar = _grammar(seq("<", Repeat(alt("ab", "c"), low, low + extra), ">"))
    text = "<" + "ab" * count + ">"
    assert accepts(grammar, text, "gbnf") == (low <= count <= low + extra)
    assert re.fullmatch(r"root ::= [^{}]*\n", grammar.gbnf())
