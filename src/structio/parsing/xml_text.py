"""XML text as `XMLAdapter` writes and reads it: escapes, CDATA, quoted attributes.

Text is stripped, then its escapes are decoded **if every ``&`` in it starts one**;
otherwise it was written raw and is kept as it is. `escape_text` writes text that reads back
exactly. `structio.parsing.xml` reads elements with these rules.
"""

from __future__ import annotations

import re
import typing

from structio.parsing.found import norm

__all__ = ["escape_text", "leaf_text", "quote_attribute", "unescape", "written_text"]

_ENTITY = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
# Each named escape as written, `&amp;` last: the order they are decoded in.
_NAMED_ENTITIES = {f"&{name};": _NAMED[name] for name in ("lt", "gt", "quot", "apos", "amp")}
_CDATA_OPEN = "<![CDATA["
_CDATA_CLOSE = "]]>"
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
# What reading sets aside as the prompt's structure, not a value: an output's `{name}`
# placeholder (with its type note) and the `...` of a nested structure.
_PLACEHOLDER = re.compile(r"^\{(\w+)\}(?:\s+#\s*note:.*)?$", re.DOTALL)
_SKELETON_TEXTS = frozenset(("...", "…"))


def _is_placeholder_text(text: str, name: str) -> bool:
    match = _PLACEHOLDER.match(text)
    return match is not None and norm(match.group(1)) == norm(name)


def _entity_char(match: re.Match[str]) -> str | None:
    decimal, hexadecimal, named = match.groups()
    if named is not None:
        return _NAMED[named]
    point = int(decimal) if decimal is not None else int(hexadecimal, 16)
    if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
        return None
    return chr(point)


# Decoding escapes one by one costs about what 200 characters of string methods do: text
# with more escapes than one in 200 characters is decoded by `_named_only` when it can be.
_CHARS_PER_ESCAPE = 200


def _named_only(text: str, ampersands: int) -> str | None:
    """The text decoded if its ``ampersands`` all start named escapes, else ``None``.

    Such text (what `escape_text` writes) is decoded by string methods, a few passes over
    it, not a Python call per escape (a long answer may hold tens of thousands). ``&amp;``
    goes last, so that the ``&lt;`` it may leave (``&amp;lt;``) stays text.
    """
    written = [(entity, char) for entity, char in _NAMED_ENTITIES.items() if entity in text]
    if sum(text.count(entity) for entity, _ in written) != ampersands:
        return None
    for entity, replacement in written:
        text = text.replace(entity, replacement)
    return text


def _decoded(text: str) -> str | None:
    """The text with its escapes decoded, or ``None`` if some ``&`` starts no escape."""
    if "&" not in text:
        return text
    ampersands = text.count("&")
    if ampersands * _CHARS_PER_ESCAPE > len(text):
        decoded = _named_only(text, ampersands)
        if decoded is not None:
            return decoded
    pieces: list[str] = []
    position = 0
    count = 0
    for match in _ENTITY.finditer(text):
        char = _entity_char(match)
        if char is None:
            return None
        pieces.append(text[position : match.start()])
        pieces.append(char)
        position = match.end()
        count += 1
    if count != ampersands:
        return None
    pieces.append(text[position:])
    return "".join(pieces)


def unescape(text: str) -> str:
    """XML text as the text it holds: escapes decoded if every ``&`` starts one, else as is."""
    decoded = _decoded(text)
    return text if decoded is None else decoded


def leaf_text(raw: str) -> str:
    """An element's content as text: stripped, CDATA sections verbatim, escapes decoded.

    Escapes are decoded only when every ``&`` outside the CDATA sections starts one (see
    `unescape`), so raw text with a bare ``&`` keeps every character as written.
    """
    text = raw.strip()
    if _CDATA_OPEN not in text:
        return unescape(text)
    parts = _CDATA.split(text)  # text, CDATA content, text, ...
    outside = [_decoded(part) for part in parts[0::2]]
    if any(part is None for part in outside):
        return "".join(parts)  # written raw: every character as it is
    parts[0::2] = typing.cast("list[str]", outside)
    return "".join(parts)


# What an attribute value in double quotes cannot hold as it is; whitespace other than a
# space is written as a reference, since XML normalizes it to spaces in attributes.
_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)


def quote_attribute(value: str) -> str:
    """``value`` as a double-quoted XML attribute value that `unescape` reads back exactly."""
    return '"' + value.translate(_ATTRIBUTE_ESCAPES) + '"'


def escape_text(text: str) -> str:
    """Text written so that `leaf_text` reads it back exactly.

    ``&`` and ``<`` are escaped (as DSPy escapes them), and whitespace at either edge, which
    reading strips, is written as character references (``&#32;``, ``&#10;``).
    """
    body = text.replace("&", "&amp;").replace("<", "&lt;")
    if not body or not (body[0].isspace() or body[-1].isspace()):
        return body
    start = len(body) - len(body.lstrip())
    end = len(body.rstrip())
    if end <= start:
        return _references(body)
    return _references(body[:start]) + body[start:end] + _references(body[end:])


def written_text(text: str, name: str | None = None) -> str:
    """`escape_text`, also guarding text that reading would set aside as a placeholder.

    A leaf of exactly ``...`` (the structure shown in the prompt) or, for the output
    ``name``, ``{name}`` (its placeholder) starts with a character reference instead, so it
    is read as the value it is.
    """
    escaped = escape_text(text)
    if escaped in _SKELETON_TEXTS or (name is not None and _is_placeholder_text(escaped, name)):
        return _references(escaped[0]) + escaped[1:]
    return escaped


def _references(text: str) -> str:
    return "".join(f"&#{ord(char)};" for char in text)
