"""The lenient readers: one reading of loosely written values, or none."""

from __future__ import annotations

import contextlib
import enum
import warnings

import pytest

import structio as sio
from structio.parsing.lenient import (
    NO_READING,
    bool_reading,
    final_label,
    names_only,
    number_reading,
    without_remark,
)

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


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("4", "4"),
        ("4.", "4"),
        ("**4**", "4"),
        ("4,000", "4000"),
        ("30 items", "30"),
        ("12 kg", "12"),
        ("5 years old", "5"),
        ("$1,234.50", "1234.50"),
        ("19.99 USD", "19.99"),
        ("4e3", "4e3"),  # an exponent is part of the number
        ("Answer: 42", "42"),
    ],
)
def test_a_number_with_a_label_or_unit_is_read(text: str, number: str) -> None:
    assert number_reading(text) == number


@pytest.mark.parametrize(
    "text",
    [
        # a magnitude: scaling would guess at units, the number alone is another value
        *("4 million", "4 thousand", "4 hundred", "2 dozen", "4 billion", "4 trillion"),
        *("4k", "4K", "4M", "4B", "4bn", "4 k", "4 m", "4 lakh", "$4M", "1.5M", "1.5 million"),
        # a multiple, a share, an exponent with no digits
        *("4x", "4 times", "90%", "90 %", "40 percent", "4e", "1.5E"),
        # a hedge
        *("4 or more", "4 or less", "4 or so", "4 at least", "4 at most", "4 max", "4ish"),
        *("4 plus", "4 and up", "40 odd", "4 tops", "4 approx"),
    ],
)
def test_a_number_with_a_word_that_scales_or_hedges_it_has_no_reading(text: str) -> None:
    assert number_reading(text) is NO_READING


@pytest.mark.parametrize(
    "text",
    [
        "4 (million)",
        "4 (in thousands)",
        "4 - in millions",
        "90 (%)",
        "4 (\u00d7)",
        "4 (k)",
        "4 (x)",
    ],
)
def test_a_remark_that_scales_a_number_leaves_no_reading(text: str) -> None:
    assert without_remark(text, number=True) is NO_READING


def test_a_remark_that_explains_a_number_still_leaves_the_number() -> None:
    assert without_remark("4 (two plus two)", number=True) == "4"
    assert without_remark("4. That is the sum.", number=True) == "4"


@pytest.mark.parametrize(
    "text",
    ["4 (at least)", "4 (or more)", "4 - roughly", "4 (mostly)", "4 (+)", "4 (up to)"],
)
def test_a_remark_that_hedges_a_number_leaves_no_reading(text: str) -> None:
    assert without_remark(text) is NO_READING


def test_a_remark_naming_a_magnitude_is_only_refused_for_numbers() -> None:
    # A label with a remark that happens to say `times` is still the label.
    assert without_remark("billing (charged three times)") == "billing"
    assert without_remark("4 (charged three times)", number=True) is NO_READING


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", True),
        ("No.", False),
        ("True", True),
        ("**false**", False),
        ("yes (the text says so)", True),
        ("Yes, the customer asked twice.", True),
        ("No - the order already shipped.", False),
        ("no (false)", False),  # the remark agrees
        ("No, there is no refund on file.", False),
        ("Yes, definitely", True),
    ],
)
def test_yes_or_no_with_a_remark_that_explains_it_is_read(text: str, value: bool) -> None:
    assert bool_reading(text) is value


@pytest.mark.parametrize(
    "text",
    [
        *("yes; no", "Yes, but no", "no - yes", "yes. No.", "yes, no", "True (false)"),
        *("true (mostly)", "yes (partly)", "Yes (sometimes)", "yes, probably", "no (maybe)"),
        *("Yes - but only partly", "yes, if it shipped", "No, not really", "yes, not true"),
        *("yes/no", "yes or no", "Yes\n\nNo"),
    ],
)
def test_yes_or_no_with_a_remark_that_contradicts_or_hedges_it_has_no_reading(text: str) -> None:
    assert bool_reading(text) is NO_READING


def test_reading_completion_text_as_python_warns_nothing_and_hides_no_other_warning() -> None:
    completions = [
        ("q -> a: list[int]", "[[ ## a ## ]]\n[4k]"),
        ("q -> a: float", "[[ ## a ## ]]\n4ish"),
        ("q -> a: dict[str, str]", "[[ ## a ## ]]\n{'a': 'C:\\d'}"),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for spec, text in completions:
            with contextlib.suppress(sio.ParseError):
                sio.ChatAdapter().parse(spec, text)
        assert caught == []  # Python's complaints about the model's text are not shown
        compile("'C:\\d'", "<the program's code>", "eval")
    assert [w.category for w in caught] in ([SyntaxWarning], [DeprecationWarning])
