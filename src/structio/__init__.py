r"""structio: structured input and output for language models.

Declare what a model call takes and returns as a `Signature`; an adapter (`ChatAdapter`,
`JSONAdapter`) turns it into chat messages and parses the completion back into typed values.

    >>> import structio as sio
    >>> messages = sio.ChatAdapter().format("question -> answer: int", inputs={"question": "2+2?"})
    >>> sio.ChatAdapter().parse("question -> answer: int", "[[ ## answer ## ]]\n4")
    {'answer': 4}

Importing structio is cheap: pydantic, json-repair and litellm load on first use.
"""

from structio.adapters import Adapter, AdapterResult, ChatAdapter, JSONAdapter
from structio.exceptions import (
    AuthenticationError,
    BadRequestError,
    BatchError,
    ConfigurationError,
    ContextWindowExceededError,
    FormatError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    ParseError,
    RateLimitError,
    ServerError,
    SignatureError,
    StructioError,
    TemplateError,
    TokenizerError,
    TruncationError,
    UsageError,
)
from structio.lm import (
    LM,
    BaseLM,
    Completion,
    FakeLM,
    LMResponse,
    ResponseCache,
    Usage,
    inspect_history,
)
from structio.predict import Predict, Prediction
from structio.prompt import Part, Prompt, Truncation
from structio.settings import configure, context
from structio.signatures import (
    History,
    InputField,
    OutputField,
    Signature,
    SignatureField,
    make_signature,
)
from structio.templates import Template

__version__ = "0.1.0"

__all__ = [
    "Adapter",
    "AdapterResult",
    "AuthenticationError",
    "BadRequestError",
    "BaseLM",
    "BatchError",
    "ChatAdapter",
    "Completion",
    "ConfigurationError",
    "ContextWindowExceededError",
    "FakeLM",
    "FormatError",
    "History",
    "InputField",
    "JSONAdapter",
    "LM",
    "LMConnectionError",
    "LMError",
    "LMResponse",
    "LMTimeoutError",
    "OutputField",
    "ParseError",
    "Part",
    "Predict",
    "Prediction",
    "Prompt",
    "RateLimitError",
    "ResponseCache",
    "ServerError",
    "Signature",
    "SignatureError",
    "SignatureField",
    "StructioError",
    "Template",
    "TemplateError",
    "TokenizerError",
    "Truncation",
    "TruncationError",
    "Usage",
    "UsageError",
    "configure",
    "context",
    "inspect_history",
    "make_signature",
]
