"""Parse string specs such as ``"context: list[str], question -> answer: int"``.

Types are resolved by walking the expression's syntax tree, never by ``eval``: a spec may
come from a config file or a command line. Names resolve, in order, from ``custom_types``,
the `typing` names and the builtin types, structio's own types, the calling code's
variables, and (for dotted names) importable modules.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import keyword
import operator
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from structio.exceptions import SignatureError
from structio.media import Audio, File, Image
from structio.reasoning import Reasoning
from structio.signatures.field import MISSING
from structio.signatures.history import History

__all__ = ["ParsedField", "parse_spec", "resolve_type"]

_BUILTIN_TYPES = (
    "int",
    "str",
    "float",
    "bool",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "complex",
    "bytes",
    "bytearray",
    "object",
)


def _base_namespace() -> dict[str, Any]:
    names: dict[str, Any] = {
        name: getattr(typing, name)
        for name in typing.__all__
        if name[:1].isupper() and hasattr(typing, name)
    }
    names.update({name: getattr(builtins, name) for name in _BUILTIN_TYPES})
    names["NoneType"] = type(None)
    names["History"] = History
    names.update(Image=Image, Audio=Audio, File=File, Reasoning=Reasoning)
    return names


# structio's tool types are pydantic models: loaded when a spec first names one.
_LAZY_TYPES = frozenset(("Tool", "ToolCall", "ToolCalls"))


def _lazy_type(name: str) -> Any:
    from structio import tools

    return getattr(tools, name)


_NAMESPACE = _base_namespace()


@dataclass(frozen=True)
class ParsedField:
    """One field of a string spec: name, resolved type and default."""

    name: str
    annotation: Any
    type_given: bool
    default: Any = MISSING


def parse_spec(
    spec: str,
    *,
    custom_types: Mapping[str, Any] | None = None,
    caller_ns: Mapping[str, Any] | None = None,
) -> tuple[list[ParsedField], list[ParsedField]]:
    """Split a spec into its input and output fields.

    Raises:
        SignatureError: The spec is malformed (the message quotes the offending token) or
            names a type that cannot be resolved.
    """
    if not isinstance(spec, str):
        raise SignatureError(f"a signature spec must be a string, not {type(spec).__name__}")
    unbalanced = _unbalanced(spec)
    if unbalanced:
        raise SignatureError(f"invalid signature spec {spec!r}: {unbalanced}")
    arrows = _split_top_level(spec, "->")
    if len(arrows) != 2:
        found = len(arrows) - 1
        raise SignatureError(
            f"invalid signature spec {spec!r}: it must contain exactly one '->' between "
            f"inputs and outputs (found {found}), e.g. 'question -> answer: int'"
        )
    sides = [
        _parse_side(side, spec, kind, custom_types, caller_ns)
        for side, kind in zip(arrows, ("input", "output"), strict=True)
    ]
    if not sides[1]:
        # Nothing to ask the model for: every call would fail, blaming the model.
        raise SignatureError(
            f"invalid signature spec {spec!r}: it has no outputs; name what the model should "
            "give after '->', e.g. 'question -> answer'"
        )
    return sides[0], sides[1]


def _parse_side(
    side: str,
    spec: str,
    kind: str,
    custom_types: Mapping[str, Any] | None,
    caller_ns: Mapping[str, Any] | None,
) -> list[ParsedField]:
    if not side.strip():
        return []  # no inputs (or outputs: refused by the caller)
    items = _split_top_level(side, ",")
    fields: list[ParsedField] = []
    for index, item in enumerate(items):
        text = item.strip()
        if not text:
            # A comma with no name after it (or before it) is a name left out, not style.
            where = (
                "after the last comma"
                if index == len(items) - 1
                else "before the first comma"
                if index == 0
                else "between commas"
            )
            raise SignatureError(
                f"invalid signature spec {spec!r}: empty field name {where} in the {kind}s; "
                "write a name there or remove the comma"
            )
        fields.append(_parse_item(text, spec, custom_types, caller_ns))
    return fields


def _parse_item(
    text: str,
    spec: str,
    custom_types: Mapping[str, Any] | None,
    caller_ns: Mapping[str, Any] | None,
) -> ParsedField:
    default_parts = _split_top_level(text, "=")
    default: Any = MISSING
    if len(default_parts) > 2:
        raise SignatureError(f"invalid signature spec {spec!r}: too many '=' in {text!r}")
    if len(default_parts) == 2:
        text, default_text = default_parts[0].strip(), default_parts[1].strip()
        try:
            default = ast.literal_eval(default_text)
        except (ValueError, SyntaxError):
            raise SignatureError(
                f"invalid signature spec {spec!r}: the default {default_text!r} is not a "
                "Python literal (a number, string, list, dict, True/False or None)"
            ) from None
    name_parts = _split_top_level(text, ":")
    name = name_parts[0].strip()
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        token = name.split()[1] if len(name.split()) > 1 else name
        raise SignatureError(
            f"invalid signature spec {spec!r}: {name!r} is not a field name (unexpected "
            f"token {token!r}); write fields as 'name' or 'name: type', separated by commas, "
            "with names that are Python identifiers not starting with '_'"
        )
    if len(name_parts) == 1:
        return ParsedField(name, str, False, default)
    type_text = ":".join(name_parts[1:]).strip()
    if not type_text:
        raise SignatureError(f"invalid signature spec {spec!r}: field `{name}` has ':' but no type")
    annotation = resolve_type(
        type_text, custom_types=custom_types, caller_ns=caller_ns, where=f"field `{name}`"
    )
    return ParsedField(name, annotation, True, default)


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _unbalanced(text: str) -> str | None:
    """Describe the first unbalanced bracket or unclosed quote, or return None."""
    stack: list[tuple[str, int]] = []
    quote: tuple[str, int] | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote[0]:
                quote = None
        elif ch in "'\"":
            quote = (ch, i)
        elif ch in _CLOSERS:
            stack.append((ch, i))
        elif ch in ")]}":
            if not stack or _CLOSERS[stack[-1][0]] != ch:
                return f"unexpected {ch!r} at character {i}"
            stack.pop()
        i += 1
    if quote:
        return f"unclosed quote {quote[0]} opened at character {quote[1]}"
    if stack:
        opener, at = stack[-1]
        return f"unclosed {opener!r} opened at character {at}"
    return None


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and string literals."""
    if not any(ch in text for ch in "([{'\""):
        return text.split(sep)
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def resolve_type(
    text: str,
    *,
    custom_types: Mapping[str, Any] | None = None,
    caller_ns: Mapping[str, Any] | None = None,
    where: str = "type",
) -> Any:
    """Resolve a type expression such as ``dict[str, list[int]] | None`` without ``eval``.

    Raises:
        SignatureError: Bad syntax, an unsupported construct, or an unknown name.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise SignatureError(
            f"invalid type {text!r} for {where}: {exc.msg} (at character {exc.offset or 0})"
        ) from None
    resolver = _Resolver(text, where, custom_types or {}, caller_ns or {})
    return resolver.resolve(tree.body)


class _Resolver:
    def __init__(
        self,
        text: str,
        where: str,
        custom_types: Mapping[str, Any],
        caller_ns: Mapping[str, Any],
    ) -> None:
        self.text = text
        self.where = where
        self.custom_types = custom_types
        self.caller_ns = caller_ns

    def fail(self, node: ast.AST, why: str) -> SignatureError:
        token = ast.get_source_segment(self.text.strip(), node) or ast.dump(node)
        return SignatureError(f"invalid type {self.text!r} for {self.where}: {why} ({token!r})")

    def resolve(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return self.name(node.id, node)
        if isinstance(node, ast.Attribute):
            return self.dotted(node)
        if isinstance(node, ast.Constant):
            if node.value is None:
                return type(None)
            if node.value is Ellipsis:
                return Ellipsis
            raise self.fail(
                node, "a constant is only allowed inside Literal[...] or Annotated[...]"
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.resolve(node.left), self.resolve(node.right)
            return typing.Union[left, right]  # noqa: UP007 - built at run time from two parts
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        raise self.fail(node, "unsupported syntax in a type")

    def name(self, name: str, node: ast.AST) -> Any:
        for namespace in (self.custom_types, _NAMESPACE, self.caller_ns):
            if name in namespace:
                return namespace[name]
        if name in _LAZY_TYPES:
            return _lazy_type(name)
        raise SignatureError(
            f"unknown type name `{name}` in {self.where} ({self.text!r}); pass the class with "
            f"custom_types={{{name!r}: {name}}}, or use a builtin or typing name "
            "(int, list[str], Literal['a', 'b'], Optional[int], ...)"
        )

    def dotted(self, node: ast.Attribute) -> Any:
        parts: list[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            raise self.fail(node, "unsupported dotted name")
        parts.append(cur.id)
        parts.reverse()
        full = ".".join(parts)
        if full in self.custom_types:
            return self.custom_types[full]
        for namespace in (self.custom_types, _NAMESPACE, self.caller_ns):
            if parts[0] in namespace:
                return self.getattrs(namespace[parts[0]], parts[1:], full)
        for cut in range(len(parts) - 1, 0, -1):
            try:
                module = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            return self.getattrs(module, parts[cut:], full)
        raise SignatureError(
            f"unknown type name `{full}` in {self.where} ({self.text!r}); pass it with "
            f"custom_types={{{full!r}: ...}} or make `{'.'.join(parts[:-1])}` importable"
        )

    def getattrs(self, obj: Any, attrs: list[str], full: str) -> Any:
        for attr in attrs:
            if attr.startswith("_") or not hasattr(obj, attr):
                raise SignatureError(
                    f"unknown type name `{full}` in {self.where} ({self.text!r}): "
                    f"`{attr}` not found; pass it with custom_types={{{full!r}: ...}}"
                )
            obj = getattr(obj, attr)
        return obj

    def subscript(self, node: ast.Subscript) -> Any:
        origin = self.resolve(node.value)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin is typing.Literal:
            return typing.Literal[tuple(self.literal(item) for item in items)]
        if origin is typing.Annotated:
            if len(items) < 2:
                raise self.fail(node, "Annotated needs a type and at least one annotation")
            base = self.resolve(items[0])
            metadata = tuple(self.metadata(item) for item in items[1:])
            return operator.getitem(typing.Annotated, (base, *metadata))
        args = tuple(self.resolve(item) for item in items)
        try:
            return origin[args if len(args) != 1 else args[0]]
        except TypeError as exc:
            raise self.fail(node, str(exc)) from None

    def literal(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
        ):
            return -node.operand.value
        if isinstance(node, ast.Attribute):
            return self.dotted(node)  # an enum member, e.g. Literal[Color.RED]
        raise self.fail(node, "Literal[...] takes constants")

    def metadata(self, node: ast.expr) -> Any:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Field"
        ):
            if node.args:
                raise self.fail(node, "Field(...) in a spec takes keyword arguments only")
            kwargs: dict[str, Any] = {}
            for kw in node.keywords:
                if kw.arg is None:
                    raise self.fail(node, "Field(**...) is not supported in a spec")
                try:
                    kwargs[kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    raise self.fail(kw.value, "Field(...) arguments must be literals") from None
            from pydantic import Field

            return Field(**kwargs)
        try:
            return ast.literal_eval(node)
        except ValueError:
            return self.resolve(node)


def is_type_like(obj: Any) -> bool:
    """Whether ``obj`` can be a field's annotation (a class or a typing construct)."""
    if isinstance(obj, type) or obj is typing.Any or obj is None:
        return True
    if typing.get_origin(obj) is not None:
        return True
    return isinstance(obj, (typing.TypeVar, types.UnionType)) or type(obj).__module__ == "typing"
