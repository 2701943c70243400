"""Setting aside what is not the answer: reasoning drafts and a code fence around it all."""

from __future__ import annotations

import re

from structio._util.scan import strip_fence

__all__ = ["clean", "drafts"]

_THINK_ANY = re.compile(r"</?think", re.IGNORECASE)
# What may follow a closing tag that ends a draft on its line: the end of the line, or the
# answer's own structure glued to it (an element, a `[[ ## ]]` marker, an object, a fence).
_AFTER_CLOSE = r"(?:[ \t\r]*$|(?=(?-i:<[A-Za-z/])|\[\[|\{|```))"
# The tags that mark a draft: an opening tag that starts its line, or a closing tag without
# its opening one that starts its line or ends the draft's last line (`_AFTER_CLOSE`). A
# tag in the middle of a line (`"<think>"` inside a JSON string, a sentence about the tag)
# is text of the answer. Group 1 is set for an opening tag.
_THINK_TAG = re.compile(
    r"^[ \t]*<(think(?:ing)?)>|^[ \t]*</think(?:ing)?>|</think(?:ing)?>" + _AFTER_CLOSE,
    re.IGNORECASE | re.MULTILINE,
)
_THINK_OPEN = re.compile(r"^[ \t]*<think(?:ing)?>", re.IGNORECASE | re.MULTILINE)
# Inside a draft, the first closing tag ends it, wherever it is.
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
# Matched from a closing tag up to the next opening one: ends at the last closing tag there.
_LAST_CLOSE = re.compile(
    r".*(?:^[ \t]*</think(?:ing)?>|</think(?:ing)?>(?=" + _AFTER_CLOSE + "))",
    re.IGNORECASE | re.DOTALL | re.MULTILINE,
)


def clean(completion: str) -> str:
    """Drop reasoning drafts (``<think>...</think>``) and a code fence around everything.

    A draft starts with ``<think>`` (or ``<thinking>``) at the start of a line and ends at
    the first closing tag after it. A closing tag without its opening one (the chat
    template swallowed it), at the start or end of a line (or with the answer's structure,
    ``<``, ``[[``, ``{`` or a fence, glued after it), means the draft is everything before
    it; a draft that never ends holds no answer. A tag in the middle of a line is
    part of the answer's text (a JSON string holding ``"<think>"``). Each step is one
    search, and the tags inside a draft or in a run of closing ones are never visited one
    by one: linear in the text, and fast on thousands of tags.
    """
    # The usual case: no draft to drop (a text without `<` is told by memchr, not a search).
    if "<" not in completion or _THINK_ANY.search(completion) is None:
        return strip_fence(completion.strip()).strip()
    kept: list[str] = []
    position = 0
    while (tag := _THINK_TAG.search(completion, position)) is not None:
        if tag.group(1):  # a draft: it ends at the next closing tag, or never
            kept.append(completion[position : _tag_start(tag)])
            close = _THINK_CLOSE.search(completion, tag.end())
            if close is None:
                return strip_fence("".join(kept).strip()).strip()
            position = close.end()
            continue
        # A close without an open: what came before was the draft, up to the last closing
        # tag before the next opening one (each of those is such a close too).
        opening = _THINK_OPEN.search(completion, tag.end())
        last = _LAST_CLOSE.match(
            completion, tag.start(), _tag_start(opening) if opening else len(completion)
        )
        kept = []
        position = last.end() if last else tag.end()
    kept.append(completion[position:])
    return strip_fence("".join(kept).strip()).strip()


def _tag_start(tag: re.Match[str]) -> int:
    """Where the tag itself starts: the blanks before it on its line are not part of it."""
    return tag.start() + tag.group(0).index("<")


def drafts(completion: str) -> str | None:
    """The reasoning drafts `clean` sets aside, joined by blank lines, or ``None``.

    The same reading as `clean`: a draft runs from ``<think>`` at the start of a line to the
    next closing tag; a closing tag without its opening one, at the start or end of a line,
    makes everything before it a draft; a draft that never ends runs to the end.
    """
    if _THINK_ANY.search(completion) is None:
        return None
    found: list[str] = []
    position = 0
    while (tag := _THINK_TAG.search(completion, position)) is not None:
        if tag.group(1):
            close = _THINK_CLOSE.search(completion, tag.end())
            if close is None:
                found.append(completion[tag.end() :])
                break
            found.append(completion[tag.end() : close.start()])
            position = close.end()
            continue
        opening = _THINK_OPEN.search(completion, tag.end())
        last = _LAST_CLOSE.match(
            completion, tag.start(), _tag_start(opening) if opening else len(completion)
        )
        # Everything before this close is the draft (its opening tag was swallowed).
        found = [_THINK_TAG.sub("", completion[: _tag_start(tag)])]
        position = last.end() if last else tag.end()
    texts = [text.strip() for text in found if text.strip()]
    return "\n\n".join(texts) if texts else None
