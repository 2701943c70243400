"""Tools a model may call, and the calls it makes.

`Tool` wraps a Python function (sync or async): its name, its description (the docstring,
as written) and the JSON schema of each argument, from the signature's type hints, shown to
the model as DSPy shows them (so prompts match DSPy's byte for byte), and a pydantic model
of the arguments that validates every call. Calling a tool
validates the arguments first, so a model's mistake becomes a `ToolCallError` that names the
argument, never a `TypeError` deep inside the function.

`ToolCall` and `ToolCalls` are what a model answers with: they read the usual shapes (a
``{"tool_calls": [...]}`` object, a bare list, a single call, OpenAI's wire form) where each
has exactly one meaning, check calls against the tools offered, run them in order and keep
each result so the exchange can be replayed into a conversation.

`structio.tools.tool` holds `Tool`; `structio.tools.calls` holds `ToolCall` and `ToolCalls`.
"""

from structio.tools.calls import ToolCall, ToolCalls
from structio.tools.tool import Tool

__all__ = ["Tool", "ToolCall", "ToolCalls"]
