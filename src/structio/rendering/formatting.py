"""Lists and dicts that render as bulleted or numbered lines when put into a prompt.

`BulletedList`, `NumberedList`, `BulletedDict` and `NumberedDict` are ``list`` and ``dict``
(subclasses, generic: ``NumberedList[str]``) in every way but one: interpolated into a
prompt (``f"{items}"``, ``format(items)``, an adapter's input section, a prompt function's
template) they render as lines::

    >>> from structio.rendering.formatting import BulletedList, NumberedDict
    >>> print(f"{BulletedList(['milk', 'eggs'])}")
    - milk
    - eggs
    >>> print(f"{NumberedDict({'first': 'mix', 'then': 'bake'})}")
    1. first: mix
    2. then: bake

The rendering rules:

- Items render with ``format(item, spec)``: strings as they are, numbers as ``str`` (so a
  spec such as ``f"{prices:.2f}"`` applies to every item), other lists, dicts and models as
  compact JSON, and values with a ``__format__`` of their own (these classes included) with
  it.
- An item that renders to several lines keeps its later lines under the item's text,
  indented by the width of the marker, so nested lists read as nested::

      - a
      - - b
        - c

- A dict value that renders to several lines, or is itself one of these classes, starts on
  the next line, indented by the width of the marker::

      - steps:
        1. mix
        2. bake
- An empty list or dict renders as the empty string.

``str()`` and ``repr()`` are not changed: only formatting renders lines.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, TypeVar, cast, get_origin

from structio.rendering.text import format_value, prompt_text

__all__ = ["BulletedDict", "BulletedList", "NumberedDict", "NumberedList", "has_own_format"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class _FormattingList(list[T]):
    """A list that renders as lines; subclasses choose the markers."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Callable[[Any], Any]) -> Any:
        return _list_schema(cls, source, handler)


class _FormattingDict(dict[K, V]):
    """A dict that renders as lines; subclasses choose the markers."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Callable[[Any], Any]) -> Any:
        return _dict_schema(cls, source, handler)


class BulletedList(_FormattingList[T]):
    """A list that renders as ``- item`` lines in a prompt."""

    def __format__(self, format_spec: str) -> str:
        if not format_spec and self and all(type(item) is str for item in self):
            text = "- " + "\n- ".join(cast("list[str]", self))
            if text.count("\n") == len(self) - 1:  # no item spans lines: nothing to indent
                return text
        return _lines(("- " for _ in self), self, format_spec)


class NumberedList(_FormattingList[T]):
    """A list that renders as ``1. item`` lines in a prompt."""

    def __format__(self, format_spec: str) -> str:
        texts = cast("list[str]", self)
        if not format_spec and all(type(item) is str and "\n" not in item for item in texts):
            return "\n".join([f"{i}. {item}" for i, item in enumerate(texts, 1)])
        return _lines((f"{i}. " for i in range(1, len(self) + 1)), self, format_spec)


class BulletedDict(_FormattingDict[K, V]):
    """A dict that renders as ``- key: value`` lines in a prompt."""

    def __format__(self, format_spec: str) -> str:
        return _pair_lines(("- " for _ in self), self, format_spec)


class NumberedDict(_FormattingDict[K, V]):
    """A dict that renders as ``1. key: value`` lines in a prompt."""

    def __format__(self, format_spec: str) -> str:
        return _pair_lines((f"{i}. " for i in range(1, len(self) + 1)), self, format_spec)


FORMATTING_CLASSES: tuple[type, ...] = (BulletedList, NumberedList, BulletedDict, NumberedDict)


def has_own_format(value: Any) -> bool:
    """Whether ``value``'s class defines ``__format__`` outside Python's own library.

    ``str``, numbers, enums, dates... keep their usual rendering; a class of yours (or of a
    third-party library) with a ``__format__`` is rendered with it.
    """
    for klass in type(value).__mro__:
        if "__format__" in klass.__dict__:
            module = klass.__module__.partition(".")[0]
            return module != "builtins" and module not in sys.stdlib_module_names
    return False


def formatting_class(annotation: Any) -> type | None:
    """The formatting class a field's type names (``NumberedList[str]`` -> NumberedList)."""
    origin = get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, FORMATTING_CLASSES):
        return origin
    return None


def as_formatting(value: Any, klass: type) -> Any:
    """``value`` as an instance of ``klass`` when it is the matching plain list or dict."""
    if isinstance(value, klass):
        return value
    if issubclass(klass, list) and isinstance(value, (list, tuple)):
        return klass(value)
    if issubclass(klass, dict) and isinstance(value, Mapping):
        return klass(value)
    return value


def item_text(value: Any, format_spec: str = "") -> str:
    """One item as prompt text (see the module's rules)."""
    if has_own_format(value):
        return format(value, format_spec)
    if isinstance(value, str) and not isinstance(value, Enum):
        return format(value, format_spec)
    if value is None or (isinstance(value, (bool, int, float)) and not isinstance(value, Enum)):
        return format(value, format_spec) if format_spec else str(value)
    return prompt_text(value)


def _lines(markers: Any, items: list[Any], format_spec: str) -> str:
    out: list[str] = []
    for marker, item in zip(markers, items, strict=False):
        # Plain strings, the usual items, skip the general rules (same result, faster).
        text = item if type(item) is str and not format_spec else item_text(item, format_spec)
        if "\n" in text:
            text = text.replace("\n", "\n" + " " * len(marker))
        out.append(marker + text)
    return "\n".join(out)


def _pair_lines(markers: Any, mapping: dict[Any, Any], format_spec: str) -> str:
    out: list[str] = []
    for marker, (key, value) in zip(markers, mapping.items(), strict=False):
        text = item_text(value, format_spec)
        if "\n" in text or (text and isinstance(value, FORMATTING_CLASSES)):
            pad = " " * len(marker)
            out.append(f"{marker}{key}:\n{pad}" + text.replace("\n", "\n" + pad))
        else:
            out.append(f"{marker}{key}: {text}")
    return "\n".join(out)


def _list_schema(cls: type, source: Any, handler: Callable[[Any], Any]) -> Any:
    """Validate as ``list[item]``, then make the list an instance of ``cls``."""
    from typing import get_args

    from pydantic_core import core_schema

    args = get_args(source)
    inner = handler(list[args[0]] if args else list)  # type: ignore[valid-type]
    return core_schema.no_info_after_validator_function(cls, inner)


def _dict_schema(cls: type, source: Any, handler: Callable[[Any], Any]) -> Any:
    """Validate as ``dict[key, value]``, then make the dict an instance of ``cls``."""
    from typing import get_args

    from pydantic_core import core_schema

    args = get_args(source)
    inner = handler(dict[args[0], args[1]] if len(args) == 2 else dict)  # type: ignore[valid-type]
    return core_schema.no_info_after_validator_function(cls, inner)


def input_text(value: Any, *, str_field: bool, as_class: type | None = None) -> str:
    """An input's text, honouring formatting classes and values' own ``__format__``.

    Such values render with their ``__format__`` (a plain list or dict given to a field
    typed with a formatting class becomes one); anything else renders as `format_value`.
    """
    if as_class is not None:
        value = as_formatting(value, as_class)
    t = type(value)
    plain = t is str or t is int or t is float or t is bool or value is None
    if not plain and has_own_format(value):
        return format(value, "")
    return format_value(value, str_field=str_field)
