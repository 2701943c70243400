"""`set_aside`: the prompt's own text taken out of a value, and nothing else."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from structio.parsing.found import Found, PromptText, set_aside

HINT = "# note: the value you produce must be a single int value"
TEXTS = {
    "count": PromptText(hint=HINT),
    "age": PromptText(placeholders=frozenset({"int | null"}), optional=True),
    "size": PromptText(placeholders=frozenset({"int"})),
}
VALUE = st.text(min_size=1).filter(lambda v: v.strip() != "")
SPACE = st.text(alphabet=" \t\n", max_size=6)


def aside(**texts: object) -> dict[str, object]:
    return set_aside(Found(texts=dict(texts)), TEXTS).texts


@given(VALUE, SPACE, SPACE)
def test_a_value_then_its_hint_is_the_value(value: str, before: str, inside: str) -> None:
    hint = HINT.replace(" ", " " + inside, 3)  # whitespace inside the hint changes nothing
    assert aside(count=value + " " + before + hint + before)["count"] == value.rstrip()


@given(VALUE, st.integers(1, len(HINT.split()) - 1))
def test_part_of_the_hint_or_a_changed_word_is_left_as_written(value: str, cut: int) -> None:
    words = HINT.split()
    partial = " ".join(words[:cut])
    changed = " ".join([*words[:cut], words[cut] + "s", *words[cut + 1 :]])
    for text in (f"{value} {partial}", f"{value} {changed}", f"{value} {HINT} more"):
        assert aside(count=text)["count"] == text


def test_the_hint_alone_and_other_values_are_left_as_written() -> None:
    assert aside(count=HINT)["count"] == HINT
    assert aside(count="  " + HINT)["count"] == "  " + HINT
    assert aside(count=4, other="4 " + HINT) == {"count": 4, "other": "4 " + HINT}
    assert aside(count="C# 4 " + HINT)["count"] == "C# 4"


def test_only_an_optional_outputs_placeholder_is_no_value() -> None:
    assert aside(age=" int | null ", size="int") == {"age": None, "size": "int"}
    assert aside(age="int | null or 4")["age"] == "int | null or 4"
