r"""structio: structured input and output for language models.

Declare what a model call takes and returns as a `Signature`; an adapter (`ChatAdapter`,
`JSONAdapter`) turns it into chat messages and parses the completion back into typed values.

    >>> import structio as sio
    >>> messages = sio.ChatAdapter().format("question -> answer: int", inputs={"question": "2+2?"})
    >>> sio.ChatAdapter().parse("question -> answer: int", "[[ ## answer ## ]]\n4")
    {'answer': 4}

Importing structio is cheap: pydantic, json-repair and litellm load on first use.
"""

from structio.adapters import Adapter, ChatAdapter, JSONAdapter
from structio.exceptions import FormatError, ParseError, SignatureError, StructioError, UsageError
from structio.signatures import (
    History,
    InputField,
    OutputField,
    Signature,
    SignatureField,
    make_signature,
)

__version__ = "0.1.0"

__all__ = [
    "Adapter",
    "ChatAdapter",
    "FormatError",
    "History",
    "InputField",
    "JSONAdapter",
    "OutputField",
    "ParseError",
    "Signature",
    "SignatureError",
    "SignatureField",
    "StructioError",
    "UsageError",
    "make_signature",
]
