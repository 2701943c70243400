"""The structio error tree.

Every exception structio raises on purpose derives from `StructioError`. Mistakes in the
calling code (a malformed signature, an input the signature does not have) and failures at
run time (a completion that holds no honest value) live on separate branches, so a program
can retry the second kind and fix the first. Each class also derives from the builtin a
Python programmer would expect, so ``except ValueError`` keeps working::

    StructioError
    ├── UsageError                  the calling code is wrong; fix the code, do not retry
    │   ├── SignatureError          (TypeError)   a signature declaration is invalid
    │   └── FormatError             (ValueError)  inputs, demos or outputs do not fit the signature
    └── ParseError                  (ValueError)  a completion cannot be read as the outputs
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "FormatError",
    "ParseError",
    "SignatureError",
    "StructioError",
    "UsageError",
]


class StructioError(Exception):
    """Root of every error structio raises on purpose."""


class UsageError(StructioError):
    """Raised when the calling code uses structio wrongly; retrying cannot help."""


class SignatureError(UsageError, TypeError):
    """Raised when a signature is declared wrongly.

    Raised at class creation (or by `Signature(...)`, `make_signature` and the manipulation
    methods): a class attribute not declared with `InputField`/`OutputField`, a name used as
    both an input and an output, a malformed string spec, or a type name that cannot be
    resolved. The message names the signature and the field.
    """


class FormatError(UsageError, ValueError):
    """Raised when an adapter is given inputs, demos or outputs that do not fit the signature.

    For example a required input that is missing, or an input name the signature does not
    declare (a typo must not silently drop an input). The message lists the signature's fields.
    """


class ParseError(StructioError, ValueError):
    """Raised when a completion cannot be turned into the signature's typed outputs.

    Attributes:
        adapter: Name of the adapter that parsed (``"ChatAdapter"``, ``"JSONAdapter"``).
        signature: The signature class the completion was parsed against.
        completion: The raw completion text.
        parsed: Output values that were read successfully before the failure.
        missing: Names of required output fields that the completion does not contain.
        invalid: For each field whose text could not be read, ``(offending_text, reason)``.
        problem: A reason that concerns the completion as a whole (for example that it holds
            no JSON object), or ``None``.
    """

    adapter: str
    signature: Any
    completion: str
    parsed: dict[str, Any]
    missing: list[str]
    invalid: dict[str, tuple[str, str]]
    problem: str | None

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
    ) -> None:
        self.adapter = adapter
        self.signature = signature
        self.completion = completion
        self.parsed = dict(parsed or {})
        self.missing = list(missing)
        self.invalid = dict(invalid or {})
        self.problem = problem
        super().__init__(self._message())

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only __init__ needs help to survive pickling (multiprocessing, caches).
        return (_rebuild_parse_error, (self.__dict__.copy(),))

    def _message(self) -> str:
        sig = getattr(self.signature, "__name__", "signature")
        spec = getattr(self.signature, "signature", None)
        head = f"{self.adapter} could not parse the completion as the outputs of {sig}"
        if isinstance(spec, str):
            head += f" ({spec})"
        lines = [head + ":"]
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
