"""Reading a completion while it is written: each output the moment it is complete.

A `StreamReader` takes the completion's text in pieces, as a model streams it, and says
what can be said already, as events: `FieldDelta` (new text of a ``str`` output),
`FieldItem` (one complete, valid element of a list output) and `FieldValue` (an output's
typed value, once its text can no longer change); `ReasoningDelta` (the text of a
``<think>`` draft, never part of an output). It never guesses: a value is given only when
the text after it cannot change it (a ``[[ ## next ## ]]`` marker line or
``[[ ## completed ## ]]`` closes a section; a ``,`` or ``}`` closes a JSON member), and it
is read by the same code that reads the whole completion, from the text received so far.
At the end, `StreamReader.finish` compares what was said with the reading of the whole
completion: it gives every value not given yet, and, should the whole completion read
differently (a late ``</think>``, a fallback reading), a `Reread` event first, then every
output again.

The contract a streamed call keeps (`structio.call.drivers`): a `FieldValue` or
`FieldItem` is final. The call's result holds it, unless a `Reread` comes after it (the
answer is read again, asked again, or the fallback reads it) or the stream ends with
`Failed` and raises (there is no result). Nothing else ever changes a value shown.

Text before the first marker is not an output, and a marker split across pieces is
recognised whole.
"""

from structio.parsing.stream.arguments import ArgumentsStreamReader
from structio.parsing.stream.elements import XMLStreamReader
from structio.parsing.stream.events import (
    Failed,
    FieldDelta,
    FieldItem,
    FieldValue,
    ReasoningDelta,
    Reread,
    StreamEvent,
)
from structio.parsing.stream.json_object import JSONStreamReader
from structio.parsing.stream.reader import Locate, StreamReader
from structio.parsing.stream.sections import SectionStreamReader
from structio.parsing.stream.think import ThinkFilter

__all__ = [
    "ArgumentsStreamReader",
    "Failed",
    "FieldDelta",
    "FieldItem",
    "FieldValue",
    "JSONStreamReader",
    "Locate",
    "ReasoningDelta",
    "Reread",
    "SectionStreamReader",
    "StreamEvent",
    "StreamReader",
    "ThinkFilter",
    "XMLStreamReader",
]
