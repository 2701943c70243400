"""Language models: `LM` over litellm, `FakeLM` for tests, the response cache and history.

litellm is imported on the first real call, never at ``import structio``.
"""

from structio.lm.base import BaseLM, HistoryEntry, inspect_history
from structio.lm.cache import ResponseCache, default_cache
from structio.lm.fake import FakeCall, FakeLM
from structio.lm.lm import LM
from structio.lm.types import AsyncLMStream, Completion, LMResponse, LMStream, Usage
from structio.lm.usage import UsageTracker, track_usage

__all__ = [
    "AsyncLMStream",
    "BaseLM",
    "Completion",
    "FakeCall",
    "FakeLM",
    "HistoryEntry",
    "LM",
    "LMResponse",
    "LMStream",
    "ResponseCache",
    "Usage",
    "UsageTracker",
    "default_cache",
    "inspect_history",
    "track_usage",
]
