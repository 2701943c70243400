"""The grammar IR: building nodes and knowing which rules are regular."""

from __future__ import annotations

from structio.grammar.ir import (
    Alt,
    Chars,
    Lit,
    Ref,
    Repeat,
    Seq,
    alt,
    chars,
    opt,
    regular_rules,
    seq,
    used_rules,
)


def test_chars_reads_ranges_and_a_dash_at_either_end() -> None:
    assert chars("a-z_") == Chars((("a", "z"), ("_", "_")))
    assert chars("-a") == Chars((("-", "-"), ("a", "a")))
    assert chars("a-", negated=True) == Chars((("a", "a"), ("-", "-")), True)


def test_seq_merges_literals_and_flattens() -> None:
    assert seq("a", "b", seq("c", Ref("x")), "") == Seq((Lit("abc"), Ref("x")))
    assert seq("only") == Lit("only")
    assert seq() == Seq(())


def test_alt_and_opt() -> None:
    assert alt("a") == Lit("a")
    assert alt("a", Ref("b")) == Alt((Lit("a"), Ref("b")))
    assert opt("a") == Repeat(Lit("a"), 0, 1)


def test_regular_rules_exclude_recursion_and_what_uses_it() -> None:
    rules = {
        "word": Repeat(chars("a-z"), 1),
        "pair": seq(Ref("word"), " ", Ref("word")),
        "list": seq("[", opt(Ref("item")), "]"),
        "item": alt(Ref("word"), Ref("list")),
        "uses": seq(Ref("item"), "!"),
    }
    assert regular_rules(rules) == {"word", "pair"}


def test_used_rules_in_first_reference_order_once_each() -> None:
    rules = {"a": seq(Ref("b"), Ref("c")), "b": Ref("c"), "c": Lit("x"), "unused": Lit("y")}
    assert list(used_rules(seq(Ref("a"), Ref("b")), rules)) == ["a", "b", "c"]
