"""`Reasoning`: an output field type for a model's reasoning.

Declare ``reasoning: structio.Reasoning = OutputField()`` and the field is filled from the
model's native reasoning (``reasoning_content``, thinking blocks) when the model has it,
and from a text section of the answer otherwise. Either way the value is a `Reasoning`,
which is a ``str``; the prompt shows its type as ``str``, as DSPy does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Reasoning"]


class Reasoning(str):
    """A model's reasoning: a ``str`` that an output field of this type is filled with.

    Example::

        class Solve(structio.Signature):
            question: str = structio.InputField()
            reasoning: structio.Reasoning = structio.OutputField()
            answer: int = structio.OutputField()
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Reasoning({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        # Validated as a str, then wrapped: a plain string read from a completion becomes
        # a Reasoning, and JSON dumps it as the string it is.
        return core_schema.no_info_after_validator_function(
            cls,
            core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(
                str, return_schema=core_schema.str_schema()
            ),
        )
