"""A fast reader for the usual shape of a rendered template, with PyYAML as the authority.

A chat template renders hundreds of parts every turn, and PyYAML spends most of a turn
building nodes for them. After rendering, a template's data sits behind placeholders, so
the YAML left to read is the template's own text, which almost always has one shape::

    - name: system              # an item: "- key: value" at column 0
      role: system              # more keys at column 2
      truncation_priority: 1
      content: |                # a literal block, indented 3 or more
        __sio<nonce>_0__

`read_parts` reads exactly that shape and returns ``None`` for anything else (quotes, flow
collections, folded blocks, multi-line plain scalars, anchors, tags, tabs, values YAML
would turn into booleans, floats or dates...), and the caller hands the text to PyYAML.
So it never disagrees with PyYAML on text it accepts; the tests check that on generated
documents.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["read_parts"]

_KEY_LINE = re.compile(r"(- |  )([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
# A character that starts a YAML indicator, a quoted scalar, a tag, an anchor, a comment...
_INDICATOR_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
# First characters for which PyYAML's implicit resolvers may type a plain scalar.
_RESOLVABLE_START = frozenset("!&*+-.0123456789<=FNOTYfnoty~")
_PLAIN_INT = re.compile(r"0|[1-9][0-9]*")
# Characters PyYAML rejects, or reads as line breaks or a byte-order mark.
_UNUSUAL = re.compile("[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_INT_TAG = "tag:yaml.org,2002:int"

_resolved: dict[str, tuple[bool, str | None]] = {}
_text_keys: dict[str, str] = {}


class _UnsupportedError(Exception):
    """The text leaves the shape this reader handles; PyYAML must read it."""


def read_parts(text: str) -> list[tuple[dict[str, Any], int]] | None:
    """The parts of a rendered template as (mapping, 1-based line), or ``None``.

    ``None`` means the text is not of the simple shape; read it with PyYAML, which is also
    what reports errors.
    """
    if _UNUSUAL.search(text):
        return None
    try:
        return _read(text.split("\n"))
    except _UnsupportedError:
        return None


def _read(lines: list[str]) -> list[tuple[dict[str, Any], int]]:
    items: list[tuple[dict[str, Any], int]] = []
    current: dict[str, Any] | None = None
    match_key = _KEY_LINE.fullmatch
    index, count = 0, len(lines)
    while index < count:
        line = lines[index]
        index += 1
        if not line or line[0] == "#" or not line.strip(" "):
            continue
        match = match_key(line)
        if match is None:
            raise _UnsupportedError
        lead, key, rest = match.groups()
        if lead == "- ":
            current = {}
            items.append((current, index))
        elif current is None:
            raise _UnsupportedError
        if not rest or rest[0] != "|":  # "key:" and "key: " alike: an empty value
            text_key = _text_keys.get(key) or _key(key)
            current[text_key] = _plain(rest.strip(" ")) if rest else None
            continue
        if key != "content" or rest.rstrip(" ") not in ("|", "|-", "|+"):
            # Chomping only stops mattering for content, which is stripped.
            raise _UnsupportedError
        # A literal block: its indentation is that of its first non-blank line, which must
        # be 3 columns or more, and no longer than any blank line before it (PyYAML's rules
        # for the other cases are subtle). Leading blank lines only add line breaks, which
        # the stripping of content removes.
        widest_blank = 0
        while index < count and not lines[index].strip(" "):
            widest_blank = max(widest_blank, len(lines[index]))
            index += 1
        if index >= count:
            raise _UnsupportedError
        first = lines[index]
        body = first.lstrip(" ")
        indent = len(first) - len(body)
        if indent < 3 or widest_blank > indent:
            raise _UnsupportedError
        prefix = " " * indent
        block = [body]
        index += 1
        while index < count:
            line = lines[index]
            if line.startswith(prefix):
                block.append(line[indent:])
            elif not line.strip(" "):
                block.append("")
            else:
                break
            index += 1
        current["content"] = "\n".join(block).rstrip("\n") + "\n"
    return items


def _key(key: str) -> str:
    value = _plain(key)
    if not isinstance(value, str):  # "yes", "null"... are not text keys to YAML
        raise _UnsupportedError
    if len(_text_keys) < 1024:
        _text_keys[key] = value
    return value


def _plain(value: str) -> str | None:
    """A one-line plain scalar as PyYAML reads it, or `_UnsupportedError`."""
    if not value:
        return None
    if (
        value[0] in _INDICATOR_START
        or ": " in value
        or " #" in value
        or value[-1] == ":"
        or "\t" in value
    ):
        raise _UnsupportedError
    if value[0] not in _RESOLVABLE_START:
        return value
    known = _resolved.get(value)
    if known is None:
        known = _resolve(value)
        if len(value) <= 32 and len(_resolved) < 4096:  # keys, roles, priorities, names
            _resolved[value] = known
    ok, result = known
    if not ok:
        raise _UnsupportedError
    return result


def _resolve(value: str) -> tuple[bool, str | None]:
    """What PyYAML's implicit resolvers make of a plain scalar, where it is still text."""
    from yaml.nodes import ScalarNode
    from yaml.resolver import Resolver

    # The stubs leave resolve untyped; it returns the tag as a str.
    tag: str = Resolver().resolve(ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    if tag == _STR_TAG:
        return True, value
    if tag == _NULL_TAG:
        return True, None
    if tag == _INT_TAG and _PLAIN_INT.fullmatch(value):
        return True, value  # the int's text is the text itself
    return False, None
