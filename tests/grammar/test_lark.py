"""IR spelled as llguidance Lark: regular rules as terminals, runs of them as one lexeme."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from structio.grammar import Grammar
from structio.grammar.ir import Lit, Ref, Repeat, Rules, alt, chars, opt, seq
from structio.grammar.lark import to_lark
from tests.grammar.llg import accepts


def test_regular_rules_are_terminals_and_recursive_ones_rules() -> None:
    rules = (
        ("word", Repeat(chars("a-z"), 1)),
        ("item", alt(Ref("word"), seq("[", opt(Ref("item")), "]"))),
    )
    text = to_lark(Rules(Ref("item"), rules))
    assert text.splitlines()[:3] == [
        "start: item",
        'item: WORD | "[" item? "]"',
        "WORD: /[a-z]/{1,}",
    ]


def test_a_run_of_regular_items_is_one_terminal() -> None:
    text = to_lark(Rules(seq("a", Repeat(chars("b")), "c")))
    assert text == 'start: T_0\nT_0: "a" /[b]/* "c"\n'


def test_text_no_lark_string_can_hold_is_a_regex() -> None:
    assert to_lark(Rules(Lit("a\x01/"))) == "start: /a\\x{1}\\x{2F}/\n"


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_a_literal_accepts_exactly_itself(text: str) -> None:
    grammar = Grammar(Rules(Lit(text)))
    assert accepts(grammar, text)
    assert not accepts(grammar, text + "x")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["[", "]", "ab"]), max_size=8))
def test_recursion_accepts_one_balanced_item_only(pieces: list[str]) -> None:
    rules = (("item", alt("ab", seq("[", Repeat(Ref("item")), "]"))),)
    grammar = Grammar(Rules(Ref("item"), rules))
    text = "".join(pieces)
    for syntax in ("lark", "gbnf"):
        assert accepts(grammar, text, syntax) == (_item_end(text, 0) == len(text))


def _item_end(text: str, i: int) -> int | None:
    """Where the item starting at ``i`` ends (a reference parser), or ``None``."""
    if text.startswith("ab", i):
        return i + 2
    if not text.startswith("[", i):
        return None
    i += 1
    while not text.startswith("]", i):
        end = _item_end(text, i)
        if end is None:
            return None
        i = end
    return i + 1
