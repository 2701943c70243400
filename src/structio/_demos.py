"""Checking a `Predict`'s demos against its signature, and demos as saved data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, SupportsIndex, overload

from structio._util.data import jsonable
from structio.example import Demo
from structio.exceptions import FormatError
from structio.parsing.read import read_text
from structio.signatures.history import History
from structio.signatures.signature import Signature, unknown_fields_message
from structio.typemodel.info import type_info

__all__ = [
    "DemoList",
    "InvalidFieldError",
    "checked_demos",
    "demo_from_data",
    "demo_to_data",
    "typed_values",
]


class InvalidFieldError(ValueError):
    """A value of an example that does not fit its field (``field`` names it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def typed_values(
    signature: type[Signature], example: Mapping[str, Any], *, from_text: bool = False
) -> dict[str, Any]:
    """An example's values converted to their fields' types.

    ``None`` is kept (a value not given). A ``str`` field also takes a list of strings
    (shown as numbered passages, as the adapters do). With ``from_text`` the values are
    text (a CSV cell): an empty cell is ``None`` and other types are read from the text as
    from a completion (``"4"`` for an int, ``'["a"]'`` for a list).

    Raises:
        InvalidFieldError: A key is not a field of the signature, or a value does not fit.
    """
    fields = signature.fields
    values: dict[str, Any] = {}
    # Keys, then each value: a demo may be a Prediction, whose outputs hide `items`.
    for key in example:
        value = example[key]
        field = fields.get(key)
        if field is None:
            raise InvalidFieldError(str(key), unknown_fields_message(signature, [key], "field"))
        if from_text and value == "":
            value = None
        if value is None or field.annotation is History:
            values[key] = value
            continue
        passages = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        if field.annotation is str and passages:
            values[key] = list(value)
            continue
        info = type_info(field.annotation, tuple(field.constraints.items()))
        try:
            values[key] = (
                read_text(info, value)
                if from_text and isinstance(value, str)
                else info.validate(value)
            )
        except ValueError as exc:
            raise InvalidFieldError(
                str(key), f"field `{key}`: {_shown(value)} is not a valid value: {exc}"
            ) from None
    return values


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def checked_demos(
    signature: type[Signature], demos: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The demos with each value converted to its field's type (see `typed_values`).

    A demo may leave fields out (an incomplete example) and give ``None``.

    Raises:
        FormatError: A demo is not a dict, names a field the signature lacks, or has a
            value that is not of the field's type; the message names the demo's index and
            the field.
    """
    if isinstance(demos, (str, bytes, Mapping)):
        raise FormatError(f"demos must be a list of dicts, not a {type(demos).__name__}")
    return [_checked_demo(signature, demo, index) for index, demo in enumerate(demos)]


def _checked_demo(signature: type[Signature], demo: Any, index: int) -> dict[str, Any]:
    """One demo checked as `checked_demos` checks each (``index`` names it in the message)."""
    if not isinstance(demo, Mapping):
        raise FormatError(
            f"demo {index} must be a dict of field name to value, not {type(demo).__name__}"
        )
    try:
        return Demo(typed_values(signature, demo))  # with DSPy's `toDict`
    except InvalidFieldError as exc:
        raise FormatError(f"demo {index}: {exc}") from None


class DemoList(list[dict[str, Any]]):
    """A predictor's demos: a list that checks every demo put into it.

    Built from demos already checked (`checked_demos`); ``append``, ``extend``, ``insert``,
    ``+=`` and item assignment check the new demos the same way (and store them converted
    to their fields' types), so a misspelled field fails where it is added, never silently
    at call time. A call reads the list as it is: no check per call. Copies (``list(...)``,
    ``.copy()``, pickling one alone) are plain lists.
    """

    __slots__ = ("_signature",)

    def __init__(self, signature: type[Signature], checked: Iterable[dict[str, Any]] = ()) -> None:
        super().__init__(checked)
        self._signature = signature

    def _one(self, demo: Any, index: int) -> dict[str, Any]:
        return _checked_demo(self._signature, demo, index)

    def _many(self, demos: Iterable[Any], start: int) -> list[dict[str, Any]]:
        if isinstance(demos, (str, bytes, Mapping)):
            raise FormatError(f"demos must be a list of dicts, not a {type(demos).__name__}")
        return [self._one(demo, start + offset) for offset, demo in enumerate(demos)]

    def append(self, demo: Any) -> None:
        """Add a demo, checked against the signature."""
        super().append(self._one(demo, len(self)))

    def extend(self, demos: Iterable[Any]) -> None:
        """Add demos, each checked against the signature."""
        super().extend(self._many(demos, len(self)))

    def insert(self, index: SupportsIndex, demo: Any) -> None:
        """Insert a demo, checked against the signature."""
        size, position = len(self), index.__index__()
        if position < 0:  # as list.insert counts: from the end, never before the start
            position = max(position + size, 0)
        super().insert(position, self._one(demo, min(position, size)))

    def __iadd__(self, demos: Iterable[Any]) -> DemoList:  # type: ignore[override, misc]
        self.extend(demos)
        return self

    @overload
    def __setitem__(self, index: SupportsIndex, demo: Any) -> None: ...

    @overload
    def __setitem__(self, index: slice, demo: Iterable[Any]) -> None: ...

    def __setitem__(self, index: SupportsIndex | slice, demo: Any) -> None:
        if isinstance(index, slice):
            start = index.indices(len(self))[0]
            super().__setitem__(index, self._many(demo, start))
        else:
            position = index.__index__()
            super().__setitem__(
                position, self._one(demo, position + len(self) if position < 0 else position)
            )

    def __reduce__(self) -> tuple[Any, ...]:
        # Alone, a copy is a plain list; a `Predict` rebuilds its own on unpickling.
        return (list, (list(self),))


def demo_to_data(signature: type[Signature], demo: Mapping[str, Any]) -> dict[str, Any]:
    """A demo as JSON-ready data (models as dicts, enums as values, dates as text...)."""
    data: dict[str, Any] = {}
    for key, value in demo.items():
        if isinstance(value, History):
            data[key] = {"messages": jsonable(value.messages)}
        else:
            data[key] = jsonable(value)
    return data


def demo_from_data(signature: type[Signature], data: Mapping[str, Any]) -> dict[str, Any]:
    """A saved demo back with History values rebuilt (types are restored when checked)."""
    demo: dict[str, Any] = {}
    for key, value in data.items():
        field = signature.fields.get(key)
        if field is not None and field.annotation is History and isinstance(value, Mapping):
            demo[key] = History(value.get("messages") or [])
        else:
            demo[key] = value
    return demo
