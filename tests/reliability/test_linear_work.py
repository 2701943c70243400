"""Doubling a degenerate completion at most about doubles the work of reading it.

Every adapter's `parse` and its stream reader read each generator of degenerate text below
at two sizes, one twice the other, and the work is counted, not timed, so the check says the
same on any machine: the Python lines run (`sys.monitoring`, everything but this file) and
the characters each regular expression is handed from where it starts. A step that rereads
the text once per line, per marker or per character grows four-fold and fails here.

What a count cannot see is the backtracking inside one regular expression call; the
shapes that once did that (a fence, a newline, then spaces) are also parsed at a megabyte
under a time limit in `test_parse_limits.py`, and `test_a_fence_then_spaces_is_read_in_one_pass`
checks the fence reader directly.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable, Iterator
from types import CodeType, ModuleType
from typing import Any

import pytest

import structio as sio
from structio._util import scan

SMALL = 3_000
# How much more work twice the text may cost: linear work is about twice (less with the
# fixed cost of a call); a step quadratic in the text would cost four times as much.
GROWTH = 2.5

Make = Callable[[int], str]


def _repeat(unit: str) -> Make:
    return lambda n: unit * max(1, n // len(unit))


def _lines(pool: list[str], fences: bool = False) -> Make:
    def make(n: int) -> str:
        rng, out, total = random.Random(n), [], 0  # noqa: S311 - text, not secrets
        while total < n:
            fenced = fences and rng.randrange(5) == 0
            line = rng.choice(["```python", "```"]) if fenced else rng.choice(pool)
            out.append(line)
            total += len(line) + 1
        return "\n".join(out)

    return make


# The units of `test_parse_limits.py`, and more: each repeated, and placed as it is there.
UNITS = ['"', "`", "_", "*", "{", "[", "```", "<think>", "- ", "[[ ## a", "[[ ##", "a:\n"]
UNITS += ["#", ",", "\n", "```\n", "```json\n", "\t", "\r\n", "\\", "'", ":", "<", "</"]
UNITS += ["<answer>", "</answer>", "<![CDATA[", "&", "&amp;", "]]>", "answer:", "answer = "]
UNITS += ["[[ ## answer ## ]]\n", "[[ ## completed ## ]]\n", '{"answer": ', '"answer"']
UNITS += ["</think>", "<thinking>\n", "// ", "/*", "1e999", "None", "\u2028", "\xa0"]

CODE = ['config = {"name": "svc", "ports": [80, 443], "env": {"DEBUG": False}}']
CODE += ["handler = lambda event, ctx: {'status': 200, 'body': json.dumps({'ok': True})}"]
CODE += ["export default { data() { return { count: 0, items: [] }; } };"]
PROSE = ["Step 3: merge the two maps.", "x = {'a': [1, 2]}", "The test below checks it."]

GENERATORS: dict[str, Make] = {}
for _unit in UNITS:
    _rep = _repeat(_unit)
    GENERATORS[f"{_unit!r} alone"] = _rep
    GENERATORS[f"{_unit!r} between a label and a value"] = lambda n, r=_rep: (
        "answer: a" + r(n) + "b"
    )
    GENERATORS[f"{_unit!r} before a marker"] = lambda n, r=_rep: r(n) + "[[ ## answer ## ]]\n5"
    GENERATORS[f"{_unit!r} then spaces"] = lambda n, u=_unit: u + " " * n
    GENERATORS[f"{_unit!r} then spaces and a letter"] = lambda n, u=_unit: u + " " * n + "x"
    GENERATORS[f"{_unit!r} in an element"] = lambda n, r=_rep: "<answer>" + r(n) + "</answer>"
GENERATORS.update(
    {
        "a fence, a newline, then spaces": lambda n: "```\n" + " " * n + "x",
        "a fence, a newline, then tabs and newlines": lambda n: "```\n" + "\t\n " * (n // 3),
        "spaces, then a closing fence": lambda n: "```\n" + " " * n + "```",
        "think tags with text": _repeat("<think>x"),
        "think tags among markers": _repeat("<think>x\n[[ ## answer ## ]]\n5\n"),
        "a long draft, then the answer": lambda n: (
            "<think>"
            + _repeat("I could write [[ ## answer ## ]] 41, <think> but no.\n")(n)
            + "</think>\n[[ ## answer ## ]]\n42"
        ),
        "code": _lines(CODE),
        "code in blocks four deep": lambda n: "if (a) {\n" * 4 + _lines(CODE)(n) + "}" * 4,
        "code, then an answer": lambda n: _lines(CODE)(n) + '\n{"answer": 5}',
        "markers on one line": _repeat("[[ ## answer ## ]] x "),
        "markers mentioned on one line": _repeat("x [[ ## answer ## ]]"),
        "lines and fences": _lines(PROSE, fences=True),
        "a section of lines and fences": lambda n: (
            "[[ ## answer ## ]]\n" + _lines(PROSE, fences=True)(n) + "\n[[ ## completed ## ]]"
        ),
        "label lines with values": _repeat("answer: 1\nnotes: x\n"),
        "elements, open and closed": _repeat("<answer>1</answer><notes>"),
        "an unclosed string in JSON": lambda n: '{"answer": "' + "x" * n,
        "escapes in a JSON string": lambda n: '{"answer": "' + _repeat('\\"')(n) + '"}',
        "nested brackets, then text": lambda n: "[" * 60 + "x" * n,
    }
)
SIGNATURES = ["question -> answer: int", "question -> answer: list[str], notes"]
ADAPTERS = [sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter(), sio.CompactAdapter()]


class _Counted:
    """A compiled pattern that adds the characters it is handed to a shared count.

    A search counts up to where it matched (or to the end), a match what it matched (one
    step when it fails at once); the calls that read the whole text count all of it.
    """

    def __init__(self, pattern: re.Pattern[str], work: list[int]) -> None:
        self._pattern = pattern
        self._work = work

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)

    def _span(self, string: str, pos: int, endpos: int | None) -> int:
        end = len(string) if endpos is None else min(endpos, len(string))
        return max(1, end - pos)

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        found = self._pattern.search(string, pos, sys.maxsize if endpos is None else endpos)
        self._work[0] += found.end() - pos + 1 if found else self._span(string, pos, endpos)
        return found

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        found = self._pattern.match(string, pos, sys.maxsize if endpos is None else endpos)
        self._work[0] += found.end() - pos + 1 if found else 1
        return found

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        found = self._pattern.fullmatch(string, pos, sys.maxsize if endpos is None else endpos)
        self._work[0] += found.end() - pos + 1 if found else 1
        return found

    def _whole(self, method: str, string: str, *args: Any, **kwargs: Any) -> Any:
        self._work[0] += len(string) + 1
        return getattr(self._pattern, method)(string, *args, **kwargs)

    def finditer(self, string: str, *args: Any) -> Iterator[re.Match[str]]:
        return self._whole("finditer", string, *args)  # type: ignore[no-any-return]

    def findall(self, string: str, *args: Any) -> list[Any]:
        return self._whole("findall", string, *args)  # type: ignore[no-any-return]

    def split(self, string: str, maxsplit: int = 0) -> list[str]:
        return self._whole("split", string, maxsplit)  # type: ignore[no-any-return]

    def sub(self, repl: Any, string: str, count: int = 0) -> str:
        self._work[0] += len(string) + 1
        return self._pattern.sub(repl, string, count)

    def subn(self, repl: Any, string: str, count: int = 0) -> tuple[str, int]:
        self._work[0] += len(string) + 1
        return self._pattern.subn(repl, string, count)


def _structio_modules() -> list[ModuleType]:
    return [m for n, m in list(sys.modules.items()) if n.startswith("structio") and m]


@pytest.fixture(scope="module")
def counter() -> Iterator[Callable[[Callable[[], object]], int]]:
    """Counts the work of a function: Python lines run, and characters given to patterns."""
    work = [0]
    patched: list[tuple[ModuleType, str, re.Pattern[str]]] = []
    for module in _structio_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                patched.append((module, name, value))
                setattr(module, name, _Counted(value, work))
    here = __file__

    def line(code: CodeType, _line: int) -> object:
        if code.co_filename == here:
            return sys.monitoring.DISABLE
        work[0] += 1
        return None

    tool = sys.monitoring.PROFILER_ID
    sys.monitoring.use_tool_id(tool, "structio linear work")
    sys.monitoring.register_callback(tool, sys.monitoring.events.LINE, line)

    def count(run: Callable[[], object]) -> int:
        work[0] = 0
        sys.monitoring.set_events(tool, sys.monitoring.events.LINE)
        try:
            run()
        finally:
            sys.monitoring.set_events(tool, 0)
        return work[0]

    try:
        yield count
    finally:
        sys.monitoring.register_callback(tool, sys.monitoring.events.LINE, None)
        sys.monitoring.free_tool_id(tool)
        sys.monitoring.restart_events()
        for module, name, value in patched:
            setattr(module, name, value)


def _read(adapter: sio.Adapter, signature: str, text: str) -> Callable[[], object]:
    def run() -> object:
        sig = sio.Signature(signature)
        reader = adapter.stream_reader(sig)
        for start in range(0, len(text), 64):
            reader.feed(text[start : start + 64])
        try:
            values = adapter.parse(sig, text)
        except sio.ParseError as error:
            return str(error)  # the message is built too
        return reader.finish(values)

    return run


@pytest.mark.parametrize("name", list(GENERATORS))
def test_twice_the_text_costs_at_most_about_twice_the_work(
    name: str, counter: Callable[[Callable[[], object]], int]
) -> None:
    make = GENERATORS[name]
    small, large = make(SMALL), make(2 * SMALL)
    assert 1.8 * len(small) <= len(large) <= 2.2 * len(small)
    grown = {}
    for adapter in ADAPTERS:
        for signature in SIGNATURES:
            _read(adapter, signature, small)()  # plans and caches built before counting
            before = counter(_read(adapter, signature, small))
            after = counter(_read(adapter, signature, large))
            if after > GROWTH * before:
                grown[f"{type(adapter).__name__} / {signature}"] = (before, after)
    assert grown == {}


def test_the_counter_sees_a_quadratic_step(
    counter: Callable[[Callable[[], object]], int],
) -> None:
    # A reader that searches the rest of the text once per line: the check must fail it.
    def quadratic(text: str) -> Callable[[], object]:
        def run() -> object:
            return [scan._FENCE_OPEN.search(text, i) for i in range(1, len(text), 50)]

        return run

    text = "```\n" + "x" * SMALL
    before, after = counter(quadratic(text)), counter(quadratic(text + "x" * SMALL))
    assert after > GROWTH * before


def test_a_fence_then_spaces_is_read_in_one_pass() -> None:
    # `\n?[ \t]*```\s*$`, searched from every position, read a run of n spaces n times
    # (4.1 s at 100 KB, 36 s at 300 KB); the closing fence is now found from the end.
    assert scan.strip_fence("```\n" + " " * 10 + "x") == " " * 10 + "x"
    assert scan.strip_fence("```json\n{}\n  \t```  \n") == "{}"
    assert scan.strip_fence("```\n{}```") == "{}"
    assert scan.strip_fence("```\n\n```") == ""
    assert scan.strip_fence("```\n```") == ""
    assert scan.strip_fence("```\nx\n\n```") == "x\n"
    assert scan.strip_fence("```\nx``````") == "x```"
    assert "_FENCE_CLOSE" not in vars(scan)
