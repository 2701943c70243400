"""Parsing ends on every input: linear time at 1 MB, and only `ParseError` as a failure.

The timed part runs in a subprocess with a generous limit, so a pattern that turns
quadratic again fails this test instead of hanging CI. Nothing here asserts a speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio

SIZE = 1_000_000
# Shapes that once took seconds to minutes at 20-100 KB (each is given at 1 MB below).
SHAPES = {
    "quotes": '"',
    "backticks": "`",
    "underscores": "_",
    "stars": "*",
    "braces": "{",
    "brackets": "[",
    "spaces after a fence": "```",
    "think tags": "<think>",
    "a list item then spaces": "- ",
    "a marker start then spaces": "[[ ## a",
    "marker starts": "[[ ##",
    "label lines": "a:\n",
    "hashes": "#",
    "commas": ",",
    "newlines": "\n",
}
SIGNATURES = [
    "question -> answer: int",
    "question -> answer",
    "question -> answer: list[str], notes: dict",
    "question -> answer: bool, score: float",
]

WORKER = textwrap.dedent(
    """
    import json, sys
    import structio as sio

    shapes, size, signatures = json.loads(sys.stdin.read())
    outcomes = {}
    for name, unit in shapes.items():
        bodies = {
            "alone": unit * (size // len(unit)),
            "between a label and a value": "answer: a" + unit * (size // len(unit)) + "b",
            "before a marker": unit * (size // len(unit)) + "[[ ## answer ## ]]\\n5",
            "after spaces": unit + " " * size,
        }
        for where, text in bodies.items():
            for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
                for signature in signatures:
                    try:
                        adapter.parse(signature, text)
                        outcome = "value"
                    except sio.ParseError as error:
                        str(error)  # the message is built too
                        outcome = "ParseError"
                    except BaseException as error:  # anything else is the bug
                        outcome = type(error).__name__
                    outcomes[f"{name} / {where} / {type(adapter).__name__} / {signature}"] = outcome
    print(json.dumps(outcomes))
    """
)


def test_a_megabyte_of_every_pathological_shape_parses_in_linear_time() -> None:
    payload = json.dumps([SHAPES, SIZE, SIGNATURES])
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=payload,
        capture_output=True,
        text=True,
        timeout=600,  # about 30 s when linear; quadratic patterns took hours at this size
        check=True,
    )
    outcomes = json.loads(done.stdout)
    assert len(outcomes) == len(SHAPES) * 4 * 2 * len(SIGNATURES)
    assert {k: v for k, v in outcomes.items() if v not in ("value", "ParseError")} == {}


@pytest.mark.parametrize(
    "text",
    [
        "[" * 2000,
        '{"answer": ' + "[" * 330,
        '{"answer": ' + "[" * 500 + "]" * 500 + "}",
        "[" * 990 + "]" * 990,
        '{"a": ' * 400 + "1" + "}" * 400,
        "[[ ## answer ## ]]\n" + "(" * 300 + ")" * 300,
        "Patient(" * 300 + ")" * 300,
    ],
    ids=[
        "2000 [",
        "330 [ in an object",
        "500 closed",
        "990 closed",
        "400 objects",
        "parens",
        "calls",
    ],
)
def test_nesting_of_any_depth_is_a_parse_error(text: str) -> None:
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        for signature in ("q -> answer: int", "q -> answer: list", "q -> answer: dict"):
            with pytest.raises(sio.ParseError) as error:
                adapter.parse(signature, text)
            assert str(error.value)
            assert repr(error.value)


def test_a_shallow_answer_is_still_read() -> None:
    nested = "[" * 10 + "1" + "]" * 10
    assert sio.JSONAdapter().parse("q -> answer: list", '{"answer": ' + nested + "}") == {
        "answer": json.loads(nested)
    }


TOKENS = [
    '"',
    "'",
    "`",
    "```",
    "*",
    "**",
    "_",
    "#",
    "[[ ## ",
    " ## ]]",
    "answer",
    "notes",
    "[[ ## completed ## ]]",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\n",
    " ",
    "<think>",
    "</think>",
    "- ",
    "1.",
    "yes",
    "no",
    "42",
    "3.5",
    "answer:",
    "**Answer**:",
    "null",
    "None",
    "true",
    "\\",
    "Literal[",
    "(",
    ")",
    "=",
    "$",
    "%",
    "```json\n",
    "{{",
    "}}",
    "//",
    "/*",
    "*/",
]

completions = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=60).map("".join),
    st.text(max_size=200),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=5)), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(completions)
def test_any_completion_gives_every_output_or_a_parse_error(text: str) -> None:
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        for signature in SIGNATURES:
            sig = sio.Signature(signature)
            try:
                values = adapter.parse(sig, text)
            except sio.ParseError as error:
                message = str(error)  # the message is built without failing too
            else:
                message = ""
                assert list(values) == list(sig.output_fields)
            assert isinstance(message, str)
