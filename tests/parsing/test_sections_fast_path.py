"""The one-split reading of plain section markers agrees with the line-by-line reader."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from structio.parsing.locate import _all_sections, _by_norm, _plain_sections

NAMES = ("question", "answer", "reasoning", "completed_at")
OUTPUTS = {"answer", "reasoning", "completed_at"}
LINES = [
    "[[ ## answer ## ]]",
    "[[ ## reasoning ## ]]",
    "[[ ## completed ## ]]",
    "[[ ## completed_at ## ]]",
    "[[ ## unknown ## ]]",
    "[[ ## answer ## ]]  ",
    "[[ ## answer ## ]]\t",
    "[[ ##  answer ## ]]",
    "**[[ ## answer ## ]]**",
    "text [[ ## answer ## ]]",
    "[[ ## answer ## ]] 42",
    "[[ ## 1abc ## ]]",
    "[[ ## Answer ## ]]",
    "{answer}",
    "```",
    "```json",
    "42",
    "",
    "  ",
    "Paris is the capital.",
    "a [[ b",
]


@given(st.lists(st.sampled_from(LINES), max_size=12), st.sampled_from(["", "\n", "\n\n"]))
@settings(max_examples=800, deadline=None)
def test_plain_sections_match_the_general_reader(lines: list[str], end: str) -> None:
    text = "\n".join(lines) + end
    by_norm = _by_norm(NAMES)
    fast = _plain_sections(text, by_norm, OUTPUTS)
    if fast is not None:
        general = _all_sections(text, by_norm, OUTPUTS)
        assert fast == general


def test_the_usual_completion_takes_the_fast_path() -> None:
    text = "[[ ## reasoning ## ]]\nBecause.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]\n"
    assert _plain_sections(text, _by_norm(NAMES), OUTPUTS) is not None
    assert _plain_sections("Answer: [[ ## answer ## ]] 4", _by_norm(NAMES), OUTPUTS) is None
