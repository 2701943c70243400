"""The call layer: the only place that calls a model through an adapter.

One call: the adapter renders the prompt (cut to ``max_prompt_tokens`` if asked), chooses
its request parameters, the model answers, and the adapter reads every choice. When the
provider says the context window is exceeded, the prompt is cut to the model's input limit
and sent once more. When a completion cannot be read, the adapter's fallback
(`Adapter.fallback_adapter`, JSONAdapter for ChatAdapter) reads the same completion, then,
if that fails too, makes one more request; with re-asking on (``max_retries``), the model is
sent its answer back with what was wrong instead. Provider errors never fall back.

That policy is written once, as a flow that does no I/O (`structio.call.flow`); `call`,
`acall`, `stream` and `astream` drive it (`structio.call.drivers`). How a call is made is one
frozen value, `CallOptions`, which every caller (`Predict`, prompt functions, batches,
``structio run``) passes whole.
"""

from __future__ import annotations

from structio.call.drivers import StreamOut, acall, astream, call, stream
from structio.call.flow import Restart, Send, call_flow
from structio.call.options import CallOptions, check_retries
from structio.call.request import Builder, PreparedCall, prepare, read_response
from structio.call.result import Attempt, CallResult, Fallback, Route

__all__ = [
    "Attempt",
    "Builder",
    "CallOptions",
    "CallResult",
    "Fallback",
    "PreparedCall",
    "Restart",
    "Route",
    "Send",
    "StreamOut",
    "acall",
    "astream",
    "call",
    "call_flow",
    "check_retries",
    "prepare",
    "read_response",
    "stream",
]
