"""The adapters' formats as grammars (`Adapter.grammar`): sections, elements, JSON.

Each builder gives `structio.grammar.ir.Rules` of exactly the text the adapter's
``format_assistant_message_content`` writes for the signature's outputs: the signature the
adapter formats, so outputs that travel natively (a `Native` plan's ``wire`` signature
lacks them) are passed without them by the caller. ``schema`` is the outputs' JSON schema
(`structio.adapters.json_adapter.output_schema`). Grammars are cached per signature,
adapter class, options and ``think``, as plans are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from structio.adapters.fields import text_outputs
from structio.grammar import Grammar
from structio.grammar.ir import Node, Ref, Repeat, Rules, alt, chars, opt, seq
from structio.grammar.json import RuleSet, object_of
from structio.grammar.values import line_free_text, text_value
from structio.parsing.xml_text import escape_text
from structio.signatures.signature import Signature

__all__ = ["chat_rules", "cached_grammar", "json_rules", "xml_rules"]

MARKER = "[[ ## "
COMPLETED = "[[ ## completed ## ]]"


def cached_grammar(
    adapter: object,
    signature: type[Signature],
    think: bool,
    build: Callable[[type[Signature]], Rules],
) -> Grammar:
    """The grammar ``build`` makes for ``signature``, made once per adapter options."""
    options = tuple(sorted((k, v) for k, v in vars(adapter).items() if not k.startswith("_")))
    key = (type(adapter), "grammar", think, options)
    cache = signature.__structio_cache__
    try:
        found: Grammar | None = cache.get(key)
    except TypeError:  # an unhashable option: nothing to key the cache on
        return Grammar(build(signature), think=think)
    if found is None:
        found = cache[key] = Grammar(build(signature), think=think)
    return found


def chat_rules(signature: type[Signature], schema: Mapping[str, Any]) -> Rules:
    """``[[ ## name ## ]]`` sections in order, blank lines between, then the completed marker.

    Each value, with the newline before it and the next marker after it, is one named rule:
    a lexer then reads a free text and its end as one lexeme, which ends at the first marker.
    The adapter strips the whole text, so a blank last value leaves its marker's newline out.
    """
    rules = RuleSet()
    defs = schema.get("$defs", {})
    rules.add("text", lambda: line_free_text(MARKER))
    names = list(signature.output_fields)
    items: list[Node] = []
    for index, name in enumerate(names):
        value = seq("\n", text_value(schema["properties"][name], rules, defs, Ref("text")))
        if index + 1 < len(names):
            field = seq(value, f"\n\n[[ ## {names[index + 1]} ## ]]")
        else:
            blank = text_outputs(signature)[name]  # free text may be blank: then stripped
            field = seq(opt(value) if blank else value, f"\n\n{COMPLETED}\n")
        items.append(rules.put(f"field-{index}", field))
    head = f"[[ ## {names[0]} ## ]]" if names else f"\n\n{COMPLETED}\n"
    return Rules(seq(head, *items), tuple(rules.rules.items()))


def xml_rules(
    signature: type[Signature], schema: Mapping[str, Any], nested: Callable[[Any], bool]
) -> Rules:
    """``<name>`` elements in order, separated by blank lines, their text escaped.

    Text never holds a raw ``<`` (escaping writes ``&lt;``), so a string is ``[^<]*``; a
    nested value (``nested(annotation)``: models, lists, dicts) is elements of elements,
    whose names a grammar does not check (the reading does).
    """
    rules = RuleSet(forbid="<")
    defs = schema.get("$defs", {})
    text = rules.add("xml-text", lambda: Repeat(chars("<", negated=True)))
    blocks: list[Node] = []
    for index, (name, field) in enumerate(signature.output_fields.items()):
        if nested(field.annotation):
            content = _xml_content(rules)
            element = alt(f"<{name} />", seq(f"<{name}>", content, f"</{name}>"))
        else:
            value = text_value(schema["properties"][name], rules, defs, text, escape_text)
            element = rules.put(f"field-{index}", seq(f"<{name}>\n", value, f"\n</{name}>"))
        blocks.append(element if index == 0 else seq("\n\n", element))
    return Rules(seq(*blocks), tuple(rules.rules.items()))


def _xml_content(rules: RuleSet) -> Ref:
    # Each tag is one named (so one lexeme) rule: a lexer must not end "</" or "<item"
    # early while a longer tag could still follow.
    def make() -> Node:
        # Past ASCII, any character may start or continue a name: the writer's tags are
        # Unicode identifiers (``<é>``), and the reading, not the grammar, checks names.
        name = rules.add(
            "xml-name",
            lambda: seq(
                chars("A-Za-z_\u0080-\U0010ffff"), Repeat(chars("A-Za-z0-9_.\u0080-\U0010ffff-"))
            ),
        )
        attribute = seq(' key="', Repeat(chars('"', negated=True)), '"')
        empty = rules.add("xml-empty", lambda: seq("<", name, opt(attribute), " />"))
        opening = rules.add("xml-open", lambda: seq("<", name, opt(attribute), ">"))
        closing = rules.add("xml-close", lambda: seq("</", name, ">"))
        words = rules.add("xml-words", lambda: Repeat(chars("<", negated=True), 1))
        return Repeat(alt(words, empty, seq(opening, Ref("xml-content"), closing)))

    return rules.add("xml-content", make)


def json_rules(signature: type[Signature], schema: Mapping[str, Any]) -> Rules:
    """The outputs as one JSON object (the JSON schema of the outputs as JSON text)."""
    rules = RuleSet()
    root = object_of(schema, rules)
    return Rules(root, tuple(rules.rules.items()))
