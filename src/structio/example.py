"""`Example`: one record of data (a row of a dataset), as DSPy's ``dspy.Example`` is.

An example holds named values, read as attributes (``ex.question``) or keys
(``ex["question"]``). ``with_inputs("question")`` says which of them are a program's inputs;
the others are its labels, what a metric compares the program's outputs with. A `Predict`
called with an example sends only its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from structio.exceptions import FormatError

__all__ = ["Demo", "Example", "to_plain"]


class Example:
    """A record of named values, with the names that are inputs marked.

    Built like a dict (``Example(question="2+2?", answer="4")`` or ``Example(record)``); read
    like one or by attribute. ``keys()``, ``values()`` and ``items()`` return lists, as
    DSPy's do.

    Example:
        >>> import structio as sio
        >>> ex = sio.Example(question="2+2?", answer="4").with_inputs("question")
        >>> ex.inputs().toDict(), ex.labels().answer
        ({'question': '2+2?'}, '4')

    Args:
        base: A mapping (or another `Example`, whose inputs are kept) to copy values from.
        **values: More values; they win over those of ``base``.
    """

    _store: dict[str, Any]
    _input_keys: frozenset[str] | None

    def __init__(self, base: Mapping[str, Any] | Example | None = None, /, **values: Any) -> None:
        # Set through object: attribute assignment of a public name stores a value.
        object.__setattr__(self, "_input_keys", None)
        if isinstance(base, Example):
            store = dict(base._store)
            object.__setattr__(self, "_input_keys", base._input_keys)
        elif base is None:
            store = {}
        elif isinstance(base, Mapping):
            store = dict(base)
        else:
            raise TypeError(
                f"Example takes a mapping of names to values (or keywords), not "
                f"{type(base).__name__}"
            )
        store.update(values)
        object.__setattr__(self, "_store", store)

    # -- reading and writing values ---------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not attributes; a private name is never a value,
        # which also keeps copy and pickle (which look up hooks before __init__ ran) safe.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._store[name]
        except KeyError:
            raise AttributeError(
                f"Example has no value {name!r}; its keys: {', '.join(self._store) or 'none'}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            self._store[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self._store[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: str) -> Any:
        return self._store[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._store[key] = value

    def __delitem__(self, key: str) -> None:
        del self._store[key]

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._store))

    def __len__(self) -> int:
        return len(self._store)

    def keys(self) -> list[str]:
        """The names, in order."""
        return list(self._store)

    def values(self) -> list[Any]:
        """The values, in order."""
        return list(self._store.values())

    def items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs, in order."""
        return list(self._store.items())

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when there is none."""
        return self._store.get(key, default)

    # -- inputs and labels ------------------------------------------------------------------

    @property
    def input_keys(self) -> frozenset[str] | None:
        """The names marked as inputs by `with_inputs`; ``None`` before it is called."""
        return self._input_keys

    def with_inputs(self, *keys: str) -> Example:
        """A copy with ``keys`` marked as the inputs; the other values are labels.

        Raises:
            FormatError: A key is not one of the example's (a typo would leave an input
                out of every call).
        """
        unknown = [key for key in keys if key not in self._store]
        if unknown:
            raise FormatError(
                f"with_inputs: {', '.join(repr(k) for k in unknown)} is not a key of the "
                f"example; its keys: {', '.join(self._store) or 'none'}"
            )
        copied = self.copy()
        object.__setattr__(copied, "_input_keys", frozenset(keys))
        return copied

    def inputs(self) -> Example:
        """The input values only (the inputs stay marked).

        Raises:
            FormatError: `with_inputs` was not called, so which values are inputs is unknown.
        """
        marked = self._marked("inputs")
        chosen = Example({k: v for k, v in self._store.items() if k in marked})
        object.__setattr__(chosen, "_input_keys", marked)
        return chosen

    def labels(self) -> Example:
        """The values that are not inputs.

        Raises:
            FormatError: `with_inputs` was not called.
        """
        marked = self._marked("labels")
        return Example({k: v for k, v in self._store.items() if k not in marked})

    def _marked(self, what: str) -> frozenset[str]:
        if self._input_keys is None:
            names = ", ".join(repr(k) for k in self._store)
            raise FormatError(
                f"Example.{what}(): no inputs are marked; call .with_inputs(...) with the "
                f"names of the inputs first (its keys: {names or 'none'})"
            )
        return self._input_keys

    # -- copies -----------------------------------------------------------------------------

    def copy(self, **values: Any) -> Example:
        """A shallow copy, with ``values`` added or replaced (the inputs stay marked)."""
        return Example(self, **values)

    def without(self, *keys: str) -> Example:
        """A copy without ``keys``.

        Raises:
            KeyError: A key is not one of the example's.
        """
        copied = self.copy()
        for key in keys:
            del copied._store[key]
        return copied

    def toDict(self) -> dict[str, Any]:  # noqa: N802 - DSPy's name
        """The values as a plain dict; nested examples and pydantic models as dicts too.

        DSPy's name (``dspy.Example.toDict``), kept for DSPy code.
        """
        return {key: to_plain(value) for key, value in self._store.items()}

    to_dict = toDict

    # -- comparing and showing --------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Example):
            return self._store == other._store
        if isinstance(other, Mapping):
            return self._store == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        # As DSPy's: examples go into sets and dict keys while their values are hashable.
        return hash(frozenset(self._store.items()))

    def __repr__(self) -> str:
        marked = None if self._input_keys is None else set(self._input_keys)
        return f"Example({self._store!r}) (input_keys={marked!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._store, self._input_keys))


MutableMapping.register(Example)


class Demo(dict[str, Any]):
    """A demo as a predictor keeps it: a plain dict of field values, with DSPy's ``toDict``.

    DSPy keeps assigned demos as ``Example`` objects, and its documentation compares them
    with ``demo.toDict()``; structio keeps each as the dict of its checked values.
    """

    __slots__ = ()

    def toDict(self) -> dict[str, Any]:  # noqa: N802 - DSPy's name
        """The values as a plain dict (nested examples and pydantic models as dicts too)."""
        return {key: to_plain(value) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain dict's items: no class of structio needed to read it back.
        return (Demo, (dict(self),))


def _rebuild(store: dict[str, Any], input_keys: Iterable[str] | None) -> Example:
    example = Example(store)
    if input_keys is not None:
        object.__setattr__(example, "_input_keys", frozenset(input_keys))
    return example


def to_plain(value: Any) -> Any:
    """A value as plain data, as DSPy's ``toDict`` makes it: examples and models as dicts."""
    if isinstance(value, Example):
        return value.toDict()
    to_dict = _class_method(value, "toDict")
    if to_dict is not None:
        return to_dict()
    dump = _class_method(value, "model_dump")  # a pydantic model, without importing pydantic
    if dump is not None:
        return dump()
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


def _class_method(value: Any, name: str) -> Callable[[], Any] | None:
    """``value``'s method ``name`` as its class defines it, bound; ``None`` if none does.

    Never an attribute of the instance: a prediction reads its outputs as attributes, and
    an output named ``toDict`` or ``model_dump`` is no method.
    """
    for klass in type(value).__mro__:
        if name in vars(klass):
            found = vars(klass)[name]
            bound = found.__get__(value, type(value)) if hasattr(found, "__get__") else found
            return bound if callable(bound) else None
    return None
