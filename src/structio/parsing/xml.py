"""XML elements in a completion: where each output is, and its value read from nested elements.

The rules `XMLAdapter` writes and reads by, in one place:

* An output is the first element named after it (``<answer>...</answer>``; case and ``_``/``-``
  drift in the name are forgiven) that is closed. Prose around the elements is ignored, an
  element named after no output is text, and so is anything inside an output's element that
  is not part of its declared structure. An element that is opened and never closed is cut
  off: it, and every output not found before it, gets no value. A later closed element of
  the same output with another value leaves the output with none (`Found.conflicts`).
* Text (a whole ``str`` output, or a leaf of a nested value) is stripped, then its XML
  escapes are decoded **if every ``&`` in it starts one** (``&amp;``, ``&lt;``, ``&gt;``,
  ``&quot;``, ``&apos;``, ``&#10;``, ``&#x1F600;``); otherwise it was written raw and is kept
  as it is. A raw ``<`` that does not close the element is text either way, and a
  ``<![CDATA[...]]>`` section is its content, verbatim. `escape_text` writes text that reads
  back exactly: ``&`` and ``<`` escaped, and whitespace at the edges (which reading strips)
  as character references.
* A nested value follows its declared type (`shape_of`): a list's child elements are its
  items (``<item>`` as written, any tag as read), and several siblings with one name make a
  list; a model's or a dict's children are its fields or keys (``<entry key="...">`` for a key
  that is no tag name). A self-closing element (``<note />``) is no value (``None``) where the
  type admits one, else the type's empty value; an element with empty content is the empty
  value of a list or a dict. Each leaf is read by the shared value rules
  (`structio.parsing.read.read_text`) for its declared type; a leaf that cannot be read stays
  text, so validating the whole value reports it (nothing is made up).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import re
import typing
from collections.abc import Mapping
from typing import Any, NamedTuple

from structio._util.scan import MAX_DEPTH
from structio.parsing.decode import decode_text
from structio.parsing.locate import Found, norm, two_values
from structio.parsing.read import read_text
from structio.parsing.xml_text import (
    _CDATA_CLOSE,
    _CDATA_OPEN,
    _SKELETON_TEXTS,
    _is_placeholder_text,
    escape_text,
    leaf_text,
    quote_attribute,
    unescape,
    written_text,
)
from structio.typemodel.info import core_type, type_info, union_args

__all__ = [
    "Node",
    "Shape",
    "XMLScan",
    "escape_text",
    "find_xml",
    "is_tag_name",
    "leaf_text",
    "quote_attribute",
    "shape_of",
    "unescape",
    "untyped_value",
    "written_text",
]


# -- tags -----------------------------------------------------------------------------------

_NAME = r"[^\W\d][\w.\-]*"
_NAME_RE = re.compile(_NAME)
_TAG = re.compile(
    r"<(/?)(" + _NAME + r")((?:\s+" + _NAME + r"\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'))*)\s*(/?)>"
)
_KEY_ATTR = re.compile(r"\bkey\s*=\s*(?:\"([^\"<]*)\"|'([^'<]*)')")
# How far back an unfinished tag at the end of a stream is waited for.
_TAG_WAIT = 2000


def is_tag_name(name: str) -> bool:
    """Whether a dict key can be written as a tag name (others use ``<entry key="...">``).

    ``think`` and ``thinking`` (any case) cannot: ``<think>`` is a reasoning draft's tag,
    which every reading sets aside before looking for the answer.
    """
    return _NAME_RE.fullmatch(name) is not None and name.lower() not in _DRAFT_TAGS


_DRAFT_TAGS = frozenset({"think", "thinking"})


class Node(NamedTuple):
    """An element as read: its tag, ``key`` attribute, children, and content as written.

    Attributes:
        tag: The tag name as written.
        key: The ``key`` attribute of an ``<entry>`` element, decoded.
        empty: Whether it was self-closing (``<note />``).
        children: Its child elements, when it was read as a structure.
        raw: Its content between the tags, as written.
    """

    tag: str
    key: str | None
    empty: bool
    children: tuple[Node, ...]
    raw: str


class _UnclosedError(Exception):
    """The element's close tag is not in the text (before an enclosing element's close)."""

    def __init__(self, resume: int = -1) -> None:
        super().__init__()
        self.resume = resume  # where a search may go on once more text has come (or -1)


def _is_close(match: re.Match[str]) -> bool:
    return match.group(1) == "/" and not match.group(3) and not match.group(4)


def _same(name: str, tag: str, top: bool) -> bool:
    return name == tag or (top and norm(name) == norm(tag))


def _closes(name: str, closers: frozenset[str]) -> bool:
    """Whether a close tag closes an enclosing element (``closers`` holds normalized names)."""
    return bool(closers) and norm(name) in closers


def _key(match: re.Match[str]) -> str | None:
    if match.group(2) != "entry" or not match.group(3):
        return None
    found = _KEY_ATTR.search(match.group(3))
    if found is None:
        return None
    return unescape(found.group(1) if found.group(1) is not None else found.group(2))


def _may_be_tag(text: str, at: int) -> bool:
    """Whether the ``<`` at ``at``, at the end of a stream, may still become a tag."""
    return text.find(">", at) == -1 and len(text) - at < _TAG_WAIT


def _close_of(
    text: str, start: int, tag: str, closers: frozenset[str], *, top: bool, final: bool
) -> tuple[int, int]:
    """Where the text element opened before ``start`` ends: (content end, element end).

    Its content runs to the first close tag of its own name outside CDATA sections.

    Raises:
        _UnclosedError: An enclosing element (``closers``) closes first, or the text ends first.
    """
    position = start
    while True:
        at = text.find("<", position)
        if at == -1:
            raise _UnclosedError(len(text))
        if text.startswith(_CDATA_OPEN, at):
            end = text.find(_CDATA_CLOSE, at + len(_CDATA_OPEN))
            if end != -1:
                position = end + len(_CDATA_CLOSE)
                continue
            if not final:  # it may close in text still to come
                raise _UnclosedError(at)
            # A CDATA section that never closes is text.
        if text.startswith("</", at) or not final:
            match = _TAG.match(text, at)
            if match is not None and _is_close(match):
                name = match.group(2)
                if _same(name, tag, top):
                    return at, match.end()
                if _closes(name, closers):
                    raise _UnclosedError()
            elif match is None and not final and _may_be_tag(text, at):
                raise _UnclosedError(at)
        position = at + 1


_STRUCTURED = frozenset(("list", "tuple", "dict", "model", "any"))


def _element(
    text: str,
    start: int,
    tag: str,
    shape: Shape,
    closers: frozenset[str],
    *,
    top: bool = False,
    depth: int = 0,
    key: str | None = None,
) -> tuple[Node, int]:
    """The element whose content starts at ``start``, read as its shape says; and its end.

    A structure whose children do not close reads as its own text, if that closes.

    Raises:
        _UnclosedError: The element does not close.
    """
    if shape.kind in _STRUCTURED and depth < MAX_DEPTH:
        try:
            return _structure(text, start, tag, shape, closers, top=top, depth=depth, key=key)
        except _UnclosedError:
            pass
    end, after = _close_of(text, start, tag, closers, top=top, final=True)
    return Node(tag, key, False, (), text[start:end]), after


def _structure(
    text: str,
    start: int,
    tag: str,
    shape: Shape,
    closers: frozenset[str],
    *,
    top: bool,
    depth: int,
    key: str | None,
) -> tuple[Node, int]:
    children: list[Node] = []
    inner = closers | {norm(tag)}
    position = start
    while True:
        at = text.find("<", position)
        if at == -1:
            raise _UnclosedError()
        if text.startswith(_CDATA_OPEN, at):
            end = text.find(_CDATA_CLOSE, at + len(_CDATA_OPEN))
            if end != -1:
                position = end + len(_CDATA_CLOSE)
                continue
        match = _TAG.match(text, at)
        if match is None:
            position = at + 1
            continue
        name = match.group(2)
        if match.group(1):
            if not _is_close(match):
                position = at + 1
            elif _same(name, tag, top):
                return Node(tag, key, False, tuple(children), text[start:at]), match.end()
            elif _closes(name, closers):
                raise _UnclosedError()
            else:
                position = match.end()  # a stray close tag: text
            continue
        child_key = _key(match)
        if match.group(4):
            children.append(Node(name, child_key, True, (), ""))
            position = match.end()
            continue
        child, position = _element(
            text,
            match.end(),
            name,
            shape.child(name, len(children)),
            inner,
            depth=depth + 1,
            key=child_key,
        )
        children.append(child)


# -- shapes ---------------------------------------------------------------------------------


class Shape:
    """How a declared type is written as XML: a leaf, or a structure of child elements.

    Attributes:
        annotation: The declared type.
        kind: ``"leaf"`` (text), ``"list"``, ``"tuple"`` (fixed items), ``"dict"``,
            ``"model"`` (a pydantic model, TypedDict or dataclass: one child per field) or
            ``"any"`` (no declared structure: read from what is written).
        optional: Whether the type admits ``None``.
    """

    __slots__ = ("_args", "annotation", "kind", "optional")

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation
        self.optional = type_info(annotation).optional
        self.kind, self._args = _kind(annotation)

    def child(self, tag: str, index: int) -> Shape:
        """The shape of a child element: a list's item, a field, a dict's value."""
        kind, args = self.kind, self._args
        if kind == "list":
            return shape_of(args)
        if kind == "tuple":
            return shape_of(args[index]) if index < len(args) else ANY
        if kind == "dict":
            return shape_of(args)
        if kind == "model":
            return shape_of(args[tag]) if tag in args else ANY
        return ANY

    def has_field(self, name: str) -> bool:
        """Whether a model-like type has a field of this name."""
        return self.kind == "model" and name in self._args

    def item(self, index: int = 0) -> Shape:
        """The shape of a list's (or a tuple's) item at ``index``."""
        return self.child("item", index)

    @property
    def untyped(self) -> bool:
        """Whether the type says nothing about the value (``Any``, ``object``)."""
        return self.annotation is typing.Any or self.annotation is object

    def __repr__(self) -> str:
        return f"Shape({self.kind}, {self.annotation!r})"


def _own_model(klass: type) -> bool:
    """Whether a model is one of structio's own types (`ToolCalls`...): values, not structures."""
    module = klass.__module__
    return module == "structio" or module.startswith("structio.")


def _kind(annotation: Any) -> tuple[str, Any]:
    core = core_type(annotation)
    if core is typing.Any or core is object:
        return "any", None
    members = [m for m in union_args(core) if m is not type(None)]
    if members:  # a union of several types: structured if any of them is
        structured = any(_kind(member)[0] != "leaf" for member in members)
        return ("any" if structured else "leaf"), None
    origin = typing.get_origin(core)
    args = typing.get_args(core)
    if origin is None and isinstance(core, type):
        origin_class: Any = core
        args = ()
    else:
        origin_class = origin
    if origin_class in (list, set, frozenset) or origin_class in (
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        collections.abc.Set,
        collections.abc.MutableSet,
        collections.abc.Collection,
        collections.abc.Iterable,
    ):
        return "list", args[0] if args else typing.Any
    if origin_class is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return "list", args[0] if args else typing.Any
        return "tuple", args
    if origin_class in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        return "dict", args[1] if len(args) == 2 else typing.Any
    if origin is None and isinstance(core, type):
        fields = _fields(core)
        if fields is not None:
            return "model", fields
    return "leaf", None


def _fields(klass: type) -> dict[str, Any] | None:
    """The fields of a pydantic model, TypedDict or dataclass, by name; else ``None``."""
    from pydantic import BaseModel

    if issubclass(klass, BaseModel):
        if _own_model(klass):
            return None
        return {name: f.annotation for name, f in klass.model_fields.items()}
    if _is_typeddict(klass) or dataclasses.is_dataclass(klass):
        try:
            return dict(typing.get_type_hints(klass))
        except Exception:  # unresolvable forward references: read what is written
            return dict.fromkeys(getattr(klass, "__annotations__", {}), typing.Any)
    return None


def _is_typeddict(klass: type) -> bool:
    import typing_extensions

    return typing.is_typeddict(klass) or typing_extensions.is_typeddict(klass)


@functools.lru_cache(maxsize=1024)
def _cached_shape(annotation: Any) -> Shape:
    return Shape(annotation)


def shape_of(annotation: Any) -> Shape:
    """The (cached) `Shape` of a declared type."""
    try:
        return _cached_shape(annotation)
    except TypeError:  # an unhashable annotation
        return Shape(annotation)


ANY = Shape(typing.Any)

# -- values ---------------------------------------------------------------------------------

_OMIT: Any = object()  # a field written as no value where the type has none: left out


def _empty(shape: Shape) -> Any:
    """The value of a self-closing element where the type admits no ``None``."""
    if shape.kind in ("list", "tuple"):
        return []
    if shape.kind in ("dict", "model"):
        return {}
    if type_info(shape.annotation).accepts_any_text:
        return ""
    return _OMIT


def _read_leaf(shape: Shape, text: str) -> Any:
    """A leaf's text read for its type; text that cannot be read is kept as it is."""
    if shape.untyped:
        return untyped_value(text)
    try:
        return read_text(type_info(shape.annotation), text)
    except ValueError:
        return text  # validating the whole value reports it


def untyped_value(text: str) -> Any:
    """A leaf of no declared type: JSON-ish text decoded (``1``, ``true``), else the text."""
    try:
        return decode_text(text)
    except ValueError:
        return text


# The text of one element that may be read as a list's one item: one line, no bracket, brace
# or comma.
_ONE_ITEM = re.compile(r"[^\[\]{},\n]+")


def node_value(node: Node, shape: Shape) -> Any:
    """The value an element holds, read as its shape says (may be `_OMIT`, see `_empty`)."""
    if node.empty:
        return None if shape.optional else _empty(shape)
    if node.children and shape.kind in _STRUCTURED:
        return _structured(node, shape)
    text = leaf_text(node.raw)
    kind = shape.kind
    if kind in ("list", "tuple", "dict", "model") and not text:
        if kind == "model":
            return None if shape.optional else {}
        return [] if kind in ("list", "tuple") else {}
    if kind in ("list", "tuple") and not shape.untyped:
        try:
            return read_text(type_info(shape.annotation), text)
        except ValueError:
            if _ONE_ITEM.fullmatch(text) is None:
                # Brackets, commas or lines: a list (or prose) written some other way, which
                # `read_text` refused; never one item holding all of it (`['[1, 2]']`).
                return text  # validating the whole value reports it
            # One element holding one item's text (`<tags>home</tags>`): a list of it.
            return [_read_leaf(shape.item(), text)]
    if shape.optional and node.raw.strip() in _SKELETON_TEXTS:  # as written: `&#46;..` is text
        return None  # the prompt's `...` kept in a leaf that admits None: no value given
    return _read_leaf(shape, text)


def _structured(node: Node, shape: Shape) -> Any:
    children = node.children
    kind = shape.kind
    if kind == "any":
        if all(c.tag == "item" and c.key is None for c in children):
            return [_item(c, ANY) for c in children]
        return _grouped(children, shape)
    if kind in ("list", "tuple"):
        item = shape.item()
        if item.kind == "model" and all(
            c.tag != "item" and item.has_field(c.tag) for c in children
        ):
            # One item written without its `<item>` (`<items><name>lamp</name></items>`).
            return [_item(node, item)]
        return [_item(c, shape.item(i)) for i, c in enumerate(children)]
    return _grouped(children, shape)


def _item(node: Node, shape: Shape) -> Any:
    value = node_value(node, shape)
    return None if value is _OMIT else value


def _grouped(children: tuple[Node, ...], shape: Shape) -> dict[str, Any]:
    """A model's fields or a dict's keys from child elements; siblings of one name a list."""
    groups: dict[str, list[Node]] = {}
    for child in children:
        groups.setdefault(child.key if child.key is not None else child.tag, []).append(child)
    result: dict[str, Any] = {}
    for name, nodes in groups.items():
        child_shape = shape.child(name, 0)
        if len(nodes) == 1:
            value = node_value(nodes[0], child_shape)
        elif child_shape.kind in ("list", "tuple") or child_shape.untyped:
            value = [_item(n, child_shape.item(i)) for i, n in enumerate(nodes)]
        else:
            value = node_value(nodes[0], child_shape)  # one value: the first is read
        if value is not _OMIT:
            result[name] = value
    return result


# -- the outputs ----------------------------------------------------------------------------


def _skeleton(node: Node) -> bool:
    """Whether an element is the structure shown in the prompt (``<a><b>...</b></a>``)."""
    if node.children:
        return all(_skeleton(child) for child in node.children)
    return not node.empty and node.raw.strip() in _SKELETON_TEXTS


def _placeholder(node: Node, name: str, shape: Shape) -> bool:
    if node.empty:
        return False
    if node.children:
        return shape.kind in _STRUCTURED and _skeleton(node)
    text = node.raw.strip()
    return _is_placeholder_text(text, name) or (
        shape.kind in _STRUCTURED and text in _SKELETON_TEXTS
    )


class _Open(NamedTuple):
    name: str
    tag: str
    start: int


class XMLScan:
    """Reads the outputs' elements from a text, as far as it goes (a stream's text so far).

    Args:
        outputs: Each output's name and declared type.
    """

    def __init__(self, outputs: Mapping[str, Any]) -> None:
        self.names = tuple(outputs)
        self.by_norm = {norm(name): name for name in outputs}
        self.shapes = {name: shape_of(annotation) for name, annotation in outputs.items()}
        #: The element read for each output found.
        self.nodes: dict[str, Node] = {}
        #: Where reading goes on.
        self.position = 0
        #: The output whose element is open (its name, tag and where its content starts).
        self.current: _Open | None = None
        self._search = 0

    def advance(self, text: str, *, final: bool) -> list[str]:
        """Read on through ``text`` (the text so far, which only grows); outputs completed.

        With ``final=False`` a tag the text may not hold whole yet is waited for.
        """
        done: list[str] = []
        while len(self.nodes) < len(self.names):
            if self.current is None:
                if not self._open(text, final, done):
                    break
            elif not self._close(text, final, done):
                break
        return done

    def _open(self, text: str, final: bool, done: list[str]) -> bool:
        while True:
            at = text.find("<", self.position)
            if at == -1:
                self.position = len(text)
                return False
            match = _TAG.match(text, at)
            if match is None:
                if not final and _may_be_tag(text, at):
                    self.position = at
                    return False
                self.position = at + 1
                continue
            self.position = match.end()
            name = self.by_norm.get(norm(match.group(2)))
            if match.group(1) or name is None or name in self.nodes:
                continue
            if match.group(4):
                self._found(name, Node(match.group(2), None, True, (), ""), done)
                return True
            self.current = _Open(name, match.group(2), match.end())
            self._search = match.end()
            return True

    def _close(self, text: str, final: bool, done: list[str]) -> bool:
        current = typing.cast(_Open, self.current)
        try:
            end, after = _close_of(
                text, self._search, current.tag, frozenset(), top=True, final=final
            )
        except _UnclosedError as unclosed:
            if unclosed.resume != -1:
                self._search = unclosed.resume
            return False
        shape = self.shapes[current.name]
        if shape.kind in _STRUCTURED and not final:
            try:
                node, after = _structure(
                    text,
                    current.start,
                    current.tag,
                    shape,
                    frozenset(),
                    top=True,
                    depth=0,
                    key=None,
                )
            except _UnclosedError:
                # Its children do not close in the text so far, but more text may close them
                # (`<tags><tags></tags>` may go on `</tags>`): read as its own text now, it
                # could be read otherwise at the end. Try again at its next close tag.
                self._search = after
                return False
        elif shape.kind in _STRUCTURED:
            node, after = _element(text, current.start, current.tag, shape, frozenset(), top=True)
        else:
            node = Node(current.tag, None, False, (), text[current.start : end])
        self.current = None
        self.position = after
        self._found(current.name, node, done)
        return True

    def _found(self, name: str, node: Node, done: list[str]) -> None:
        if _placeholder(node, name, self.shapes[name]):
            return  # the structure echoed from the prompt, not a value
        self.nodes[name] = node
        done.append(name)

    def found(self) -> Found | None:
        """Where the outputs are, as `Found`; ``None`` if no output's element was opened."""
        if not self.nodes and self.current is None:
            return None
        found = Found(how="XML")
        for name, node in self.nodes.items():  # in the order they were written
            found.texts[name] = output_value(node, self.shapes[name])
        if self.current is not None:  # everything after its open tag is inside it
            found.cut_off.update(name for name in self.names if name not in self.nodes)
        return found


def output_value(node: Node, shape: Shape) -> Any:
    """What `Found.texts` holds for an output's element.

    The text of a leaf (read by `parsing.read` as any section's text); the value a nested
    structure holds; ``None`` (not given) for a self-closing element where the type has no
    empty value.
    """
    if shape.kind == "leaf" and not node.empty:
        return leaf_text(node.raw)
    value = node_value(node, shape)
    return None if value is _OMIT else value


def find_xml(text: str, outputs: Mapping[str, Any]) -> Found | None:
    """Read the outputs' elements from a completion; ``None`` if no output has one.

    Args:
        text: The completion, drafts and fences set aside.
        outputs: Each output's name and declared type.
    """
    if "<" not in text:
        return None
    scan = XMLScan(outputs)
    scan.advance(text, final=True)
    found = scan.found()
    if found is not None and scan.current is None and found.texts:
        _repeated(text, scan.position, outputs, found)
    return found


def _repeated(text: str, position: int, outputs: Mapping[str, Any], found: Found) -> None:
    """Refuse each output whose element comes again, closed, with another value.

    The first element of an output is its value only when no later one contradicts it:
    two different values give the output none (`Found.conflicts`), as two sections or a
    JSON key given twice do. An element repeated with the same value, an echoed
    placeholder and an element left open at the end change nothing.
    """
    while position < len(text) and "<" in text[position:]:
        rest = XMLScan(outputs)
        rest.advance(text[position:], final=True)
        if not rest.nodes:
            return
        for name, node in rest.nodes.items():
            if name not in found.texts or name in found.conflicts:
                continue
            value = output_value(node, rest.shapes[name])
            first = found.texts[name]
            if value != first:
                shown = [v if isinstance(v, str) else repr(v) for v in (first, value)]
                found.conflicts[name] = (shown[0], two_values(*shown))
        for name in found.conflicts:
            found.texts.pop(name, None)
        if rest.current is not None:
            return
        position += rest.position
