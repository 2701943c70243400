"""`CallOptions`: how a call is made, one frozen value every caller passes through."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from structio.exceptions import ConfigurationError
from structio.rendering.prompt import TruncationStep

__all__ = ["CallOptions", "check_retries"]


def check_retries(max_retries: object) -> None:
    """Refuse a ``max_retries`` that is not a whole number, 0 or more."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigurationError(
            f"max_retries must be a whole number of re-asks, 0 or more; got {max_retries!r}"
        )


@dataclasses.dataclass(frozen=True)
class CallOptions:
    """How a call through an adapter is made: truncation, re-asks and input checking.

    One value holds every option of the call layer. `Predict`, both kinds of prompt
    function, provider batches and ``structio run`` pass theirs whole to `structio.call`,
    so an option works the same through each of them and through each verb (call, async
    call, stream, async stream). Request parameters (``temperature``, ``n``...) are not
    options: they travel as ``params``.

    Attributes:
        max_prompt_tokens: Cut the conversation history, oldest turns first, so the prompt
            fits this many tokens before the request (``None``: no budget). When the
            provider says the prompt exceeds the context window, it is cut to the model's
            input limit and sent once more whatever this is.
        truncation_step: With ``max_prompt_tokens``: 0 drops just enough; a step fixes the
            cut point so consecutive prompts share their prefix; ``"auto"`` picks one.
        max_retries: Re-asks: how many times an answer that cannot be used (unreadable, a
            missing output, a value that fails its type, constraints or validators) is sent
            back to the model with what was wrong, in the same conversation. With re-asking
            on, the adapter's fallback still reads each answer without a request, but makes
            no blind request of its own. Transport retries are the LM's ``num_retries``.
        check_inputs: Check each input value against its declared type first (a
            `FormatError` if one does not fit); ``False`` sends values as they are.
        confidence: Ask for token log probabilities (``logprobs=True``, ``top_logprobs=5``
            unless the call sets its own) and give each output's confidence
            (`CallResult.confidence`, ``pred.meta.confidence``; its meaning:
            `structio.parsing.confidence`). A model whose profile says it returns none is
            a `ConfigurationError` before any request.

    Raises:
        ConfigurationError: An option has a value it cannot take (a negative
            ``max_retries``, a ``max_prompt_tokens`` that is no positive whole number...).
    """

    max_prompt_tokens: int | None = None
    truncation_step: TruncationStep = 0
    max_retries: int = 0
    check_inputs: bool = True
    confidence: bool = False

    def __post_init__(self) -> None:
        check_retries(self.max_retries)
        limit = self.max_prompt_tokens
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            raise ConfigurationError(
                f"max_prompt_tokens must be a whole number of tokens, 1 or more, or None; "
                f"got {limit!r}"
            )
        step = self.truncation_step
        if step != "auto" and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
            raise ConfigurationError(
                f"truncation_step must be 0, a positive number of tokens or 'auto'; got {step!r}"
            )
        for name in ("check_inputs", "confidence"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(
                    f"{name} must be True or False; got {getattr(self, name)!r}"
                )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The name of every option, in order."""
        return tuple(field.name for field in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> CallOptions:
        """These options with ``changes`` (checked as the constructor checks them).

        Raises:
            ConfigurationError: A name is no option, or a value is refused.
        """
        if not changes:
            return self
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ConfigurationError(
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not call "
                f"option(s); the options are {', '.join(self.names())}"
            )
        return dataclasses.replace(self, **changes)

    @classmethod
    def split(cls, settings: Mapping[str, Any]) -> tuple[CallOptions, dict[str, Any]]:
        """The call options among ``settings``, and the rest (request parameters).

        For constructors that take both in one ``**kwargs`` (prompt functions).
        """
        names = set(cls.names())
        options = {k: v for k, v in settings.items() if k in names}
        rest = {k: v for k, v in settings.items() if k not in names}
        return cls(**options), rest

    def to_dict(self) -> dict[str, Any]:
        """The options that differ from the defaults, as JSON-ready data."""
        default = _DEFAULT
        return {
            name: getattr(self, name)
            for name in self.names()
            if getattr(self, name) != getattr(default, name)
        }


_DEFAULT = CallOptions()
