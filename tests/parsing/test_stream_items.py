"""A list output's items stream one by one, each as soon as its text is whole, in every format.

Lists are written by each adapter's own formatting (`Adapter.format_finetune_data`) and fed
in random pieces: every item comes, in order, equal to the final value's items, before the
value; a damaged list (cut short, an item of the wrong type) never gives an item the whole
completion's reading contradicts (no `Reread`).
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structio as sio
from structio.parsing.stream.items import ArrayItems
from tests.parsing.streaming import check, pieces, stream

ADAPTERS = {
    "chat": sio.ChatAdapter(),
    "json": sio.JSONAdapter(),
    "xml": sio.XMLAdapter(),
    "compact": sio.CompactAdapter(),
}


class Point(pydantic.BaseModel):
    x: int
    label: str


class Ints(sio.Signature):
    """Numbers."""

    question: str = sio.InputField()
    numbers: list[int] = sio.OutputField()
    note: str = sio.OutputField()


class OnlyInts(sio.Signature):
    """Numbers alone: a list cut short may still be read."""

    question: str = sio.InputField()
    numbers: list[int] = sio.OutputField()


class Words(sio.Signature):
    """Words."""

    question: str = sio.InputField()
    words: list[str] = sio.OutputField()
    note: str = sio.OutputField()


class Points(sio.Signature):
    """Points."""

    question: str = sio.InputField()
    note: str = sio.OutputField()
    points: list[Point] = sio.OutputField()


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
_WORD = _TEXT.filter(lambda s: s.strip() == s and s != "")
CASES: list[tuple[type[sio.Signature], str, Any]] = [
    (Ints, "numbers", st.lists(st.integers(-(10**6), 10**6), max_size=8)),
    (Words, "words", st.lists(_WORD, max_size=8)),
    (
        Points,
        "points",
        st.lists(st.builds(Point, x=st.integers(0, 99), label=_WORD), max_size=6),
    ),
]


def _written(adapter: sio.Adapter, sig: type[sio.Signature], values: dict[str, Any]) -> str:
    record = adapter.format_finetune_data(sig, [], {"question": "q"}, values)
    return str(record["messages"][-1]["content"])


def _items(events: list[sio.StreamEvent], name: str) -> list[Any]:
    return [e.value for e in events if isinstance(e, sio.FieldItem) and e.field == name]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("adapter", ADAPTERS, ids=list(ADAPTERS))
@pytest.mark.parametrize("case", range(len(CASES)), ids=["ints", "strs", "models"])
@given(data=st.data())
def test_every_item_comes_in_order_before_the_value(adapter: str, case: int, data: Any) -> None:
    sig, name, items = CASES[case]
    value = data.draw(items)
    text = _written(ADAPTERS[adapter], sig, {name: value, "note": "done"})
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    during, at_end, reading = stream(ADAPTERS[adapter], sig, pieces(text, cuts))
    assert isinstance(reading, dict)
    assert reading[name] == value
    events = during + at_end
    check(events, reading, sig)
    assert not any(isinstance(e, sio.Reread) for e in events)
    # Every item comes while the completion is read, not at its end.
    assert _items(during, name) == value


@pytest.mark.parametrize("adapter", ADAPTERS, ids=list(ADAPTERS))
def test_an_item_comes_as_soon_as_it_is_whole(adapter: str) -> None:
    value = [Point(x=1, label="a"), Point(x=2, label="b"), Point(x=3, label="c")]
    text = _written(ADAPTERS[adapter], Points, {"points": value, "note": "done"})
    reader = ADAPTERS[adapter].stream_reader(Points)
    seen: list[Any] = []
    for end in range(1, len(text) + 1):
        seen.extend(_items(reader.feed(text[end - 1 : end]), "points"))
        if len(seen) == 1:
            # The first item is whole, the second is not yet written.
            assert '"b"' not in text[:end]
            assert ">b<" not in text[:end]
            break
    assert seen == value[:1]


_DAMAGES = ["cut", "wrong type"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("adapter", ADAPTERS, ids=list(ADAPTERS))
@pytest.mark.parametrize("damage", _DAMAGES)
@pytest.mark.parametrize("sig", [Ints, OnlyInts], ids=["with a note", "alone"])
@given(data=st.data())
def test_a_damaged_list_gives_no_item_its_reading_contradicts(
    adapter: str, damage: str, sig: type[sio.Signature], data: Any
) -> None:
    value = data.draw(st.lists(st.integers(0, 999), min_size=1, max_size=6))
    values = {"numbers": value, "note": "done"} if sig is Ints else {"numbers": value}
    text = _written(ADAPTERS[adapter], sig, values)
    if damage == "cut":
        text = text[: data.draw(st.integers(0, len(text)))]
    else:
        at = data.draw(st.integers(0, len(value) - 1))
        word = data.draw(
            st.sampled_from(["seven", "1.5", "2.0", '"3"', "[1]", "{}", "null", "x y", "1e999"])
        )
        # The first writing of that number in the list (as JSON or as an element's text).
        written = str(value[at])
        marks = [f"[{written},", f" {written},", f" {written}]", f"[{written}]"]
        marks += [f"<item>{written}</item>", f"\n    {written},", f"\n    {written}\n"]
        mark = next((m for m in marks if m in text), None)
        if mark is None:
            return
        text = text.replace(mark, mark.replace(written, word, 1), 1)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=10))
    during, at_end, reading = stream(ADAPTERS[adapter], sig, pieces(text, cuts))
    if isinstance(reading, sio.ParseError):
        return  # asked again: the contract lets a re-ask take back what was shown
    events = during + at_end
    check(events, reading, sig)
    assert not any(isinstance(e, sio.Reread) for e in events), events


# -- the scanner ----------------------------------------------------------------------------


@given(
    value=st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers() | _TEXT,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
            max_leaves=6,
        ),
        max_size=6,
    ),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_the_scanner_finds_each_element_of_an_array_cut_anywhere(
    value: list[Any], cuts: list[int]
) -> None:
    import json

    text = "  " + json.dumps(value, indent=1 if len(cuts) % 2 else None) + " trailing"
    scanner = ArrayItems()
    found: list[str] = []
    used_total = 0
    for piece in pieces(text, cuts):
        elements, used = scanner.feed(piece)
        found.extend(elements)
        used_total += used
    assert [json.loads(e) for e in found] == value
    assert scanner.closed
    assert text[:used_total].rstrip().endswith("]")
    assert text[used_total:] == " trailing"


@pytest.mark.parametrize("text", ["[1,,2]", "[1}", "x[1]", "{1}"])
def test_the_scanner_stops_at_what_is_no_plain_array(text: str) -> None:
    scanner = ArrayItems()
    found, _ = scanner.feed(text)
    assert scanner.failed
    assert found == (["1"] if text == "[1,,2]" else [])


def test_a_trailing_comma_and_an_empty_array_give_no_element() -> None:
    assert ArrayItems().feed("[1, 2,]")[0] == ["1", "2"]
    assert ArrayItems().feed("[ ]")[0] == []
