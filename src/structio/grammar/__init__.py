r"""Grammars of exactly the text an adapter asks a model for, for servers that constrain to one.

llama.cpp (GBNF), llguidance, vLLM and SGLang (Lark) can restrict decoding to a grammar. An
adapter's `Adapter.grammar` hook builds a `Grammar` of its own format from a signature: a
small IR (`structio.grammar.ir`), JSON schemas as JSON text (`structio.grammar.json`) and
values as the text formats write them (`structio.grammar.values`), spelled by
`structio.grammar.gbnf` and `structio.grammar.lark`. Nothing here sends anything.

Example:
    >>> import structio as sio
    >>> grammar = sio.ChatAdapter().grammar(sio.Signature("q -> ok: bool"))
    >>> print(grammar.gbnf(), end="")
    root ::= "[[ ## ok ## ]]" field-0
    field-0 ::= "\n" ("True" | "False") "\n\n[[ ## completed ## ]]\n"
"""

from __future__ import annotations

from structio.grammar.gbnf import to_gbnf
from structio.grammar.ir import Node, Ref, Repeat, Rules, alt, chars, opt, seq
from structio.grammar.lark import to_lark

__all__ = ["THINK_CLOSE", "THINK_OPEN", "Grammar", "text_without"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def text_without(word: str) -> Node:
    """Any text that does not contain ``word`` (whose first character occurs only there).

    Regular, so an engine with a lexer makes it (with ``word`` after it) one lexeme that
    ends at the first ``word``: the text is proper prefixes of ``word`` and other characters,
    each prefix followed by a character that does not continue it.
    """
    first = word[0]
    if first in word[1:]:
        raise ValueError(f"the first character of {word!r} must occur only once in it")
    prefixes = [word[:i] for i in range(1, len(word))]
    broken = alt(
        *(seq(p, chars(first + word[len(p)], negated=True)) for p in prefixes),
    )
    repeated = Repeat(alt(*prefixes))
    return seq(Repeat(alt(chars(first, negated=True), seq(repeated, broken))), repeated)


class Grammar:
    """The text a model may write for one signature in one adapter's format.

    ``think=True`` lets it write a ``<think>...</think>`` draft first (reasoning models do,
    and the adapters read past it), then at most four spaces or newlines. Each syntax is
    spelled once, when first asked for.
    """

    __slots__ = ("_gbnf", "_lark", "rules", "think")

    def __init__(self, rules: Rules, *, think: bool = False) -> None:
        """Make a grammar of ``rules`` (with a draft allowed before it if ``think``)."""
        if think:
            draft = seq(
                THINK_OPEN, text_without(THINK_CLOSE), THINK_CLOSE, opt(Repeat(chars(" \n"), 1, 4))
            )
            rules = Rules(
                seq(Ref("think-draft"), rules.root), (("think-draft", draft), *rules.rules)
            )
        self.rules = rules
        self.think = think
        self._gbnf: str | None = None
        self._lark: str | None = None

    def gbnf(self) -> str:
        """The grammar in llama.cpp's GBNF (root rule ``root``)."""
        if self._gbnf is None:
            self._gbnf = to_gbnf(self.rules)
        return self._gbnf

    def lark(self) -> str:
        """The grammar in llguidance's Lark (root rule ``start``)."""
        if self._lark is None:
            self._lark = to_lark(self.rules)
        return self._lark

    def __repr__(self) -> str:
        return f"Grammar({len(self.rules.rules)} rules, think={self.think})"
