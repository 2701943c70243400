"""Checking grammars offline with llguidance and a tokenizer of one token per byte."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import llguidance
from llguidance.gbnf_to_lark import gbnf_to_lark

from structio.grammar import Grammar

__all__ = ["SYNTAXES", "accepts", "compiled"]

SYNTAXES = ("lark", "gbnf")


class _Bytes:
    """A tokenizer whose tokens are the 256 bytes, and an end-of-sequence token."""

    eos_token_id = 256
    bos_token_id = None
    tokens: ClassVar[list[bytes]] = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids: ClassVar[list[int]] = [256]

    def __call__(self, text: Any) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode())


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()))


@functools.lru_cache(maxsize=256)
def _matcher(text: str, syntax: str) -> llguidance.LLMatcher:
    lark = text if syntax == "lark" else gbnf_to_lark(text)
    compiled = llguidance.LLMatcher.grammar_from_lark(lark)
    error = llguidance.LLMatcher.validate_grammar(compiled, TOKENIZER)
    assert not error, f"{syntax} grammar refused: {error}\n{text}"
    matcher = llguidance.LLMatcher(TOKENIZER, compiled, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return matcher


def compiled(grammar: Grammar, syntax: str) -> llguidance.LLMatcher:
    """A fresh matcher of the grammar, from its Lark text or its GBNF text (converted).

    GBNF goes through llguidance's own GBNF converter, as llama.cpp built with llguidance
    reads it.
    """
    text = grammar.lark() if syntax == "lark" else grammar.gbnf()
    return _matcher(text, syntax).deep_copy()


def accepts(grammar: Grammar, text: str, syntax: str = "lark") -> bool:
    """Whether the whole ``text`` is a complete sentence of the grammar."""
    matcher = compiled(grammar, syntax)
    return (
        matcher.consume_tokens(list(text.encode()))
        and matcher.is_accepting()
        and not matcher.is_error()
    )
