"""The lenient readers: one reading of loosely written values, or none."""

from __future__ import annotations

import enum

import pytest

from structio.parsing.lenient import NO_READING, final_label, names_only, without_remark

LABELS = [("pos", ["pos"]), ("neg", ["neg"])]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


COLORS = [(m, [m.value, m.name]) for m in Color]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4 (two plus two)", "4"),
        ("4. Two plus two is four.", "4"),
        ("billing \u2014 a double charge", "billing"),
        ("12 kg - measured twice", "12 kg"),
        ("**pos** (the reviewer loved it)", "**pos**"),
    ],
)
def test_a_value_with_a_remark_is_the_value(text: str, value: str) -> None:
    assert without_remark(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "4 (or 5)",
        "4, maybe 5",  # a comma also separates items: never a remark
        "4. Actually it is 5.",
        "4 (5 if you count the root)",
        "40 (approximately)",
        "4 - or so",
        "4\n(two plus two)",  # the remark must be on the value's line
        "4 (" + "x" * 200 + ")",  # not short
        "just a sentence",
    ],
)
def test_a_remark_that_hedges_or_holds_a_number_leaves_no_reading(text: str) -> None:
    assert without_remark(text) is NO_READING


@pytest.mark.parametrize(
    ("text", "choices", "value"),
    [
        ("The reviewer loved it, so the label is **pos**.", LABELS, "pos"),
        ("Glowing review: `pos`", LABELS, "pos"),
        ("The sky at noon is *blue*!", COLORS, Color.BLUE),
        ("The car is painted 'RED'", COLORS, Color.RED),
        ("long prose " * 1000 + "so **neg**", LABELS, "neg"),
    ],
)
def test_prose_that_ends_on_one_emphasized_choice_reads_as_it(
    text: str, choices: list[tuple[object, list[object]]], value: object
) -> None:
    assert final_label(text, choices) == value


@pytest.mark.parametrize(
    ("text", "choices"),
    [
        ("It is not neg; I would say **pos**.", LABELS),  # another choice is named
        ("pos or neg? **pos**", LABELS),
        ("**pos**, definitely **pos**", LABELS),  # the same choice twice
        ("The review is mixed, so it is not **pos**.", LABELS),
        ("Hard to say. Maybe **red**.", COLORS),
        ("The label is pos.", LABELS),  # not emphasized
        ("The label is **positive**.", LABELS),  # no choice
        ("**pos** is my answer", LABELS),  # not at the end
    ],
)
def test_prose_with_no_one_emphasized_choice_has_no_reading(
    text: str, choices: list[tuple[object, list[object]]]
) -> None:
    assert final_label(text, choices) is NO_READING


def test_names_only_counts_whole_words_in_any_case() -> None:
    assert names_only("POS, positive, posh", LABELS, "pos", times=1)
    assert not names_only("pos and pos", LABELS, "pos", times=1)
    assert names_only("pos and pos", LABELS, "pos")
    assert not names_only("pos, unlike NEG", LABELS, "pos")
    assert not names_only("Red and blue", COLORS, Color.RED)
