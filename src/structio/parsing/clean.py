"""Setting aside what is not the answer: reasoning drafts and a code fence around it all."""

from __future__ import annotations

import re

from structio._util.scan import strip_fence

__all__ = ["clean"]

_THINK_ANY = re.compile(r"</?think", re.IGNORECASE)
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)


def clean(completion: str) -> str:
    """Drop reasoning drafts (``<think>...</think>``) and a code fence around everything.

    A draft ends at the first closing tag after it. A closing tag without its opening one
    (the chat template swallowed it) means the draft is everything before it; a draft that
    never ends holds no answer. One pass over the tags: linear in the text, whatever it is.
    """
    if _THINK_ANY.search(completion) is None:  # the usual case: no draft to drop
        return strip_fence(completion.strip()).strip()
    kept: list[str] = []
    position = 0
    draft_start: int | None = None
    for tag in _THINK_TAG.finditer(completion):
        closing = tag.group(1) == "/"
        if draft_start is None and not closing:
            kept.append(completion[position : tag.start()])
            draft_start = tag.start()
        elif draft_start is not None and closing:
            draft_start = None
            position = tag.end()
        elif closing:  # a close without an open: what came before was the draft
            kept = []
            position = tag.end()
    if draft_start is None:
        kept.append(completion[position:])
    return strip_fence("".join(kept).strip()).strip()
