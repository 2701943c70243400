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
    ToolOutputAdapter,
    XMLAdapter,
)
from structio.evaluate import evaluate  # bound here, the function hides the package's name
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
    RereadError,
    Retry,
    SaveError,
    ServerError,
    SignatureError,
    StructioError,
    StructuredOutputRefusedError,
    TemplateError,
    TokenizerError,
    ToolCallError,
    TruncationError,
    UnknownSettingError,
    UsageError,
)
from structio.functions import AssistantMessage, SystemMessage, UserMessage, chatprompt, prompt
from structio.lm import LM, BaseLM, Usage, inspect_history, track_usage
from structio.media import Audio, File, Image
from structio.observe import Callback
from structio.parsing.stream import (
    Failed,
    FieldDelta,
    FieldItem,
    FieldValue,
    ReasoningDelta,
    Reread,
    StreamEvent,
)
from structio.predict import (
    ChainOfThought,
    Module,
    Parallel,
    Predict,
    Prediction,
    PredictionMeta,
)
from structio.reasoning import Reasoning
from structio.rendering.formatting import BulletedDict, BulletedList, NumberedDict, NumberedList
from structio.rendering.prompt import Part, Prompt
from structio.rendering.templates import Template
from structio.saved import load_prompt, save_prompt
from structio.settings import configure, context
from structio.signatures import (
    History,
    InputField,
    OutputField,
    Signature,
    make_signature,
)

__version__ = "0.1.0"


_LAZY = {
    # The test double: loaded when first named (programs that never test never pay for it).
    "FakeLM": "structio.testing",
    "Tool": "structio.tools",
    "ToolCall": "structio.tools",
    "ToolCalls": "structio.tools",
    # DSPy's spellings: `dspy.asyncify`, `dspy.streamify`, `dspy.configure_cache`.
    "asyncify": "structio._asyncify",
    "configure_cache": "structio.lm.cache",
    "streamify": "structio.streaming",
}

# DSPy's modules that loop on their own, not in `__all__`: constructing one raises a
# UsageError that says what to write instead.
_DSPY_REFUSED = (
    "ReAct",
    "CodeAct",
    "ProgramOfThought",
    "Refine",
    "MultiChainComparison",
)
# DSPy's names for structio's own, not in `__all__` (`dspy.AdapterParseError` is ParseError).
_DSPY_ALIASES = {
    "AdapterParseError": ("structio.exceptions", "ParseError"),
    # DSPy's error classes: each the structio class that is raised for the same failure,
    # so that `except dspy.LMAuthError:` catches what it caught in DSPy.
    "DSPyError": ("structio.exceptions", "StructioError"),
    "LMProviderError": ("structio.exceptions", "LMError"),
    "LMUnexpectedError": ("structio.exceptions", "LMError"),
    "LMStreamAssemblyError": ("structio.exceptions", "LMError"),
    "LMTransportError": ("structio.exceptions", "LMConnectionError"),
    "LMAuthError": ("structio.exceptions", "AuthenticationError"),
    "LMRateLimitError": ("structio.exceptions", "RateLimitError"),
    "LMServerError": ("structio.exceptions", "ServerError"),
    # A 4xx other than 401, 403, 408 and 429 (402 Payment Required, 404 no such model).
    "LMInvalidRequestError": ("structio.exceptions", "BadRequestError"),
    "LMBillingError": ("structio.exceptions", "BadRequestError"),
    "LMUnsupportedModelError": ("structio.exceptions", "BadRequestError"),
    "LMConfigurationError": ("structio.exceptions", "ConfigurationError"),
    "LMNotConfiguredError": ("structio.exceptions", "ConfigurationError"),
    "LMUnsupportedFeatureError": ("structio.exceptions", "ConfigurationError"),
    "is_retryable_lm_error": ("structio.lm.errors", "is_retryable"),
    "enable_logging": ("structio._util.log", "enable_logging"),
    "disable_logging": ("structio._util.log", "disable_logging"),
    "Completions": ("structio.predict", "Completions"),
    "BestOfN": ("structio.predict.module", "BestOfN"),
}
# DSPy's names with no structio counterpart: the AttributeError says what to write.
_DSPY_INSTEAD = {
    "load": "structio saves prompts as data, not pickled programs: structio.Predict.load(path)",
    "TwoStepAdapter": "for a model that writes poor structure, use a JSONAdapter (schema-"
    "constrained where the model takes one) or Predict(..., max_retries=2)",
    "ensure_signature": "structio.Signature('question -> answer') makes a signature class",
    "Code": "declare the code as a str output and name the language in its desc",
    "enable_litellm_logging": "structio keeps litellm's banners off; its logger is "
    "logging.getLogger('LiteLLM') (setLevel(logging.DEBUG) to see its records)",
    "disable_litellm_logging": "structio keeps litellm's banners off already; its logger is "
    "logging.getLogger('LiteLLM') (setLevel(logging.ERROR) for errors only)",
    "load_settings": "settings are not saved whole: save each LM (lm.to_dict(), "
    "LM.from_dict(data)) and each program (program.save(path), program.load(path))",
}

# Names that were public here and now live in their subpackages: still importable from
# structio (loaded when first named), no longer in `__all__`. Import them from their home.
_MOVED = {
    "AdapterResult": ("structio.call", "CallResult"),
    "Attempt": ("structio.call", "Attempt"),
    "CallResult": ("structio.call", "CallResult"),
    "AsyncLMStream": ("structio.lm", "AsyncLMStream"),
    "LMStream": ("structio.lm", "LMStream"),
    "UsageTracker": ("structio.lm", "UsageTracker"),
    "Completion": ("structio.lm", "Completion"),
    "LMResponse": ("structio.lm", "LMResponse"),
    "ResponseCache": ("structio.lm", "ResponseCache"),
    "CallEndEvent": ("structio.observe.events", "CallEndEvent"),
    "CallStartEvent": ("structio.observe.events", "CallStartEvent"),
    "ParseErrorEvent": ("structio.observe.events", "ParseErrorEvent"),
    "RetryEvent": ("structio.observe.events", "RetryEvent"),
    "OpenTelemetryCallback": ("structio.observe", "OpenTelemetryCallback"),
    "Reading": ("structio.adapters", "Reading"),
    "PartSection": ("structio.rendering.prompt", "PartSection"),
    "Truncation": ("structio.rendering.prompt", "Truncation"),
    "AsyncStream": ("structio.streams", "AsyncStream"),
    "AsyncTextStream": ("structio.streams", "AsyncTextStream"),
    "Stream": ("structio.streams", "Stream"),
    "TextStream": ("structio.streams", "TextStream"),
    "ChatPromptFunction": ("structio.functions", "ChatPromptFunction"),
    "PromptFunction": ("structio.functions", "PromptFunction"),
    "infer_prefix": ("structio.signatures", "infer_prefix"),
    "SignatureField": ("structio.signatures", "SignatureField"),
    "BatchJob": ("structio.batch", "BatchJob"),
}


def __getattr__(name: str) -> object:
    import importlib

    # `structio.finetune` without importing it (and sqlite3, csv...) at `import structio`;
    # `structio.streaming`, DSPy's `dspy.streaming` (StreamListener, StreamResponse...).
    if name in ("finetune", "streaming"):
        return importlib.import_module(f"structio.{name}")
    # The tool types are pydantic models: pydantic loads when they are first used.
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        value.__module__ = "structio"
        globals()[name] = value
        return value
    if name in _DSPY_REFUSED:
        return getattr(importlib.import_module("structio.predict.module"), name)
    if name in _DSPY_ALIASES:
        module, attribute = _DSPY_ALIASES[name]
        return getattr(importlib.import_module(module), attribute)
    if name in _DSPY_INSTEAD:
        raise AttributeError(f"structio has no {name!r} (DSPy's): {_DSPY_INSTEAD[name]}")
    if name in _MOVED:
        module, attribute = _MOVED[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'structio' has no attribute {name!r}")


__all__ = [
    "Adapter",
    "AssistantMessage",
    "Audio",
    "AuthenticationError",
    "BadRequestError",
    "BaseLM",
    "BatchError",
    "BulletedDict",
    "BulletedList",
    "Callback",
    "ChainOfThought",
    "ChatAdapter",
    "CompactAdapter",
    "ConfigurationError",
    "ContextWindowExceededError",
    "DataError",
    "Example",
    "Failed",
    "FakeLM",
    "FieldDelta",
    "FieldItem",
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
    "LMTimeoutError",
    "MediaError",
    "Module",
    "NumberedDict",
    "NumberedList",
    "OutputField",
    "Parallel",
    "ParseError",
    "Part",
    "Predict",
    "Prediction",
    "PredictionMeta",
    "Prompt",
    "RateLimitError",
    "Reasoning",
    "ReasoningDelta",
    "Reread",
    "RereadError",
    "Retry",
    "SaveError",
    "ServerError",
    "Signature",
    "SignatureError",
    "StreamEvent",
    "StructioError",
    "StructuredOutputRefusedError",
    "SystemMessage",
    "Template",
    "TemplateError",
    "TokenizerError",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolCalls",
    "ToolOutputAdapter",
    "TruncationError",
    "UnknownSettingError",
    "Usage",
    "UsageError",
    "UserMessage",
    "XMLAdapter",
    "asyncify",
    "chatprompt",
    "configure",
    "configure_cache",
    "context",
    "evaluate",
    "inspect_history",
    "load_prompt",
    "make_signature",
    "prompt",
    "save_prompt",
    "streamify",
    "track_usage",
]

# Public classes say where users import them from, as httpx's do: `structio.ParseError` in
# tracebacks and reprs, not the module that happens to define it today.
for _name in __all__:
    _public = globals().get(_name)  # the lazy ones say so when they load
    if isinstance(_public, type) and _public.__module__.startswith("structio."):
        _public.__module__ = "structio"
del _name, _public
