"""Each output's confidence from token log probabilities: exact values on known tokens."""

from __future__ import annotations

import enum
import math
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from structio.parsing.confidence import field_confidence, label_options, value_span


def entry(token: str, p: float, *alternatives: tuple[str, float]) -> dict[str, Any]:
    """One token as OpenAI sends it, with probability ``p`` and its top alternatives."""
    top = [{"token": token, "logprob": math.log(p), "bytes": None}]
    top += [{"token": t, "logprob": math.log(q), "bytes": None} for t, q in alternatives]
    return {
        "token": token,
        "logprob": math.log(p),
        "bytes": list(token.encode()),
        "top_logprobs": top,
    }


def spelled(entries: list[dict[str, Any]]) -> str:
    return "".join(e["token"] for e in entries)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


def test_a_label_is_its_option_against_the_others_at_the_token_they_part() -> None:
    entries = [
        entry("[[ ## sentiment ## ]]", 0.9),
        entry("\n\n", 0.99),
        # 0.6 for the chosen option, 0.3 for the other, 0.05 for no option at all.
        entry("pos", 0.6, ("neg", 0.3), ("The", 0.05)),
        entry("itive", 0.99),
        entry("\n\n", 0.9),
        entry("[[ ## note ## ]]", 1.0),
        entry("\n", 1.0),
        entry("hello", 0.5),
        entry(" world", 0.125),
    ]
    got = field_confidence(
        spelled(entries),
        entries,
        {"sentiment": Literal["positive", "negative"], "note": str, "absent": int},
    )
    assert got["sentiment"] == pytest.approx(0.6 / 0.9)
    # The geometric mean of the value's own tokens, not the marker's.
    assert got["note"] == pytest.approx(math.sqrt(0.5 * 0.125))
    assert got["absent"] is None


def test_options_that_share_a_start_are_told_apart_where_they_differ() -> None:
    entries = [
        entry('{"', 1.0),
        entry("size", 1.0),
        entry('": "', 1.0),
        entry("sm", 0.5, ("med", 0.5)),  # both "small" and "smaller" start so: no choice yet
        entry("all", 0.9),
        entry("er", 0.2, ('"}', 0.6)),  # "smaller" (0.2) against "small" then the end (0.6)
        entry('"}', 1.0),
    ]
    got = field_confidence(
        spelled(entries), entries, {"size": Literal["small", "smaller", "medium"]}
    )
    assert got["size"] == pytest.approx(0.5 / 1.0 * 0.2 / 0.8)


def test_a_json_bool_and_an_enum_are_labels() -> None:
    entries = [
        entry('{"ok": ', 1.0),
        entry("true", 0.8, ("false", 0.1), ("null", 0.05)),
        entry(', "color": "', 1.0),
        entry("green", 0.7, ("red", 0.1)),
        entry('"}', 1.0),
    ]
    got = field_confidence(spelled(entries), entries, {"ok": bool, "color": Color})
    assert got["ok"] == pytest.approx(0.8 / 0.9)
    assert got["color"] == pytest.approx(0.7 / 0.8)


def test_a_token_that_holds_the_quote_and_the_label_is_read_past_the_quote() -> None:
    entries = [
        entry("<answer>", 1.0),
        entry(" yes", 0.75, (" no", 0.25)),
        entry("</answer>", 1.0),
    ]
    got = field_confidence(spelled(entries), entries, {"answer": Literal["yes", "no"]})
    assert got["answer"] == pytest.approx(0.75)


def test_without_top_logprobs_a_label_is_the_chosen_tokens_probability() -> None:
    entries = [entry('{"answer": "', 1.0), entry("no", 0.4), entry('"}', 1.0)]
    for e in entries:
        e["top_logprobs"] = []
    got = field_confidence(spelled(entries), entries, {"answer": Literal["yes", "no"]})
    assert got["answer"] == pytest.approx(0.4)


def test_a_label_that_is_no_option_is_scored_as_any_value() -> None:
    entries = [entry('{"answer": "', 1.0), entry("may", 0.5), entry("be", 0.5), entry('"}', 1.0)]
    got = field_confidence(spelled(entries), entries, {"answer": Literal["yes", "no"]})
    assert got["answer"] == pytest.approx(0.5)


def test_tokens_that_do_not_spell_the_text_give_no_number() -> None:
    entries = [entry("[[ ## a ## ]]\n", 1.0), entry("x", 0.5)]
    assert field_confidence("[[ ## a ## ]]\ny", entries, {"a": str}) == {"a": None}
    assert field_confidence("[[ ## a ## ]]\nx", None, {"a": str}) == {"a": None}


def test_a_token_split_inside_a_character_is_aligned_by_its_bytes() -> None:
    # As OpenAI sends such tokens: the text shows the bytes escaped, ``bytes`` holds them.
    text = '{"a": "é"}'
    raw = "é".encode()
    entries = [
        {"token": '{"a": "', "logprob": 0.0, "bytes": list(b'{"a": "')},
        {"token": "\\xc3", "logprob": math.log(0.5), "bytes": [raw[0]]},
        {"token": "\\xa9", "logprob": math.log(0.5), "bytes": [raw[1]]},
        {"token": '"}', "logprob": 0.0, "bytes": list(b'"}')},
    ]
    assert field_confidence(text, entries, {"a": str})["a"] == pytest.approx(0.5)


def test_a_stop_token_past_the_texts_end_is_no_mismatch() -> None:
    entries = [entry('{"a": "', 1.0), entry("x", 0.5), entry('"}', 1.0), entry("<|end|>", 1.0)]
    text = '{"a": "x"}'
    assert field_confidence(text, entries, {"a": str})["a"] == pytest.approx(0.5)


def test_a_think_draft_is_passed_over() -> None:
    entries = [
        entry("<think>[[ ## a ## ]] 1</think>", 1.0),
        entry("[[ ## a ## ]]\n", 1.0),
        entry("2", 0.25),
    ]
    assert field_confidence(spelled(entries), entries, {"a": int})["a"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[ ## a ## ]]\n  hi there \n[[ ## b ## ]]\nx", "hi there"),
        ('{"a": "q\\"uote", "b": 1}', 'q\\"uote'),
        ('{"a": [1, {"x": "]"}], "b": 1}', '[1, {"x": "]"}]'),
        ('{"a": 12.5}', "12.5"),
        ("<a>\n text\n</a>", "text"),
        ("nothing here", None),
    ],
)
def test_value_span(text: str, expected: str | None) -> None:
    span = value_span(text, "a")
    assert (text[span[0] : span[1]] if span else None) == expected


def test_label_options() -> None:
    assert label_options(bool) == ("true", "false")
    assert label_options(Literal["a", 1, True]) == ("a", "1", "true")
    assert label_options(Color | None) == ("red", "green")
    assert label_options(str) == ()
    assert label_options(list[str]) == ()


_tokens = st.lists(
    st.tuples(st.text(min_size=1, max_size=4), st.floats(min_value=-30, max_value=0)),
    min_size=1,
    max_size=12,
)


@given(_tokens, st.sampled_from(["yes", "no", "maybe"]))
def test_every_number_is_a_probability(tokens: list[tuple[str, float]], label: str) -> None:
    entries = [
        {
            "token": t,
            "logprob": lp,
            "bytes": None,
            "top_logprobs": [{"token": t[::-1], "logprob": lp}],
        }
        for t, lp in tokens
    ]
    head = [{"token": '{"a": "', "logprob": 0.0}, {"token": label, "logprob": -0.1}]
    body = [
        *head,
        {"token": '", "b": "', "logprob": 0.0},
        *entries,
        {"token": '"}', "logprob": 0.0},
    ]
    text = spelled(body)
    got = field_confidence(text, body, {"a": Literal["yes", "no"], "b": str})
    for value in got.values():
        assert value is None or 0.0 <= value <= 1.0
