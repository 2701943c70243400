"""The inputs of one call of a `Predict`: keywords, an `Example` or a dict."""

from __future__ import annotations

from collections.abc import (
    Mapping,
)
from typing import Any

from structio.example import Example
from structio.exceptions import ConfigurationError, FormatError
from structio.predict.prediction import Prediction
from structio.signatures.signature import (
    Signature,
)

__all__ = ["CALL_OPTIONS", "example_inputs", "not_a_dict", "prediction_inputs"]

# Keyword arguments of a call that are not inputs of the signature.
CALL_OPTIONS = ("adapter", "lm", "params", "config", "max_retries")


def not_a_dict(index: int, item: object) -> ConfigurationError:
    """The error for a batch item that is no dict of inputs."""
    return ConfigurationError(
        f"batch item {index} must be a dict of inputs, not {type(item).__name__}"
    )


def example_inputs(
    signature: type[Signature], example: object, inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """The inputs of a call given one `Example` or dict (and maybe keywords too).

    An example whose inputs are marked gives those only; one without marks gives all its
    values, and a value that is no input of the signature is an error that says to mark
    them (a label must never reach the model as an input).
    """
    if isinstance(example, Example):
        marked = example.input_keys
        if marked is not None:
            given = {key: value for key, value in example.items() if key in marked}
        else:
            given = dict(example.items())
            extra = [key for key in given if key not in signature.input_fields]
            if extra:
                names = ", ".join(repr(n) for n in given if n in signature.input_fields)
                raise FormatError(
                    f"the Example holds {', '.join(repr(n) for n in extra)}, which "
                    f"{'is' if len(extra) == 1 else 'are'} not an input of "
                    f"{signature.__name__}: mark its inputs with "
                    f"example.with_inputs({names}) and only those are sent"
                )
    elif isinstance(example, Mapping):
        given = {key: example[key] for key in example}
    else:
        raise FormatError(
            f"{signature.__name__}: a Predict takes its inputs as keywords, or as one Example "
            f"or dict, not {type(example).__name__}"
        )
    twice = [name for name in given if name in inputs]
    if twice:
        raise FormatError(
            f"{', '.join(repr(n) for n in twice)} given both in the example and as a keyword; "
            "give each input once"
        )
    return {**given, **inputs} if inputs else given


def prediction_inputs(signature: type[Signature], inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs with a prediction given for a ``str`` input read as its one output.

    DSPy programs pass a prediction on (``self.predict2(answer=answer)``, ``answer`` the
    result of a ``question -> answer`` call); DSPy writes the prediction's text there. Where
    the prediction has one output besides ``reasoning``, that output's value is what such a
    program means; any other prediction stays as it is (the input check names it).
    """
    if not any(isinstance(value, Prediction) for value in inputs.values()):
        return inputs
    fields = signature.input_fields
    read = dict(inputs)
    for name, value in inputs.items():
        field = fields.get(name)
        if isinstance(value, Prediction) and field is not None and field.annotation is str:
            outputs = [key for key in value if key != "reasoning"]
            if len(outputs) == 1:
                read[name] = value[outputs[0]]
    return read
