"""Setting aside what is not the answer: reasoning drafts and a code fence around it all."""

from __future__ import annotations

import re

from structio._util.scan import strip_fence

__all__ = ["clean", "drafts"]

_THINK_ANY = re.compile(r"</?think", re.IGNORECASE)
_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
# Matched from a closing tag up to the next opening one: ends at the last closing tag there.
_LAST_CLOSE = re.compile(r".*</think(?:ing)?>", re.IGNORECASE | re.DOTALL)


def clean(completion: str) -> str:
    """Drop reasoning drafts (``<think>...</think>``) and a code fence around everything.

    A draft ends at the first closing tag after it. A closing tag without its opening one
    (the chat template swallowed it) means the draft is everything before it; a draft that
    never ends holds no answer. Each step is one search, and the tags inside a draft or in
    a run of closing ones are never visited one by one: linear in the text, and fast on
    thousands of tags.
    """
    if _THINK_ANY.search(completion) is None:  # the usual case: no draft to drop
        return strip_fence(completion.strip()).strip()
    kept: list[str] = []
    position = 0
    while (tag := _THINK_TAG.search(completion, position)) is not None:
        if not tag.group(1):  # a draft: it ends at the next closing tag, or never
            kept.append(completion[position : tag.start()])
            close = _THINK_CLOSE.search(completion, tag.end())
            if close is None:
                return strip_fence("".join(kept).strip()).strip()
            position = close.end()
            continue
        # A close without an open: what came before was the draft, up to the last closing
        # tag before the next opening one (each of those is such a close too).
        opening = _THINK_OPEN.search(completion, tag.end())
        last = _LAST_CLOSE.match(
            completion, tag.start(), opening.start() if opening else len(completion)
        )
        kept = []
        position = last.end() if last else tag.end()
    kept.append(completion[position:])
    return strip_fence("".join(kept).strip()).strip()


def drafts(completion: str) -> str | None:
    """The reasoning drafts `clean` sets aside, joined by blank lines, or ``None``.

    The same reading as `clean`: a draft runs from ``<think>`` to the next closing tag; a
    closing tag without its opening one makes everything before it a draft; a draft that
    never ends runs to the end.
    """
    if _THINK_ANY.search(completion) is None:
        return None
    found: list[str] = []
    position = 0
    while (tag := _THINK_TAG.search(completion, position)) is not None:
        if not tag.group(1):
            close = _THINK_CLOSE.search(completion, tag.end())
            if close is None:
                found.append(completion[tag.end() :])
                break
            found.append(completion[tag.end() : close.start()])
            position = close.end()
            continue
        opening = _THINK_OPEN.search(completion, tag.end())
        last = _LAST_CLOSE.match(
            completion, tag.start(), opening.start() if opening else len(completion)
        )
        # Everything before this close is the draft (its opening tag was swallowed).
        found = [_THINK_TAG.sub("", completion[: tag.start()])]
        position = last.end() if last else tag.end()
    texts = [text.strip() for text in found if text.strip()]
    return "\n\n".join(texts) if texts else None
