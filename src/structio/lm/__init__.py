"""Language models: `LM`, what a model supports (`ModelProfile`), the response cache, history.

litellm is imported on the first real call, never at ``import structio``.
"""

from structio.lm.base import BaseLM, HistoryEntry, inspect_history
from structio.lm.cache import ResponseCache, configure_cache, default_cache
from structio.lm.client import ClientSettings
from structio.lm.lm import LM
from structio.lm.profile import ModelProfile
from structio.lm.types import (
    AsyncLMStream,
    Completion,
    LMResponse,
    LMStream,
    LogprobsPiece,
    ReasoningPiece,
    ToolCallPiece,
    Usage,
)
from structio.lm.usage import UsageTracker, track_usage

# The transport seam loads with the first LM (or when named here).
_TRANSPORT = (
    "Transport",
    "register_transport",
    "registered_transports",
    "transport_for",
    "unregister_transport",
)


def __getattr__(name: str) -> object:
    # The test double loads when first named: `import structio` never needs it.
    if name in ("MockRequest", "MockTransport"):
        from structio.lm import mock

        return getattr(mock, name)
    if name in _TRANSPORT:
        from structio.lm import transport

        return getattr(transport, name)
    raise AttributeError(f"module 'structio.lm' has no attribute {name!r}")


__all__ = [
    "AsyncLMStream",
    "BaseLM",
    "ClientSettings",
    "Completion",
    "HistoryEntry",
    "LM",
    "LMResponse",
    "LMStream",
    "LogprobsPiece",
    "MockRequest",
    "MockTransport",
    "ModelProfile",
    "ReasoningPiece",
    "ResponseCache",
    "ToolCallPiece",
    "Transport",
    "Usage",
    "UsageTracker",
    "configure_cache",
    "default_cache",
    "inspect_history",
    "register_transport",
    "registered_transports",
    "track_usage",
    "transport_for",
    "unregister_transport",
]
