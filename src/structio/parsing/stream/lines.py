"""The line a section stream is receiving, kept so that a piece costs its own length only."""

from __future__ import annotations

from structio.parsing.found import _TAIL_DECORATION_CHARS

__all__ = ["UnfinishedLine"]


class UnfinishedLine:
    """The line being received, in pieces; how much of it is settled, as it grows.

    `settled` is the length of ``settled_prefix(line)`` (`parsing.locate`), kept up to
    date from each new piece alone: the line is never joined or searched again before it
    ends, so a line of a megabyte in four-character pieces costs what its pieces do.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self, text: str = "") -> None:
        """Start a new line (holding ``text``)."""
        self.pieces: list[str] = []
        self.length = 0
        #: Its first character that is not blank ("" while there is none).
        self.first = ""
        #: How much of it was given to its section (see `take`).
        self.sent = 0
        #: The length of its settled prefix: text no marker after it can change.
        self.settled = 0
        self._marker = -1  # where its first `[[` starts (-1: none yet)
        self._checked = 0  # how much of it `settled` has looked at
        self._unsent: list[str] = []  # its text from `sent` on, up to its first `[[`
        if text:
            self.add(text)

    def text(self) -> str:
        """The whole line so far."""
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""

    def add(self, text: str) -> None:
        """Add a piece of the line (no line break in it)."""
        start = self.length
        last = self.pieces[-1][-1] if self.pieces else ""
        self.pieces.append(text)
        self.length += len(text)
        if not self.first:
            self.first = text.lstrip()[:1]
        if self._marker != -1:
            return  # the settled prefix ends before the marker: nothing after it counts
        found = text.find("[[")
        if last == "[" and text.startswith("["):
            found = -1
            self._marker = start - 1
        elif found != -1:
            self._marker = start + found
        self._unsent.append(text if found == -1 else text[:found])
        # The prefix a marker may still change: from a `[[`, or from a `[` that ends it.
        cut = self._marker
        if cut == -1:
            cut = self.length - 1 if text.endswith("[") else self.length
        if cut > self._checked:
            # Only the text from where the last look stopped: one character before this
            # piece at most (a `[` the line ended with).
            before = last if self._checked < start else ""
            span = before + text[: cut - start]
            kept = span.rstrip(_TAIL_DECORATION_CHARS)
            if kept:
                self.settled = self._checked + len(kept)
            self._checked = cut

    def take(self) -> str:
        """The settled text not given yet, now given (`sent` moves to `settled`)."""
        if self.settled <= self.sent:
            return ""
        unsent = "".join(self._unsent)
        count = self.settled - self.sent
        self._unsent = [unsent[count:]] if len(unsent) > count else []
        self.sent = self.settled
        return unsent[:count]
