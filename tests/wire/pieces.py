"""Checking that what a stream handed out as it came agrees with the whole response."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from structio.lm import LMResponse, ReasoningPiece, ToolCallPiece


def check_pieces(items: Sequence[Any]) -> LMResponse:
    """The pieces of ``lm.stream(..., pieces=True)`` joined are the response's first choice.

    Text pieces join to its text, reasoning pieces to its reasoning, and each call's
    argument pieces (under the name they came with) to its call's arguments.

    Returns:
        The response, the stream's last item.
    """
    response = items[-1]
    assert isinstance(response, LMResponse)
    assert not any(isinstance(item, LMResponse) for item in items[:-1])
    first = response.completions[0]
    assert "".join(item for item in items if isinstance(item, str)) == first.text
    reasoning = "".join(item.text for item in items if isinstance(item, ReasoningPiece))
    assert reasoning == (first.reasoning or "")
    calls: dict[int, tuple[str, str]] = {}
    for item in items:
        if isinstance(item, ToolCallPiece):
            _, arguments = calls.get(item.index, ("", ""))
            calls[item.index] = (item.name, arguments + item.arguments)
    streamed = [(name, json.loads(arguments)) for _, (name, arguments) in sorted(calls.items())]
    whole = [
        (call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
        for call in first.tool_calls or ()
    ]
    assert streamed == whole
    return response
