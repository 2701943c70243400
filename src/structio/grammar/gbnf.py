r"""IR -> llama.cpp's GBNF, as llama.cpp (llama-cpp-python 0.2.62, April 2024) parses it.

Only ``::=``, ``|``, ``( )``, ``*``, ``+``, ``?``, ``"literals"``, ``[classes]`` (also
``[^...]``) and ``\\x``/``\\u`` escapes are written: bounded repeats (``{m,n}``, which
llama.cpp parses only since mid-2024) are spelled out as nested optionals. The root rule is
``root``.
"""

from __future__ import annotations

from structio.grammar.ir import Alt, Chars, Lit, Node, Ref, Repeat, Rules, Seq, used_rules

__all__ = ["to_gbnf"]

# What must be escaped: in literals the quote and the backslash, in classes also what
# means something there (``]``, ``[``, ``^``, ``-``); control characters everywhere.
_LITERAL_SPECIAL = frozenset('"\\')
_CLASS_SPECIAL = frozenset('"\\[]^-')


def _escape(char: str, special: frozenset[str]) -> str:
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    if char in special or ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02X}"
    return char


def _literal(text: str) -> str:
    return '"' + "".join(_escape(c, _LITERAL_SPECIAL) for c in text) + '"'


def _class(node: Chars) -> str:
    body = "".join(
        _escape(low, _CLASS_SPECIAL)
        if low == high
        else f"{_escape(low, _CLASS_SPECIAL)}-{_escape(high, _CLASS_SPECIAL)}"
        for low, high in node.ranges
    )
    return f"[{'^' if node.negated else ''}{body}]"


def _atom(node: Node) -> str:
    """``node`` as one unit that a postfix operator can follow."""
    text = _node(node)
    if isinstance(node, (Lit, Chars, Ref)):
        return text
    return f"({text})"


def _repeat(node: Repeat) -> str:
    item = _atom(node.item)
    required = [item] * node.low
    if node.high is None:
        if node.low == 0:
            return f"{item}*"
        return " ".join([*required[:-1], f"{item}+"])
    extra = node.high - node.low
    tail = ""
    for _ in range(extra):  # nested optionals: x (x (x)?)? for up to three more
        tail = f"({item} {tail})?" if tail else f"{item}?"
    return " ".join([*required, tail]).strip() if required or tail else '""'


def _node(node: Node) -> str:
    if isinstance(node, Lit):
        return _literal(node.text)
    if isinstance(node, Chars):
        return _class(node)
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Seq):
        if not node.items:
            return '""'
        return " ".join(_alt_atom(item) for item in node.items)
    if isinstance(node, Alt):
        return " | ".join(_node(item) for item in node.items)
    return _repeat(node)


def _alt_atom(node: Node) -> str:
    """A sequence item: alternatives are parenthesized, everything else binds tighter."""
    return f"({_node(node)})" if isinstance(node, Alt) else _node(node)


def to_gbnf(grammar: Rules) -> str:
    """The grammar as GBNF text: ``root`` first, then each rule it uses."""
    rules = grammar.named()
    lines = [f"root ::= {_node(grammar.root)}"]
    lines.extend(f"{name} ::= {_node(rules[name])}" for name in used_rules(grammar.root, rules))
    return "\n".join(lines) + "\n"
