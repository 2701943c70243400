"""A signature as an adapter reads it on every call, computed once per signature and options.

`Plan` holds the inputs and outputs in order, which inputs are converted (media, tools),
the system message and the reminder; `plain_user_content` writes a user message from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any

from structio.adapters.inputs import holds_value_types
from structio.rendering.formatting import formatting_class, input_text
from structio.rendering.memo import RenderCache, freeze_fields
from structio.rendering.prompt import Part
from structio.signatures.field import SignatureField
from structio.signatures.history import History
from structio.signatures.signature import Signature

__all__ = ["Plan", "demo_key", "history_key", "plain_user_content", "renamed"]


class Plan:
    """Everything about a signature that an adapter needs on every call, computed once."""

    __slots__ = (
        "all_inputs",
        "coerced",
        "custom_user",
        "history",
        "input_formats",
        "input_names",
        "inputs",
        "outputs",
        "reminder",
        "rendered",
        "required_inputs",
        "system",
        "system_part",
    )

    def __init__(
        self, sig: type[Signature], system: str, reminder: str, *, custom_user: bool
    ) -> None:
        """Read what every call needs of ``sig``.

        Args:
            sig: The signature.
            system: The adapter's system message for it.
            reminder: The adapter's reminder that ends each request.
            custom_user: Whether the adapter's class writes user messages its own way.
        """
        self.inputs: tuple[tuple[str, SignatureField, bool], ...] = tuple(
            (name, f, f.annotation is str)
            for name, f in sig.input_fields.items()
            if f.annotation is not History
        )
        self.history: tuple[str, ...] = tuple(
            name for name, f in sig.input_fields.items() if f.annotation is History
        )
        self.input_names = frozenset(sig.input_fields)
        self.input_formats: dict[str, type] = {
            name: klass
            for name, f, _ in self.inputs
            if (klass := formatting_class(f.annotation)) is not None
        }
        self.required_inputs = tuple(name for name, f, _ in self.inputs if f.required)
        # Inputs given as a URL, a path or a plain function become an Image or a Tool.
        self.coerced: tuple[tuple[str, SignatureField], ...] = tuple(
            (name, f) for name, f, _ in self.inputs if holds_value_types(f.annotation)
        )
        self.outputs: tuple[tuple[str, SignatureField, bool], ...] = tuple(
            (name, f, f.annotation is str) for name, f in sig.output_fields.items()
        )
        self.system = system
        self.system_part = Part("system", "system", self.system)
        self.reminder = reminder
        # Whether a subclass changed how user messages look (then its method is used).
        self.custom_user = custom_user
        self.all_inputs = tuple(name for name, _, _ in self.inputs)
        # Demo and history parts by content: they come back on every call.
        self.rendered = RenderCache()


def plain_user_content(
    plan: Plan, inputs: Mapping[str, Any], prefix: str, main_request: bool
) -> str:
    """A user message as the base adapter writes it: input sections, then the reminder."""
    parts = [prefix]
    formats = plan.input_formats
    for name, _, is_str in plan.inputs:
        if name in inputs:
            value = inputs[name]
            text = (
                value
                if type(value) is str
                else input_text(value, str_field=is_str, as_class=formats.get(name))
            )
            parts.append(f"[[ ## {name} ## ]]\n{text}")
    if main_request:
        parts.append(plan.reminder)
    return "\n\n".join(parts).strip()


def demo_key(number: int, missing: str | None, demo: Mapping[str, Any]) -> Hashable:
    """The key of a demo's rendered parts in a plan's render cache."""
    return ("demo", number, missing, freeze_fields(demo))


def history_key(turn: Mapping[str, Any]) -> Hashable:
    """The key of a history turn's rendered parts in a plan's render cache.

    The turn's content alone, not its position: in a sliding window (the last N turns of a
    chat) every turn moves one place per call, and its rendering stays the same but for
    the part names, which `renamed` gives it.
    """
    return ("history", freeze_fields(turn))


# A renamed copy is made through the slots themselves, skipping the frozen dataclass's
# ``__init__`` (a checked ``object.__setattr__`` per field) and ``__post_init__`` (the
# content was split into media parts already): `Adapter.render` of a sliding window renames
# every turn on every call.
_SET_NAME = Part.__dict__["name"].__set__
_OTHER_SLOTS = tuple(
    (Part.__dict__[f.name].__get__, Part.__dict__[f.name].__set__)
    for f in dataclasses.fields(Part)
    if f.name != "name"
)


def renamed(parts: tuple[Part, ...], number: int) -> tuple[Part, ...]:
    """A history turn's parts named for turn ``number`` (``history_<number>_user``...).

    Args:
        parts: The turn's cached parts, named for the position where it was first rendered.
        number: Its position now, from 1.

    Returns:
        ``parts`` themselves where the names are right already, else renamed copies.
    """
    prefix = f"history_{number}_"
    if not parts or parts[0].name.startswith(prefix):
        return parts
    copies = []
    for part in parts:
        copy = object.__new__(Part)
        _SET_NAME(copy, prefix + part.name.split("_", 2)[2])
        for get, set_ in _OTHER_SLOTS:
            set_(copy, get(part))
        copies.append(copy)
    return tuple(copies)
