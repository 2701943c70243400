"""Reasoning drafts (``<think>...</think>``) in a stream, set aside as `clean` sets them aside."""

from __future__ import annotations

import re

__all__ = ["ThinkFilter"]


_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_TAG_FORMS = ("<think>", "<thinking>", "</think>", "</thinking>")


def _partial_tag(text: str) -> int:
    """Where a tag that the next piece may complete starts at the end of ``text`` (or -1)."""
    start = text.rfind("<", max(0, len(text) - 12))
    if start == -1:
        return -1
    tail = text[start:].lower()
    return start if any(form.startswith(tail) for form in _TAG_FORMS) else -1


class ThinkFilter:
    """The text of a stream without its reasoning drafts, as `clean` sets them aside.

    ``<think>...</think>`` (or ``<thinking>``) at the start of a line is dropped; a tag
    split across pieces is held until it is whole. A closing tag without its opening one
    (the chat template wrote the opening), at the start or end of a line, means all before
    it was a draft: `feed` then says so (``reset``). A tag in the middle of a line is text.
    """

    def __init__(self) -> None:
        self.inside = False
        #: The draft text of the last piece fed (what `feed` set aside as reasoning).
        self.drafted = ""
        self._held = ""
        self._line_start = True  # whether the text not yet read starts a line

    def feed(self, piece: str) -> tuple[str, bool]:
        """The visible text of the next piece, and whether all visible text before is void."""
        text = self._held + piece
        self._held = ""
        if "<" not in text and not self.inside:  # the usual piece
            self.drafted = ""
            self._line_start = _starts_line(text, len(text), self._line_start)
            return text, False
        visible: list[str] = []
        drafted: list[str] = []
        reset = False
        position = 0  # where the text not yet given or dropped starts
        search = 0  # where the next tag is looked for
        while True:
            pattern = _CLOSE if self.inside else _TAG
            tag = pattern.search(text, search)
            if tag is None:
                partial = _partial_tag(text[search:])
                held_from = len(text) if partial == -1 else search + partial
                self._held = text[held_from:]
                (drafted if self.inside else visible).append(text[position:held_from])
                break
            if self.inside:  # the first closing tag ends the draft, wherever it is
                drafted.append(text[position : tag.start()])
                self.inside = False
                position = search = tag.end()
                continue
            at_start = _starts_line(text, tag.start(), self._line_start)
            if not tag.group(1):  # an opening tag
                if at_start:
                    visible.append(text[position : tag.start()])
                    self.inside = True
                    position = tag.end()
                search = tag.end()
                continue
            ends = True if at_start else _ends_draft(text, tag.end())
            if ends:
                # A close without an open: what came before was the draft.
                drafted.extend(visible)
                drafted.append(text[position : tag.start()])
                visible = []
                reset = True
                position = search = tag.end()
                continue
            if ends is None:  # what follows it is not here yet: the next piece says
                visible.append(text[position : tag.start()])
                self._held = text[tag.start() :]
                break
            search = tag.end()  # in the middle of a line: text
        self._line_start = _starts_line(text, len(text) - len(self._held), self._line_start)
        self.drafted = "".join(drafted)
        return "".join(visible), reset

    def flush(self) -> str:
        """Text held at the end of the stream (a ``<`` that began no tag)."""
        held, self._held = self._held, ""
        return "" if self.inside else held


_GLUED_ANSWER = ("[[", "{", "```")
_ELEMENT_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/")


def _ends_draft(text: str, end: int) -> bool | None:
    """Whether a lone closing tag ending at ``end`` ends a draft, as `clean` decides.

    It does when only blanks follow it to the end of its line, or when the answer's
    structure is glued to it (``<x``, ``</``, ``[[``, ``{``, a fence); ``None`` when the
    text after it is too short to say.
    """
    after = text[end:]
    blanks = after.lstrip(" \t\r")
    if blanks.startswith("\n"):
        return True
    if not blanks:
        return None
    if len(blanks) == len(after):  # glued to the tag
        if after[0] == "<":
            return None if len(after) == 1 else after[1] in _ELEMENT_STARTS
        if after.startswith(_GLUED_ANSWER):
            return True
        if any(form.startswith(after) for form in _GLUED_ANSWER):
            return None
    return False


def _starts_line(text: str, index: int, line_start: bool) -> bool:
    """Whether ``text[index]`` starts a line (only blanks before it on its line).

    ``line_start`` says whether ``text`` itself starts one. Only the blanks just before
    ``index`` are looked at, so many tags on one long line cost no more than the line.
    """
    i = index
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return text[i - 1] == "\n" if i > 0 else line_start
