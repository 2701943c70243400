"""What a call produced: `CallResult`, its `Attempt`s, and the documented routes."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from structio.exceptions import ParseError
from structio.lm.types import LMResponse, Usage
from structio.rendering.prompt import Truncation

__all__ = ["Attempt", "CallResult", "Fallback", "Route", "fallback_route"]

Route = str
"""How the outputs of a call were read: its **route**. One documented list:

- the adapter's own route, `Adapter.route`: ``"chat"`` (`ChatAdapter`), ``"json"``
  (`JSONAdapter`, `CompactAdapter`, `ToolOutputAdapter`), ``"xml"`` (`XMLAdapter`), or what
  a custom adapter declares (``route = "yaml"``);
- ``"<fallback route>_reparse"`` (``"json_reparse"``): the same completion read again in
  the fallback's format, with no new request (`CallResult.fallback` is ``"reparse"``); a
  text format that reads a whole-JSON answer reports this too;
- ``"<fallback route>_request"`` (``"json_request"``): the first completion could not be
  read and a new request was made with the fallback adapter (`CallResult.fallback` is
  ``"request"``).
"""

Fallback = Literal["reparse", "request"]
"""Whether and how a fallback happened (`CallResult.fallback`): the same completion read
again in the fallback's format, or a new request in it."""


def fallback_route(route: str, fallback: Fallback) -> str:
    """The route of a result the fallback adapter (of route ``route``) produced."""
    return f"{route}_{fallback}"


@dataclasses.dataclass(frozen=True)
class CallResult:
    """What a call through an adapter produced.

    Attributes:
        outputs: One dict of typed output values per completion (``n=`` choices).
        route: How the outputs were read (see `Route`).
        responses: Every model response involved, in order (two after a fallback request).
        truncation: What was cut from the prompt before the answering request, if anything.
        max_tokens_reached: The model stopped at its token limit after every output was
            closed (a cut inside an output is a `ParseError` instead).
        attempts: The answers that could not be used before this one, each sent back to the
            model with what was wrong (``max_retries``); their responses are in
            ``responses`` too, so `usage` and `cost` count them.
        fallback: ``None`` when the adapter read the answer itself, ``"reparse"`` when the
            same completion was read in the fallback's format, ``"request"`` when the
            fallback adapter made a request of its own.
        confidence: With ``CallOptions(confidence=True)``, one dict per choice (as
            `outputs`): each output's confidence in [0, 1] from the answering response's
            log probabilities, or ``None`` where it cannot be known (what the number
            means: `structio.parsing.confidence`). ``None`` when not asked.
    """

    outputs: list[dict[str, Any]]
    route: Route
    responses: list[LMResponse] = dataclasses.field(default_factory=list)
    truncation: Truncation | None = None
    max_tokens_reached: bool = False
    attempts: tuple[Attempt, ...] = ()
    fallback: Fallback | None = None
    confidence: tuple[dict[str, float | None], ...] | None = None

    @property
    def path(self) -> Route:
        """The former name of `route`."""
        return self.route

    @property
    def usage(self) -> Usage:
        """Tokens of every request made for this result."""
        if len(self.responses) == 1:  # the usual case: nothing to add up
            return self.responses[0].usage
        total = Usage()
        for response in self.responses:
            total = total + response.usage
        return total

    @property
    def cost(self) -> float | None:
        """Cost in USD of every request, when known."""
        if len(self.responses) == 1:
            cost = self.responses[0].cost
            return None if cost is None else float(cost)
        costs = [r.cost for r in self.responses]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    def after(self, first: LMResponse, route: str) -> CallResult:
        """This result as the answer of a fallback request (of ``route``) after ``first``."""
        return dataclasses.replace(
            self,
            route=fallback_route(route, "request"),
            responses=[first, *self.responses],
            fallback="request",
        )

    def retried(self, attempts: list[Attempt]) -> CallResult:
        """This result as the answer given after ``attempts`` were sent back."""
        if not attempts:
            return self
        earlier = [attempt.response for attempt in attempts]
        return dataclasses.replace(
            self, responses=[*earlier, *self.responses], attempts=tuple(attempts)
        )


@dataclasses.dataclass(frozen=True)
class Attempt:
    """An answer that could not be used, and what the model was told about it.

    Attributes:
        response: The model's response.
        error: Why it could not be used (missing and invalid fields, and why).
        feedback: The message sent back to the model, after its own answer.
    """

    response: LMResponse
    error: ParseError
    feedback: str

    @property
    def completions(self) -> list[str]:
        """The text of each choice of the response."""
        return [c.text for c in self.response.completions]

    @property
    def usage(self) -> Usage:
        """The tokens of this attempt's request."""
        return self.response.usage
