"""SeenTexts: the first line each text was seen on, kept on disk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from structio._util.seen import SeenTexts


def test_a_text_seen_again_names_its_first_line() -> None:
    seen = SeenTexts()
    try:
        assert seen.first_line("a", 1) is None
        assert seen.first_line("b", 2) is None
        assert seen.first_line("a", 3) == 1
        assert seen.first_line("a", 4) == 1
    finally:
        seen.close()


@given(st.lists(st.text(max_size=5), max_size=30))
def test_it_agrees_with_a_dict(texts: list[str]) -> None:
    seen, first = SeenTexts(), {}
    try:
        for line, text in enumerate(texts, 1):
            assert seen.first_line(text, line) == first.get(text)
            first.setdefault(text, line)
    finally:
        seen.close()
