r"""structio: structured input and output for language models.

Declare what a model call takes and returns as a `Signature`; an adapter (`ChatAdapter`,
`JSONAdapter`) turns it into chat messages and parses the completion back into typed values.

    >>> import structio as sio
    >>> messages = sio.ChatAdapter().format("question -> answer: int", inputs={"question": "2+2?"})
    >>> sio.ChatAdapter().parse("question -> answer: int", "[[ ## answer ## ]]\n4")
    {'answer': 4}

Importing structio is cheap: pydantic, json-repair and litellm load on first use.
"""

from structio.adapters import (
    Adapter,
    ChatAdapter,
    CompactAdapter,
    JSONAdapter,
    ModelCapabilities,
    Reading,
    ToolOutputAdapter,
    XMLAdapter,
)
from structio.call import Attempt, CallResult
from structio.example import Example
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
    MediaError,
    ParseError,
    RateLimitError,
    Retry,
    ServerError,
    SignatureError,
    StructioError,
    TemplateError,
    TokenizerError,
    ToolCallError,
    TruncationError,
    UsageError,
)
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
    AsyncLMStream,
    BaseLM,
    Completion,
    FakeLM,
    LMResponse,
    LMStream,
    ResponseCache,
    Usage,
    UsageTracker,
    inspect_history,
    track_usage,
)
from structio.media import Audio, File, Image
from structio.observe import Callback, OpenTelemetryCallback
from structio.parsing.stream import FieldDelta, FieldValue, Reread, StreamEvent
from structio.predict import ChainOfThought, Predict, Prediction, PredictionMeta
from structio.reasoning import Reasoning
from structio.rendering.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList
from structio.rendering.prompt import Part, PartSection, Prompt, Truncation
from structio.rendering.templates import Template
from structio.saved import load_prompt, save_prompt
from structio.settings import configure, context
from structio.signatures import (
    History,
    InputField,
    OutputField,
    Signature,
    SignatureField,
    infer_prefix,
    make_signature,
)
from structio.streams import AsyncStream, AsyncTextStream, Stream, TextStream

AdapterResult = CallResult
"""The former name of `CallResult`."""

__version__ = "0.1.0"


_LAZY = {
    "Tool": "structio.tools",
    "ToolCall": "structio.tools",
    "ToolCalls": "structio.tools",
    # What callbacks are told: loaded with the first call a callback hears of.
    "CallEndEvent": "structio.observe.events",
    "CallStartEvent": "structio.observe.events",
    "ParseErrorEvent": "structio.observe.events",
    "RetryEvent": "structio.observe.events",
    # Provider batches: loaded with `Predict.submit_batch`, or when first named.
    "BatchJob": "structio.batch",
}


def __getattr__(name: str) -> object:
    import importlib

    # `structio.finetune` without importing it (and sqlite3, csv...) at `import structio`.
    if name == "finetune":
        return importlib.import_module("structio.finetune")
    # The tool types are pydantic models: pydantic loads when they are first used.
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        value.__module__ = "structio"
        globals()[name] = value
        return value
    raise AttributeError(f"module 'structio' has no attribute {name!r}")


__all__ = [
    "Adapter",
    "AdapterResult",
    "AssistantMessage",
    "AsyncLMStream",
    "AsyncStream",
    "AsyncTextStream",
    "Attempt",
    "Audio",
    "AuthenticationError",
    "BadRequestError",
    "BaseLM",
    "BatchError",
    "BatchJob",
    "BulletedDict",
    "BulletedList",
    "CallEndEvent",
    "CallResult",
    "CallStartEvent",
    "Callback",
    "ChainOfThought",
    "ChatAdapter",
    "ChatPromptFunction",
    "CompactAdapter",
    "Completion",
    "ConfigurationError",
    "ContextWindowExceededError",
    "DataError",
    "Example",
    "FakeLM",
    "FieldDelta",
    "FieldValue",
    "File",
    "FormatError",
    "History",
    "Image",
    "InputField",
    "JSONAdapter",
    "LM",
    "LMConnectionError",
    "LMError",
    "LMResponse",
    "LMStream",
    "LMTimeoutError",
    "MediaError",
    "ModelCapabilities",
    "NumberedDict",
    "NumberedList",
    "OpenTelemetryCallback",
    "OutputField",
    "ParseError",
    "ParseErrorEvent",
    "Part",
    "PartSection",
    "Predict",
    "Prediction",
    "PredictionMeta",
    "Prompt",
    "PromptFunction",
    "RateLimitError",
    "Reading",
    "Reasoning",
    "Reread",
    "ResponseCache",
    "Retry",
    "RetryEvent",
    "ServerError",
    "Signature",
    "SignatureError",
    "SignatureField",
    "Stream",
    "StreamEvent",
    "StructioError",
    "SystemMessage",
    "Template",
    "TemplateError",
    "TextStream",
    "TokenizerError",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolCalls",
    "ToolOutputAdapter",
    "Truncation",
    "TruncationError",
    "Usage",
    "UsageError",
    "UsageTracker",
    "UserMessage",
    "XMLAdapter",
    "chatprompt",
    "configure",
    "context",
    "infer_prefix",
    "inspect_history",
    "load_prompt",
    "make_signature",
    "prompt",
    "save_prompt",
    "track_usage",
]

# Public classes say where users import them from, as httpx's do: `structio.ParseError` in
# tracebacks and reprs, not the module that happens to define it today.
for _name in __all__:
    _public = globals().get(_name)  # the lazy ones say so when they load
    if isinstance(_public, type) and _public.__module__.startswith("structio."):
        _public.__module__ = "structio"
del _name, _public
