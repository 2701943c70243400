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
    "spaces after a fence line": "```\n",  # 36 s at 300 KB before it was read from the end
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


# Completions a model may write at length (issue: "A real model call at the cost of an HTTP
# request"): reasoning drafts that never close (8,000 of them once took 8.6 s), code full of
# braces without any marker (1 MB once took 7.3 s), long answers of many lines and fences,
# many markers on one line (each once copied the rest of the line).
LONG_WORKER = textwrap.dedent(
    """
    import json, random, sys
    import pydantic
    import structio as sio
    from structio.parsing import decode, locate

    class Item(pydantic.BaseModel):
        name: str
        count: int

    code_lines, prose_lines, sizes = json.loads(sys.stdin.read())

    def lines(pool, size, fences=False):
        rng, out, total = random.Random(size), [], 0
        while total < size:
            fence = fences and rng.randrange(5) == 0
            line = rng.choice(["```python", "```"]) if fence else rng.choice(pool)
            out.append(line)
            total += len(line) + 1
        return "\\n".join(out)

    def repeat(unit, size):
        return unit * (size // len(unit))

    shapes = {
        "think tags": lambda n: repeat("<think>", n),
        "think tags with text": lambda n: repeat("<think>x", n),
        "think tags among markers": lambda n: repeat("<think>x\\n[[ ## answer ## ]]\\n5\\n", n),
        "a long draft, then the answer": lambda n: "<think>"
        + repeat("I could write [[ ## answer ## ]] 41, <think> but no.\\n", n)
        + "</think>\\n[[ ## answer ## ]]\\n42",
        "code": lambda n: lines(code_lines, n),
        "code in blocks four deep": lambda n: "if (a) {\\n" * 4 + lines(code_lines, n) + "}" * 4,
        "code, then an answer": lambda n: lines(code_lines, n) + '\\n{"answer": 5}',
        "markers on one line": lambda n: repeat("[[ ## answer ## ]] x ", n),
        "markers mentioned on one line": lambda n: repeat("x [[ ## answer ## ]]", n),
        "lines and fences": lambda n: lines(prose_lines, n, fences=True),
        "a section of lines and fences": lambda n: "[[ ## answer ## ]]\\n"
        + lines(prose_lines, n, fences=True)
        + "\\n[[ ## completed ## ]]",
        "decorated sections of lines and fences": lambda n: "### [[ ## answer ## ]]:\\n"
        + lines(prose_lines, n, fences=True)
        + "\\n**[[ ## items ## ]]**\\n- a\\n- b",
    }
    specs = ["question -> answer", "question -> answer: int", "question -> items: list[str]"]
    signatures = {spec: sio.Signature(spec) for spec in specs}
    signatures["question -> item: Item"] = sio.Signature(
        "question -> item: Item", custom_types={"Item": Item}
    )

    # The work of the two steps that cost most per character, counted: json-repair and the
    # bracket scanning. Counting, not timing, so the check says the same on any machine.
    work = {"repair": 0, "scan": 0}
    repaired, scan = decode._json_repaired, locate.scan_brackets

    def counted_repair(text):
        work["repair"] += len(text)
        return repaired(text)

    def counted_scan(text, start):
        end, comma = scan(text, start)
        work["scan"] += (end if end != -1 else len(text)) - start
        return end, comma

    decode._json_repaired, locate.scan_brackets = counted_repair, counted_scan

    outcomes, per_char = {}, {}
    for name, make in shapes.items():
        for size in sizes:
            text = make(size)
            for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
                for spec, signature in signatures.items():
                    work.update(repair=0, scan=0)
                    try:
                        adapter.parse(signature, text)
                        outcome = "value"
                    except sio.ParseError as error:
                        str(error)
                        outcome = "ParseError"
                    except BaseException as error:  # anything else is the bug
                        outcome = type(error).__name__
                    key = f"{name} / {type(adapter).__name__} / {spec}"
                    outcomes[f"{key} / {size}"] = outcome
                    for step, count in work.items():
                        per_char[f"{key} / {step} / {size}"] = count / len(text)
    print(json.dumps([outcomes, per_char]))
    """
)
CODE_LINES = [
    'config = {"name": "svc", "ports": [80, 443], "env": {"DEBUG": False, "LEVEL": "info"}}',
    "handler = lambda event, ctx: {'status': 200, 'body': json.dumps({'ok': True})}",
    "print(f\"{user['name']!r} has {len(items)} items: {[i.id for i in items]}\")",
    "const routes = [{path: '/', component: Home}, {path: '/about', component: About}];",
    "function merge(a, b) { return {...a, ...b, meta: {merged: true, keys: Object.keys(b)}}; }",
    'data = json.loads(\'{"a": [1, 2, {"b": null}], "c": {"d": "e"}}\')',
    "result = {k: [v * 2 for v in vals if v] for k, vals in groups.items()}",
    "export default { data() { return { count: 0, items: [] }; }, methods: { inc() {} } };",
    "// TODO: handle {edge} cases in [parser]",
]
PROSE_LINES = ["Step 3: merge the two maps.", "x = {'a': [1, 2]}", "The test below checks it."]
# The work is counted per character, not timed: any two sizes sixteen-fold apart show a
# quadratic step as a sixteen-fold growth, so these show it as 64 KB and 1 MB did, at a fifth
# of their two minutes of CPU (the megabyte of every shape is parsed above).
SMALL, LARGE = 16_000, 256_000


def test_long_drafts_code_and_fences_parse_in_linear_time() -> None:
    payload = json.dumps([CODE_LINES, PROSE_LINES, [SMALL, LARGE]])
    done = subprocess.run(
        [sys.executable, "-c", LONG_WORKER],
        input=payload,
        capture_output=True,
        text=True,
        timeout=600,  # seconds when linear; the quadratic readers took hours
        check=True,
    )
    outcomes, per_char = json.loads(done.stdout)
    assert len(outcomes) == 12 * 2 * 2 * 4
    assert {k: v for k, v in outcomes.items() if v not in ("value", "ParseError")} == {}
    # Linear work: per character of the completion, 256 KB costs what 16 KB does (the limit
    # is generous; a quadratic step would grow sixteen-fold from 16 KB to 256 KB).
    grown = {
        key: (per_char[key], per_char[key.replace(f"/ {LARGE}", f"/ {SMALL}")])
        for key in per_char
        if key.endswith(f"/ {LARGE}")
    }
    assert {k: v for k, v in grown.items() if v[0] > 2 * v[1] + 1} == {}
    # json-repair, the costliest step, reads each character a few times at most.
    assert max(v for k, v in per_char.items() if "/ repair /" in k) <= 4


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
