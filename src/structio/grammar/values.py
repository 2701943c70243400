"""Grammar IR of one output's value as the text formats write it (sections, elements).

The text formats write a value as `structio.rendering.text.prompt_text` does: a string as
itself, a number with ``str``, ``True``/``False``, ``None``, an enum member or a literal
choice as its value's text, and models, lists and dicts as compact JSON. This module
mirrors that from the type's JSON schema; the one piece each format decides is what free
text may hold (`text_value`'s ``free_text``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from structio.grammar.ir import Node, Repeat, alt, chars, opt, seq
from structio.grammar.json import RuleSet, schema_node

__all__ = ["choice_text", "line_free_text", "text_value"]


def choice_text(value: Any) -> str:
    """A choice (of a ``Literal`` or an enum, as its JSON schema lists it) as text."""
    if value is None:
        return "None"
    return str(value)


def _digits(low: int, high: int) -> Node:
    return Repeat(chars("0-9"), low, high)


def _int_text() -> Node:
    return seq(opt("-"), alt("0", seq(chars("1-9"), _digits(0, 18))))


def _float_text() -> Node:
    # ``str(float)``: digits, a fraction, an exponent (``1e-05``, ``1.5e+16``), inf, nan.
    mantissa = seq(_int_text(), opt(seq(".", _digits(1, 20))))
    exponent = seq(chars("eE"), opt(chars("-+")), _digits(1, 3))
    return alt(seq(mantissa, opt(exponent)), seq(opt("-"), "inf"), "nan")


def text_value(
    schema: Any,
    rules: RuleSet,
    defs: Mapping[str, Any],
    free_text: Node,
    write: Callable[[str], str] = lambda text: text,
) -> Node:
    """The text a text format writes for a value of ``schema``.

    Args:
        schema: The value's JSON schema (pydantic's).
        rules: Where named rules are added.
        defs: The root schema's ``$defs``.
        free_text: Any text the format allows for a string.
        write: How the format writes a fixed text (XML escapes ``&`` and ``<``).
    """
    if not isinstance(schema, Mapping):
        return free_text
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        if isinstance(target, Mapping) and ("enum" in target or target.get("type") != "object"):
            return text_value(target, rules, defs, free_text, write)
        return schema_node(schema, rules, defs)
    if "const" in schema:
        return seq(write(choice_text(schema["const"])))
    if "enum" in schema:
        return alt(*(write(choice_text(v)) for v in schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return alt(*(text_value(s, rules, defs, free_text, write) for s in schema[key]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return alt(
            *(text_value({**schema, "type": k}, rules, defs, free_text, write) for k in kind)
        )
    if kind == "string":
        return free_text
    if kind == "integer":
        return _int_text()
    if kind == "number":
        return _float_text()
    if kind == "boolean":
        return alt("True", "False")
    if kind == "null":
        return seq("None")
    return schema_node(schema, rules, defs)


def line_free_text(marker: str, indent: str = " \t") -> Node:
    """Any text none of whose lines starts with ``marker``, also after ``indent`` characters.

    Written as a regular expression (a line is empty, or its first differing character
    leaves the marker), so that an engine with a lexer makes it one lexeme.
    """
    if not marker:
        raise ValueError("the marker must not be empty")
    tail = Repeat(chars("\n", negated=True))
    line: Node = seq()
    for i in range(len(marker) - 1, -1, -1):
        leaving = "\n" + marker[i] + (indent if i == 0 else "")
        differ = seq(chars(leaving, negated=True), tail)
        # After the whole marker no line may go on: the last character has no way forward.
        line = opt(alt(differ, seq(marker[i], line)) if i < len(marker) - 1 else differ)
    if indent:
        line = seq(Repeat(chars(indent)), line)
    return seq(line, Repeat(seq("\n", line)))
