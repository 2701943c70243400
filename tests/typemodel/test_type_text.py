"""A type's three spellings, each for its own reader, all in `structio.typemodel.text`."""

from __future__ import annotations

from typing import Optional

import structio as sio
from structio.signatures._serialize import type_from_text
from structio.typemodel.text import type_name, type_to_text


def test_the_three_spellings_of_one_type() -> None:
    annotation = Optional[list[sio.History]]  # noqa: UP045 - the model reads Union[...]
    # For the model, exactly as DSPy writes it.
    assert type_name(annotation) == "Union[list[History], NoneType]"
    # For a saved file: importable, read back to an equal type.
    assert type_to_text(annotation) == "list[structio:History] | None"
    assert type_from_text(type_to_text(annotation)) == annotation
    # A signature's repr uses the model's spelling.
    sig = sio.make_signature({"q": (str, sio.InputField()), "a": (annotation, sio.OutputField())})
    assert "a: Union[list[History], NoneType]" in repr(sig)
