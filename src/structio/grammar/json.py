"""A JSON schema (as pydantic writes it) -> grammar IR of the JSON text that fits it.

What a grammar carries: ``$defs``/``$ref`` (also recursive), ``properties`` in declared order
(``required`` ones always, the others each omissible), ``additionalProperties`` (a dict),
``items``/``prefixItems`` with ``minItems``/``maxItems`` when small, ``enum``, ``const``,
``anyOf``/``oneOf``, ``type`` lists, and the scalar types. What it leaves to pydantic, which
validates the value anyway: patterns, numeric bounds, string lengths, formats.

Whitespace between tokens is bounded as llama.cpp's own converter bounds it: nothing, one
space, or a newline and at most 20 spaces or tabs. A small model that starts writing blank
space can then not loop on it forever, while ``json.dumps(..., indent=2)`` fits to a depth
of ten, and compact JSON (``", "``, ``": "``) fits everywhere.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Mapping
from typing import Any

from structio.grammar.ir import Node, Ref, Repeat, Seq, alt, chars, opt, seq

__all__ = ["MAX_SPACE", "RuleSet", "json_value", "object_of", "schema_node"]

MAX_SPACE = 20
"""The most spaces or tabs after a newline between two JSON tokens."""

# Arrays longer than this bound are written with an open repeat: a bound spelled out in
# GBNF (no ``{m,n}``) costs one nested group per item.
_MAX_SPELLED_ITEMS = 16


class RuleSet:
    """Named rules being built: each added once, by name, in order of first use."""

    def __init__(self, *, forbid: str = "") -> None:
        r"""Start an empty set.

        Args:
            forbid: Characters no JSON string may hold raw (XML's ``<``, which its
                escaping never leaves in text); they may still be written as ``\\uXXXX``.
        """
        self.rules: dict[str, Node] = {}
        self.forbid = forbid

    def put(self, name: str, node: Node) -> Ref:
        """The rule ``name``, which is ``node`` (made already: it cannot refer to itself)."""
        self.rules[name] = node
        return Ref(name)

    def add(self, name: str, make: Callable[[], Node]) -> Ref:
        """The rule ``name``, made by ``make()`` the first time (it may refer to itself)."""
        if name not in self.rules:
            self.rules[name] = Seq(())  # a placeholder, so that recursion finds the name
            self.rules[name] = make()
        return Ref(name)


def _space(rules: RuleSet) -> Node:
    ref = rules.add("ws", lambda: alt(" ", seq("\n", Repeat(chars(" \t"), 0, MAX_SPACE))))
    return opt(ref)


def _string(rules: RuleSet) -> Ref:
    def make() -> Node:
        raw = chars('"\\\x00-\x1f' + rules.forbid, negated=True)
        escape = seq("\\", alt(chars('"\\/bfnrt'), seq("u", Repeat(chars("0-9a-fA-F"), 4, 4))))
        return seq('"', Repeat(alt(raw, escape)), '"')

    return rules.add("json-string", make)


def _integer(rules: RuleSet) -> Ref:
    # At most 19 digits: every 64-bit integer, and no endless run of digits.
    return rules.add(
        "json-int", lambda: seq(opt("-"), alt("0", seq(chars("1-9"), Repeat(chars("0-9"), 0, 18))))
    )


def _number(rules: RuleSet) -> Ref:
    def make() -> Node:
        fraction = seq(".", Repeat(chars("0-9"), 1, 20))
        exponent = seq(chars("eE"), opt(chars("-+")), Repeat(chars("0-9"), 1, 3))
        return seq(_integer(rules), opt(fraction), opt(exponent))

    return rules.add("json-number", make)


def json_value(rules: RuleSet) -> Ref:
    """Any JSON value."""

    def make() -> Node:
        ws = _space(rules)
        value = Ref("json-value")
        member = seq(_string(rules), ws, ":", ws, value)
        obj = seq("{", ws, opt(seq(member, Repeat(seq(ws, ",", ws, member)))), ws, "}")
        arr = seq("[", ws, opt(seq(value, Repeat(seq(ws, ",", ws, value)))), ws, "]")
        return alt(obj, arr, _string(rules), _number(rules), "true", "false", "null")

    return rules.add("json-value", make)


def _literal(value: Any) -> str:
    return _json.dumps(value, ensure_ascii=False)


def schema_node(schema: Any, rules: RuleSet, defs: Mapping[str, Any]) -> Node:
    """The JSON text of a value that fits ``schema``.

    Args:
        schema: A JSON schema (a dict, or ``True`` for anything).
        rules: Where named rules (definitions, shared pieces) are added.
        defs: The root's ``$defs``, for ``$ref``.
    """
    if not isinstance(schema, Mapping) or not schema:
        return json_value(rules)
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(name, True)
        # Rule names: ASCII letters, digits and "-" (all llama.cpp's GBNF reads in a name).
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in name).lower()
        return rules.add(f"def-{slug}", lambda: schema_node(target, rules, defs))
    if "const" in schema:
        return seq(_literal(schema["const"]))
    if "enum" in schema:
        return alt(*(_literal(v) for v in schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return alt(*(schema_node(s, rules, defs) for s in schema[key]))
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return schema_node(schema["allOf"][0], rules, defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        return alt(*(schema_node({**schema, "type": k}, rules, defs) for k in kind))
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, rules, defs)
    if kind == "array":
        return _array(schema, rules, defs)
    simple = {
        "string": _string,
        "integer": _integer,
        "number": _number,
    }
    if kind in simple:
        return simple[kind](rules)
    if kind == "boolean":
        return alt("true", "false")
    if kind == "null":
        return seq("null")
    return json_value(rules)


def _object(schema: Mapping[str, Any], rules: RuleSet, defs: Mapping[str, Any]) -> Node:
    ws = _space(rules)
    properties: Mapping[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties", not properties)
    if not properties:
        if extra is False:
            return seq("{", ws, "}")
        member = seq(_string(rules), ws, ":", ws, schema_node(extra, rules, defs))
        return seq("{", ws, opt(seq(member, Repeat(seq(ws, ",", ws, member)))), ws, "}")
    required = set(schema.get("required", ()))
    names = list(properties)
    members = [
        seq(_literal(name), ws, ":", ws, schema_node(properties[name], rules, defs))
        for name in names
    ]
    comma = seq(ws, ",", ws)
    if all(name in required for name in names):
        body: list[Node] = [members[0]]
        for member in members[1:]:
            body.extend((comma, member))
        return seq("{", ws, *body, ws, "}")
    # The first member written has no comma before it: one alternative per possible first
    # member (every one up to the first required), each followed by the later members, the
    # omissible ones optional. All inline (no named rule per tail): llguidance's GBNF reader
    # makes each regular named rule one greedy lexeme, which would race the commas beside it.
    segments = [
        seq(comma, member) if name in required else opt(seq(comma, member))
        for name, member in zip(names, members, strict=False)
    ]
    starts: list[Node] = []
    for i, name in enumerate(names):
        starts.append(seq(members[i], *segments[i + 1 :]))
        if name in required:
            break
    else:
        starts.append(Seq(()))
    return seq("{", ws, alt(*starts), ws, "}")


def _array(schema: Mapping[str, Any], rules: RuleSet, defs: Mapping[str, Any]) -> Node:
    ws = _space(rules)
    comma = seq(ws, ",", ws)
    prefix = schema.get("prefixItems")
    if prefix:
        items = [schema_node(s, rules, defs) for s in prefix]
        body: list[Node] = [items[0]]
        for item in items[1:]:
            body.extend((comma, item))
        if schema.get("items") not in (None, False):
            body.append(Repeat(seq(comma, schema_node(schema["items"], rules, defs))))
        return seq("[", ws, *body, ws, "]")
    item = schema_node(schema.get("items", True), rules, defs)
    low = int(schema.get("minItems", 0))
    high = schema.get("maxItems")
    high = int(high) if isinstance(high, int) and high <= _MAX_SPELLED_ITEMS else None
    low = min(low, _MAX_SPELLED_ITEMS)
    if high == 0:
        return seq("[", ws, "]")
    more = Repeat(seq(comma, item), max(low - 1, 0), None if high is None else high - 1)
    elements = seq(item, more)
    return seq("[", ws, elements if low > 0 else opt(elements), ws, "]")


def object_of(schema: Mapping[str, Any], rules: RuleSet) -> Node:
    """The JSON text of a root schema (its own ``$defs`` resolved)."""
    return schema_node(schema, rules, schema.get("$defs", {}))
