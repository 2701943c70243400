"""Setting aside what is not the answer: reasoning drafts and a code fence around it all."""

from __future__ import annotations

import re

from structio._util.scan import strip_fence

__all__ = ["clean"]

_THINK_ANY = re.compile(r"</?think", re.IGNORECASE)
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def clean(completion: str) -> str:
    """Drop reasoning drafts (``<think>...</think>``) and a code fence around everything."""
    if _THINK_ANY.search(completion) is None:  # the usual case: no draft to drop
        return strip_fence(completion.strip()).strip()
    text = _THINK.sub("", completion)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:  # an opening tag the chat template swallowed: the draft is what precedes
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:  # a draft that never ended holds no answer
        text = text[: opened.start()]
    return strip_fence(text.strip()).strip()
