"""`ChainOfThought`: a `Predict` whose model reasons before it answers (DSPy's)."""

from __future__ import annotations

from typing import Any

from structio.adapters.base import SignatureLike
from structio.predict.predictor import Predict, check_outputs
from structio.signatures.field import OutputField, SignatureField
from structio.signatures.signature import (
    SignatureMeta,
    make_signature,
)

__all__ = ["ChainOfThought"]


class ChainOfThought(Predict):
    """A `Predict` that has the model reason before it answers, as DSPy's ``ChainOfThought``.

    The signature gets a ``reasoning: str`` output first, with DSPy's description
    (``${reasoning}``), so the prompt is DSPy's byte for byte and ``pred.reasoning`` holds
    the model's steps. A signature that already has an output named ``reasoning`` is kept
    as it is (so a saved `ChainOfThought` loads back unchanged).

    Example:
        >>> import structio as sio
        >>> cot = sio.ChainOfThought("question -> answer: int")
        >>> list(cot.signature.output_fields)
        ['reasoning', 'answer']

    Args:
        signature: A signature class or a string spec.
        rationale_field: The reasoning field, an `OutputField(...)`, instead of DSPy's.
        rationale_field_type: Its type, when ``rationale_field`` gives none (``str``).
        **options: What `Predict` takes: ``lm=``, ``adapter=``, ``demos=``, request
            parameters...
    """

    def __init__(
        self,
        signature: SignatureLike,
        *,
        rationale_field: SignatureField | None = None,
        rationale_field_type: Any = str,
        **options: Any,
    ) -> None:
        if isinstance(signature, str):
            signature = make_signature(signature)
        if isinstance(signature, SignatureMeta):
            # Before the reasoning is added: a signature of no outputs gets no answer.
            check_outputs(signature, type(self).__name__)
        if isinstance(signature, SignatureMeta) and "reasoning" not in signature.output_fields:
            if rationale_field is None:
                rationale_field = OutputField(desc="${reasoning}")
            elif rationale_field.type_given:
                rationale_field_type = rationale_field.annotation
            signature = signature.prepend("reasoning", rationale_field, rationale_field_type)
        super().__init__(signature, **options)
