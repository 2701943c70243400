"""A small grammar IR: the text a model may write, before it is spelled GBNF or Lark.

Nodes are frozen values: `Lit` (exact text), `Chars` (one character of a class), `Seq`,
`Alt`, `Repeat` (with bounds) and `Ref` (a named rule). `Rules` is a whole grammar: named
rules and the root. The emitters (`structio.grammar.gbnf`, `structio.grammar.lark`) spell it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

__all__ = [
    "Alt",
    "Chars",
    "Lit",
    "Node",
    "Ref",
    "Repeat",
    "Rules",
    "Seq",
    "alt",
    "chars",
    "opt",
    "refs",
    "regular_rules",
    "seq",
    "used_rules",
]


@dataclass(frozen=True, slots=True)
class Lit:
    """Exactly this text (never empty: an empty sequence is ``Seq(())``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Chars:
    """One character in ``ranges`` (each an inclusive ``(low, high)`` pair), or not in them.

    ``negated`` classes never match a character outside what the model writes anyway;
    they are spelled ``[^...]`` in both syntaxes.
    """

    ranges: tuple[tuple[str, str], ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Seq:
    """Each item in turn; ``Seq(())`` matches the empty text."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    """One of the items."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    """``item`` between ``low`` and ``high`` times (``high`` ``None``: no upper bound)."""

    item: Node
    low: int = 0
    high: int | None = None


@dataclass(frozen=True, slots=True)
class Ref:
    """The rule named ``name`` (names: lowercase letters, digits and ``-``)."""

    name: str


Node = Lit | Chars | Seq | Alt | Repeat | Ref


@dataclass(frozen=True, slots=True)
class Rules:
    """A grammar: the root node and the named rules it refers to, in order."""

    root: Node
    rules: tuple[tuple[str, Node], ...] = ()

    def named(self) -> dict[str, Node]:
        """The rules by name."""
        return dict(self.rules)


def chars(spec: str, *, negated: bool = False) -> Chars:
    """A class from a compact spec: ``"a-z0-9_"`` (a ``-`` between two characters is a range).

    A ``-`` first or last is itself.
    """
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            ranges.append((spec[i], spec[i + 2]))
            i += 3
        else:
            ranges.append((spec[i], spec[i]))
            i += 1
    return Chars(tuple(ranges), negated)


def seq(*items: Node | str) -> Node:
    """A sequence, strings as literals; nested sequences and empty literals flattened."""
    flat: list[Node] = []
    for item in items:
        node = Lit(item) if isinstance(item, str) else item
        if isinstance(node, Seq):
            flat.extend(node.items)
        elif not (isinstance(node, Lit) and not node.text):
            flat.append(node)
    merged: list[Node] = []
    for node in flat:  # adjacent literals as one: fewer lexemes for a lexer
        last = merged[-1] if merged else None
        if isinstance(node, Lit) and isinstance(last, Lit):
            merged[-1] = Lit(last.text + node.text)
        else:
            merged.append(node)
    return merged[0] if len(merged) == 1 else Seq(tuple(merged))


def alt(*items: Node | str) -> Node:
    """One of the items, strings as literals (a single item is itself)."""
    nodes = tuple(Lit(i) if isinstance(i, str) else i for i in items)
    return nodes[0] if len(nodes) == 1 else Alt(nodes)


def opt(item: Node | str) -> Node:
    """``item`` or nothing."""
    return Repeat(Lit(item) if isinstance(item, str) else item, 0, 1)


def _refs(node: Node) -> Iterator[str]:
    if isinstance(node, Ref):
        yield node.name
    elif isinstance(node, (Seq, Alt)):
        for item in node.items:
            yield from _refs(item)
    elif isinstance(node, Repeat):
        yield from _refs(node.item)


def refs(node: Node) -> frozenset[str]:
    """The names of the rules ``node`` refers to directly."""
    return frozenset(_refs(node))


def regular_rules(rules: Mapping[str, Node]) -> frozenset[str]:
    """The rules that are regular: no recursion, and referring to regular rules only.

    A lexer-based engine (llguidance) makes each of them one lexeme; `structio.grammar.lark`
    spells them as terminals, as llguidance's own GBNF converter does.
    """
    regular: set[str] = set()
    pending = dict(rules)
    changed = True
    while changed:
        changed = False
        for name, node in list(pending.items()):
            if refs(node) <= regular:
                regular.add(name)
                del pending[name]
                changed = True
    return frozenset(regular)


def used_rules(root: Node, rules: Mapping[str, Node]) -> Iterable[str]:
    """The rules reachable from ``root``, in first-reference order."""
    seen: dict[str, None] = {}
    stack = list(reversed(list(_refs(root))))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen[name] = None
        stack.extend(reversed(list(_refs(rules[name]))))
    return list(seen)
