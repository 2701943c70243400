"""IR -> the Lark dialect of llguidance (and of vLLM's ``guidance`` backend).

llguidance lexes before it parses: each string, ``/regex/`` and uppercase terminal is a
lexeme, matched greedily and never backtracked. So every regular rule (no recursion, only
regular rules inside) is written as an uppercase terminal, as llguidance's own GBNF converter
does, and inside other rules each maximal run of regular items is made one terminal: a
repeated one-character lexeme would be slow, and splitting a run into several lexemes would
let a greedy lexeme eat what the next one needs. The root rule is ``start``.
"""

from __future__ import annotations

from structio.grammar.ir import (
    Alt,
    Chars,
    Lit,
    Node,
    Ref,
    Repeat,
    Rules,
    Seq,
    regular_rules,
    used_rules,
)

__all__ = ["to_lark"]

_PRINTABLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _rx_char(char: str) -> str:
    r"""One character in a regex: letters and digits as themselves, the rest as ``\\x{..}``."""
    if char.isascii() and char.isalnum():
        return char
    return f"\\x{{{ord(char):X}}}"


def _literal(text: str) -> str:
    if all(c.isprintable() or c in _PRINTABLE_ESCAPES for c in text):
        return '"' + "".join(_PRINTABLE_ESCAPES.get(c, c) for c in text) + '"'
    return "/" + "".join(_rx_char(c) for c in text) + "/"


def _class(node: Chars) -> str:
    body = "".join(
        _rx_char(low) if low == high else f"{_rx_char(low)}-{_rx_char(high)}"
        for low, high in node.ranges
    )
    return f"/[{'^' if node.negated else ''}{body}]/"


class _Writer:
    """Spells rules, collecting the terminals made of regular runs inside rules."""

    def __init__(self, rules: dict[str, Node]) -> None:
        self.rules = rules
        self.regular = regular_rules(rules)
        self.extra: list[str] = []

    def name(self, name: str) -> str:
        spelled = name.replace("-", "_")
        return spelled.upper() if name in self.regular else spelled.lower()

    def is_regular(self, node: Node) -> bool:
        if isinstance(node, Ref):
            return node.name in self.regular
        if isinstance(node, (Seq, Alt)):
            return all(self.is_regular(item) for item in node.items)
        if isinstance(node, Repeat):
            return self.is_regular(node.item)
        return True

    def terminal(self, node: Node) -> str:
        """A regular node as one lexeme: itself when it is one already, else a new terminal."""
        if isinstance(node, (Lit, Chars, Ref)):
            return self.node(node)
        name = f"T_{len(self.extra)}"
        self.extra.append(f"{name}: {self.node(node)}")
        return name

    def node(self, node: Node, *, in_rule: bool = False) -> str:
        if isinstance(node, Lit):
            return _literal(node.text)
        if isinstance(node, Chars):
            return _class(node)
        if isinstance(node, Ref):
            return self.name(node.name)
        if in_rule and self.is_regular(node):
            return self.terminal(node)
        if isinstance(node, Seq):
            if not node.items:
                return '""'
            return " ".join(self.seq_items(node.items, in_rule))
        if isinstance(node, Alt):
            return " | ".join(self.node(item, in_rule=in_rule) for item in node.items)
        return self.repeat(node, in_rule)

    def seq_items(self, items: tuple[Node, ...], in_rule: bool) -> list[str]:
        out: list[str] = []
        run: list[Node] = []

        def flush() -> None:
            if run:
                node = run[0] if len(run) == 1 else Seq(tuple(run))
                out.append(self.terminal(node))
                run.clear()

        for item in items:
            if in_rule and self.is_regular(item):
                run.append(item)
                continue
            flush()
            text = self.node(item, in_rule=in_rule)
            out.append(f"({text})" if isinstance(item, Alt) else text)
        flush()
        return out

    def repeat(self, node: Repeat, in_rule: bool) -> str:
        inner = self.node(node.item, in_rule=in_rule)
        if not isinstance(node.item, (Lit, Chars, Ref)):
            inner = f"({inner})"
        if (node.low, node.high) == (0, 1):
            return f"{inner}?"
        if node.high is None:
            return f"{inner}*" if node.low == 0 else f"{inner}{{{node.low},}}"
        return f"{inner}{{{node.low},{node.high}}}"


def to_lark(grammar: Rules) -> str:
    """The grammar as llguidance Lark text: ``start`` first, then each rule it uses."""
    rules = grammar.named()
    writer = _Writer(rules)
    lines = [f"start: {writer.node(grammar.root, in_rule=True)}"]
    for name in used_rules(grammar.root, rules):
        lines.append(
            f"{writer.name(name)}: {writer.node(rules[name], in_rule=name not in writer.regular)}"
        )
    return "\n".join([*lines, *writer.extra]) + "\n"
