"""A signature as an adapter reads it on every call, computed once per signature and options.

`Plan` holds the inputs and outputs in order, which inputs are converted (media, tools),
the system message and the reminder; `plain_user_content` writes a user message from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from structio.adapters.inputs import holds_value_types
from structio.rendering.formatting import formatting_class, input_text
from structio.rendering.memo import RenderCache, freeze_fields
from structio.rendering.prompt import Part
from structio.signatures.field import SignatureField
from structio.signatures.history import History
from structio.signatures.signature import Signature

__all__ = ["Plan", "demo_key", "history_key", "plain_user_content"]


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


def history_key(number: int, turn: Mapping[str, Any]) -> Hashable:
    """The key of a history turn's rendered parts in a plan's render cache."""
    return ("history", number, freeze_fields(turn))
