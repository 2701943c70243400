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
    DataError,
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
from structio.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList
from structio.functions import (
    AssistantMessage,
    ChatPromptFunction,
    PromptFunction,
    SystemMessage,
    UserMessage,
    chatprompt,
    prompt,
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
from structio.saved import load_prompt, save_prompt
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


def __getattr__(name: str) -> object:
    # `structio.finetune` without importing it (and sqlite3, csv...) at `import structio`.
    if name == "finetune":
        import importlib

        return importlib.import_module("structio.finetune")
    raise AttributeError(f"module 'structio' has no attribute {name!r}")


__all__ = [
    "Adapter",
    "AdapterResult",
    "AssistantMessage",
    "AuthenticationError",
    "BadRequestError",
    "BaseLM",
    "BatchError",
    "BulletedDict",
    "BulletedList",
    "ChatAdapter",
    "ChatPromptFunction",
    "Completion",
    "ConfigurationError",
    "ContextWindowExceededError",
    "DataError",
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
    "NumberedDict",
    "NumberedList",
    "OutputField",
    "ParseError",
    "Part",
    "Predict",
    "Prediction",
    "Prompt",
    "PromptFunction",
    "RateLimitError",
    "ResponseCache",
    "ServerError",
    "Signature",
    "SignatureError",
    "SignatureField",
    "StructioError",
    "SystemMessage",
    "Template",
    "TemplateError",
    "TokenizerError",
    "Truncation",
    "TruncationError",
    "Usage",
    "UsageError",
    "UserMessage",
    "chatprompt",
    "configure",
    "context",
    "inspect_history",
    "load_prompt",
    "make_signature",
    "prompt",
    "save_prompt",
]
