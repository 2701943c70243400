"""The structio error tree.

Every exception structio raises on purpose derives from `StructioError`. Mistakes in the
calling code (a malformed signature, an input the signature does not have) and failures at
run time (a completion that holds no honest value) live on separate branches, so a program
can retry the second kind and fix the first. Each class also derives from the builtin a
Python programmer would expect, so ``except ValueError`` keeps working::

    StructioError
    ├── UsageError                  the calling code is wrong; fix the code, do not retry
    │   ├── SignatureError          (TypeError, ValueError) a signature declaration is invalid
    │   ├── FormatError             (ValueError)  inputs, demos or outputs do not fit the signature
    │   │   └── MediaError                        an image, audio or file cannot be read or sent
    │   ├── TemplateError           (ValueError)  a prompt template is invalid or renders badly
    │   ├── TruncationError         (ValueError)  the parts that cannot be dropped exceed the limit
    │   └── ConfigurationError      (RuntimeError) no LM configured, or a setting is invalid
    │       ├── TokenizerError                an encoding is unknown or not available offline
    │       └── UnknownSettingError (TypeError)   configure() or context(): no such setting
    ├── ParseError                  (ValueError)  a completion cannot be read as the outputs
    ├── ToolCallError               (ValueError)  a tool call names no tool, or bad arguments
    ├── Retry                       (ValueError)  raised by an output validator: ask again
    ├── DataError                   (ValueError)  examples or a finetune file have problems
    ├── BatchError                                some items of a batch failed (all results kept)
    ├── RereadError                 (RuntimeError) Stream.items gave an item a reread then changed
    ├── SaveError                   (OSError)     a file structio writes for you cannot be written
    └── LMError                                   the model provider failed the request
        ├── AuthenticationError     (PermissionError) missing or rejected API key
        ├── RateLimitError                         429: retried, then raised
        ├── LMTimeoutError          (TimeoutError) no answer in time: retried, then raised
        ├── LMConnectionError       (ConnectionError) the server cannot be reached: retried
        ├── ServerError                            5xx from the provider: retried, then raised
        └── BadRequestError         (ValueError)  400: the request is wrong; never retried
            ├── ContextWindowExceededError        the prompt is longer than the model accepts
            └── StructuredOutputRefusedError      a server refused the grammar or schema sent
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "BatchError",
    "ConfigurationError",
    "ContextWindowExceededError",
    "DataError",
    "FormatError",
    "LMConnectionError",
    "LMError",
    "LMTimeoutError",
    "MediaError",
    "ParseError",
    "RateLimitError",
    "RereadError",
    "Retry",
    "SaveError",
    "ServerError",
    "SignatureError",
    "StructioError",
    "StructuredOutputRefusedError",
    "TemplateError",
    "TokenizerError",
    "ToolCallError",
    "TruncationError",
    "UnknownSettingError",
    "UsageError",
]


class StructioError(Exception):
    """Root of every error structio raises on purpose."""


class UsageError(StructioError):
    """Raised when the calling code uses structio wrongly; retrying cannot help.

    Its subclasses name the kind of mistake. Raised as itself when a stream is asked for
    its result before it has ended, or for an output its signature does not have.
    """


class SignatureError(UsageError, TypeError, ValueError):
    """Raised when a signature is declared wrongly.

    Both a `TypeError` and a `ValueError`: DSPy raises `ValueError` for the same mistakes
    (a duplicate name, an empty spec, an unknown type name), so ``except ValueError`` code
    written for it keeps working.

    Raised at class creation (or by `Signature(...)`, `make_signature` and the manipulation
    methods): a class attribute not declared with `InputField`/`OutputField`, a name used as
    both an input and an output, a malformed string spec, or a type name that cannot be
    resolved. The message names the signature and the field. Also raised when a prompt
    function is decorated with a template whose placeholder names no parameter, when a
    signature (or a `Predict`) holds something that cannot be saved, and when a saved one
    names a type that cannot be imported.
    """


class FormatError(UsageError, ValueError):
    """Raised when an adapter is given inputs, demos or outputs that do not fit the signature.

    For example a required input that is missing, or an input name the signature does not
    declare (a typo must not silently drop an input). The message lists the signature's fields.
    Also raised by `Predict` for a demo with an unknown field or a value of the wrong type
    (naming the demo's index and the field), and by a prompt function called with an
    argument missing or unknown.
    """


class MediaError(FormatError):
    """Raised when an image, audio clip or file cannot be read or sent to a model.

    A source that is neither a URL, a data URI, an existing file nor bytes; a MIME type
    that cannot be detected or is not of the media's kind; data over the size limit; or
    a media value placed where a model cannot take it (a system or assistant message).
    The message names the source (never the whole data) and says what to do.
    """


class ConfigurationError(UsageError, RuntimeError):
    """Raised when structio is not set up for a call.

    For example a `Predict` called with no LM passed and none configured with
    `structio.configure(lm=...)`, an invalid setting such as a negative concurrency, a
    malformed prompt name, or a saved prompt that is missing or cannot be read.
    """


class TokenizerError(ConfigurationError):
    """Raised when a tokenizer cannot be had: an unknown encoding, or one not available offline.

    The message says how to provide one (``TIKTOKEN_CACHE_DIR``, or ``encode_func=``).
    """


class UnknownSettingError(ConfigurationError, TypeError):
    """Raised by `configure` and `context` for a setting that does not exist.

    A `TypeError` too, as Python's own error for an unexpected keyword is, so ``except
    TypeError`` code keeps working. The message names the settings that exist, and the
    closest to the one given.
    """


class TruncationError(UsageError, ValueError):
    """Raised when a prompt cannot fit its token limit by dropping truncatable parts.

    The parts that are never dropped (priority 0: system, final request...) are longer than
    the limit by themselves; the message says by how many tokens.

    Attributes:
        token_limit: The limit asked for.
        fixed_tokens: The tokens of the parts that cannot be dropped.
    """

    def __init__(self, message: str, *, token_limit: int, fixed_tokens: int) -> None:
        super().__init__(message)
        self.token_limit = token_limit
        self.fixed_tokens = fixed_tokens


class TemplateError(UsageError, ValueError):
    """Raised when a prompt template cannot be loaded or rendered into parts.

    Invalid YAML after rendering, a part without ``content``, an unknown role, a template
    syntax error or a missing include: the message names the template, the part and the line.
    """


class ToolCallError(StructioError, ValueError):
    """Raised when a tool call cannot be run: it names no known tool, or its arguments do not fit.

    Raised by `Tool` when called with arguments its parameters do not accept, and by
    `ToolCalls.execute` for a call to a tool it does not have. A tool's own exceptions
    propagate unchanged.

    Attributes:
        tool: The name of the tool called.
        arguments: The arguments the call gave (``args`` is the exception's own tuple).
    """

    def __init__(self, message: str, *, tool: str, args: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.arguments = dict(args or {})

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_tool_call_error, (str(self), self.tool, self.arguments))


class Retry(StructioError, ValueError):  # noqa: N818 - the name users raise, as pydantic-ai's ModelRetry
    """Raise it in an output's validator to have the model answer again with this message.

    A pydantic validator (``@field_validator``, ``@model_validator``) of an output type
    that raises ``Retry("amounts are in cents, not dollars")`` (or any ``ValueError``)
    makes the value invalid; with ``max_retries`` the model is sent its answer back with
    the message. Without re-asking it is a `ParseError` like any invalid value.
    """


class ParseError(StructioError, ValueError):
    """Raised when a completion cannot be turned into the signature's typed outputs.

    Raised by a call for the adapter the call was made with, whatever happened after its
    reading failed: with re-asking, the last answer's error (``attempts`` holds the earlier
    ones); without, after its fallback failed too (ChatAdapter's JSON: the same completion
    read as JSON, then a second request in JSON), this adapter's error with the fallback's
    failure summarized in `problem`, and the fallback's own error (its adapter, completion
    and reasons) as ``__cause__``.

    Attributes:
        adapter: Name of the adapter whose reading failed (``"ChatAdapter"``,
            ``"JSONAdapter"``): for a call, the one it was made with (see above).
        signature: The signature class the completion was parsed against.
        completion: The raw completion text.
        parsed: Output values that were read successfully before the failure.
        missing: Names of required output fields that the completion does not contain.
        invalid: For each field whose text could not be read, ``(offending_text, reason)``.
        problem: A reason that concerns the completion as a whole (for example that it holds
            no JSON object), or ``None``.
        truncated: Whether the model stopped at its token limit (finish reason ``length``),
            which is why the completion cannot be read.
        attempts: With re-asking (``max_retries``), the errors of the earlier answers,
            oldest first; this error is the last answer's.
    """

    adapter: str
    signature: Any
    completion: str
    parsed: dict[str, Any]
    missing: list[str]
    invalid: dict[str, tuple[str, str]]
    problem: str | None
    truncated: bool

    def __init__(
        self,
        *,
        adapter: str,
        signature: Any,
        completion: str,
        parsed: Mapping[str, Any] | None = None,
        missing: Sequence[str] = (),
        invalid: Mapping[str, tuple[str, str]] | None = None,
        problem: str | None = None,
        truncated: bool = False,
    ) -> None:
        self.adapter = adapter
        self.signature = signature
        self.completion = completion
        self.parsed = dict(parsed or {})
        self.missing = list(missing)
        self.invalid = dict(invalid or {})
        self.problem = problem
        self.truncated = truncated
        self.attempts: list[ParseError] = []
        super().__init__(self._message())

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only __init__ needs help to survive pickling (multiprocessing, caches).
        return (_rebuild_parse_error, (self.__dict__.copy(),))

    def with_truncation(self) -> ParseError:
        """A copy that also says the completion was cut off by the token limit."""
        return ParseError(
            adapter=self.adapter,
            signature=self.signature,
            completion=self.completion,
            parsed=self.parsed,
            missing=self.missing,
            invalid=self.invalid,
            problem=self.problem,
            truncated=True,
        )

    def _message(self) -> str:
        sig = getattr(self.signature, "__name__", "signature")
        spec = getattr(self.signature, "signature", None)
        head = f"{self.adapter} could not parse the completion as the outputs of {sig}"
        if isinstance(spec, str):
            head += f" ({spec})"
        lines = [head + ":"]
        if self.truncated:
            lines.append(
                "  - the completion was cut off by the token limit (finish reason 'length'); "
                "raise max_tokens and call again"
            )
        if self.problem:
            lines.append(f"  - {self.problem}")
        for name, (text, reason) in self.invalid.items():
            lines.append(f"  - field `{name}`: {reason} (found {_clip(text)!r})")
        if self.missing:
            names = ", ".join(f"`{n}`" for n in self.missing)
            lines.append(f"  - missing required field(s): {names}")
        if self.parsed:
            lines.append("  parsed so far: " + ", ".join(f"`{n}`" for n in self.parsed))
        lines.append(f"  completion: {_clip(self.completion, 300)!r}")
        lines.append(
            "  what to do: retry the call (the model may answer correctly), or make the "
            "instructions and field descriptions clearer; the full text is in .completion"
        )
        return "\n".join(lines)


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rebuild_parse_error(state: dict[str, Any]) -> ParseError:
    error = ParseError.__new__(ParseError)
    error.__dict__.update(state)
    Exception.__init__(error, error._message())
    return error


class DataError(StructioError, ValueError):
    """Raised when finetune examples or a finetune file have problems.

    `structio.finetune.write_jsonl` raises it when any example is invalid and
    ``skip_invalid`` is off; then nothing is written at the target path. Each problem names
    the input line (or example number), the field where there is one, and what to do.

    Attributes:
        problems: The problems found (`structio.finetune.Problem`), in input order.
        summary: The run's `structio.finetune.Summary` (counts and token statistics).
    """

    def __init__(self, message: str, *, problems: Sequence[Any] = (), summary: Any = None) -> None:
        super().__init__(message)
        self.problems = list(problems)
        self.summary = summary


class BatchError(StructioError):
    """Raised by ``Predict.batch(..., return_exceptions=False)`` when any item failed.

    Every item runs first, so nothing finished is lost.

    Attributes:
        results: One entry per input, in order: the `Prediction`, or the exception raised.
        errors: ``(index, exception)`` for each failed item.
    """

    def __init__(self, results: Sequence[Any]) -> None:
        self.results = list(results)
        self.errors = [(i, r) for i, r in enumerate(self.results) if isinstance(r, BaseException)]
        first_index, first = self.errors[0] if self.errors else (None, None)
        super().__init__(
            f"{len(self.errors)} of {len(self.results)} batch items failed; the first, item "
            f"{first_index}: {type(first).__name__}: {first}. All results are in .results"
        )


class RereadError(StructioError, RuntimeError):
    """Raised by `Stream.items` when items it gave were voided and the new reading differs.

    A stream's items are final unless a `Reread` voids them (the answer was read again or
    asked again). `Stream.items` passes over the items the new reading gives again, equal,
    but cannot take back one that it gave and that the new reading changed or dropped.

    Attributes:
        field: The list output.
        index: The position of the first item that differs.
    """

    def __init__(self, message: str, *, field: str, index: int) -> None:
        super().__init__(message)
        self.field = field
        self.index = index


class SaveError(StructioError, OSError):
    """Raised when a file structio writes for you cannot be written.

    Raised by `Predict.save` and `structio.save_prompt` (the prompt file),
    `structio.finetune.write_jsonl` (the finetune file), `structio.run.run_file` and
    `run_batch` (the output, its errors file and its batch state file) and
    `Predict.submit_batch` (its state file), whatever the cause: a path no file can have (a
    NUL character in it), a file in the way of a folder, a folder where the file should be,
    no permission, a read-only file system, a full disk, a quota or a file size limit. The
    message says what was wrong, names the file (as ``repr`` shows it, so that a NUL or
    another unprintable character is seen) and what to do; the `OSError` (or the
    `ValueError` Python raises for a path it refuses) is the ``__cause__``.

    Nothing half-written is left: a file written whole (a prompt, a finetune file, a state
    file) is as it was before, its temporary file removed, and a run's output gets no part
    of a row (the rows written before stay, and a rerun does the rest).

    An `OSError` too, so ``except OSError`` code keeps working: ``errno`` and ``strerror``
    are the cause's (``errno.ENOSPC`` for a full disk; ``None`` for a path Python refuses),
    and ``filename`` is the file. Reading is not this error: a saved prompt, template or
    data file that is missing or cannot be read is a `ConfigurationError` (a
    `TemplateError`, a `SignatureError` for a signature's file), as before.

    Attributes:
        path: The file that could not be written, as given.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        errno: int | None = None,
        strerror: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.errno = errno
        self.strerror = strerror
        self.filename = path

    def __str__(self) -> str:
        # OSError's own __str__ would print "[Errno n] strerror: filename" instead.
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_save_error, (str(self), self.path, self.errno, self.strerror))


class LMError(StructioError):
    """Raised when the model provider fails a request (after structio's retries, if any).

    Attributes:
        model: The model string the request was for, e.g. ``"openai/gpt-4o-mini"``.
        provider: The provider litellm routed to, e.g. ``"openai"`` (``None`` if unknown).
        status_code: The HTTP status, when there was a response.
        retry_after: Seconds the provider asked to wait (``Retry-After``), if it said.
        attempts: How many requests were made before giving up.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        provider: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after
        self.attempts = attempts


class AuthenticationError(LMError, PermissionError):
    """Raised when the API key is missing or rejected (401/403); never retried.

    The message names the environment variable to set when litellm knows it.
    """


class RateLimitError(LMError):
    """Raised on 429 responses once the retries (which honour ``Retry-After``) are used up."""


class LMTimeoutError(LMError, TimeoutError):
    """Raised when the provider does not answer within ``timeout``, after the retries."""


class LMConnectionError(LMError, ConnectionError):
    """Raised when the provider cannot be reached (refused, reset, DNS), after the retries."""


class ServerError(LMError):
    """Raised on 5xx responses or a malformed response body, after the retries."""


class BadRequestError(LMError, ValueError):
    """Raised when the provider rejects the request as invalid (400, 404, 422); never retried."""


class StructuredOutputRefusedError(BadRequestError):
    """Raised when a server refuses the structured-output parameter it was sent; never retried.

    A local server answered a grammar or JSON schema structio sent (``grammar``,
    ``response_format``, ``structured_outputs``, ``ebnf``) with an error naming it: the
    server is not the one ``LM(..., server=)`` or the model's prefix says, or a version
    without that parameter. Name the right server, or send no constraint (the adapter's
    ``constrain=False``).
    """


class ContextWindowExceededError(BadRequestError):
    """Raised when the prompt exceeds the model's context window; never retried.

    Shorten the prompt (fewer demos, truncated history) or use a model with a larger window.
    """


def _rebuild_tool_call_error(message: str, tool: str, args: dict[str, Any]) -> ToolCallError:
    return ToolCallError(message, tool=tool, args=args)


def _rebuild_save_error(
    message: str, path: str, errno: int | None, strerror: str | None
) -> SaveError:
    return SaveError(message, path=path, errno=errno, strerror=strerror)
