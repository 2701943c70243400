"""Feeding a completion to an adapter's stream reader in pieces, and checking what it said.

Shared by the stream tests of every adapter (`tests/parsing/test_stream.py`,
`tests/adapters/test_xml_adapter.py`).
"""

from __future__ import annotations

import itertools
from typing import Any

import structio as sio


def pieces(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at the given positions (taken modulo its length, sorted)."""
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def stream(
    adapter: sio.Adapter, sig: type[sio.Signature], chunks: list[str]
) -> tuple[list[sio.StreamEvent], list[sio.StreamEvent], dict[str, Any] | sio.ParseError]:
    """Feed the chunks; the events while feeding, the events at the end, and the reading."""
    reader = adapter.stream_reader(sig)
    during: list[sio.StreamEvent] = []
    for chunk in chunks:
        during.extend(reader.feed(chunk))
    try:
        values = adapter.parse(sig, "".join(chunks))
    except sio.ParseError as error:
        return during, [], error
    return during, reader.finish(values), values


def check(events: list[sio.StreamEvent], values: dict[str, Any], sig: type[sio.Signature]) -> None:
    """After the last Reread: one value per output, equal to the reading; str deltas join to it."""
    last = max((i for i, e in enumerate(events) if isinstance(e, sio.Reread)), default=-1)
    tail = events[last + 1 :]
    given = [(e.field, e.value) for e in tail if isinstance(e, sio.FieldValue)]
    assert len(given) == len({name for name, _ in given}), "a field was given twice"
    assert dict(given).keys() == values.keys()
    for name, value in given:
        assert value == values[name] or (value != value and values[name] != values[name])
    for name, f in sig.output_fields.items():
        text = "".join(e.delta for e in tail if isinstance(e, sio.FieldDelta) and e.field == name)
        if f.annotation is str:
            assert text == values[name]
        else:
            assert text == "", f"{name} is not a str output and gets no deltas"
    for name, value in values.items():
        items = [e for e in tail if isinstance(e, sio.FieldItem) and e.field == name]
        assert [e.index for e in items] == list(range(len(items)))
        if isinstance(value, list) and name in given_names(sig):
            assert [e.value for e in items] == value, f"{name}: every item, in order"
        else:
            assert items == []
        if items:  # every item before the list's value
            assert tail.index(items[-1]) < tail.index(sio.FieldValue(name, value))
    # Before the last Reread, too, no value is given twice.
    head = [e.field for e in events[: max(last, 0)] if isinstance(e, sio.FieldValue)]
    assert len(head) == len(set(head))


def given_names(sig: type[sio.Signature]) -> set[str]:
    """The outputs whose values are lists: those that come item by item."""
    from structio.typemodel.info import list_item_type

    return {n for n, f in sig.output_fields.items() if list_item_type(f.annotation) is not None}
