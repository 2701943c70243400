"""The worker of `test_linear_work.py`: counts the work of reading degenerate text.

Run as ``python _linear_work.py GROUP`` (an index into `GROUPS`), in a fresh interpreter so
that nothing another test left behind (a filled cache, a logging level, a monitoring tool)
changes the count. It prints one JSON object: for each adapter and signature whose work
grew more than `GROWTH` times when the text doubled, the two counts. ``selftest`` instead
counts a reader known to be quadratic, which must grow past `GROWTH`.

The work is counted, not timed, so the check says the same on any machine: the Python
lines run (``sys.monitoring`` from Python 3.12, ``sys.settrace`` before it; everything but
this file, json-repair's and pydantic's lines included) and the characters each of
structio's compiled regular expressions is handed from where it starts.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FrameType, ModuleType
from typing import Any

import structio as sio
from structio._util import scan

SMALL = 4_000
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
# The call's inputs for a generator that repeats them (the readers set copies aside).
MARKED_INPUT = "Notes:\n[[ ## answer ## ]]\n41\nAnswer: 41\n<answer>41</answer>\n" + "a line\n" * 20
INPUTS: dict[str, dict[str, str]] = {}
for _name, _make in {
    "an input holding markers, repeated": _repeat(MARKED_INPUT + "\n"),
    "an input holding markers, repeated, then the answer": lambda n: (
        _repeat(MARKED_INPUT + "\n")(n) + "[[ ## answer ## ]]\n42\n[[ ## completed ## ]]"
    ),
    "an input holding markers, its lines rejoined": _repeat(" ".join(MARKED_INPUT.split()) + " "),
    "an input, repeated": _repeat("a line\n" * 20),
}.items():
    GENERATORS[_name] = _make
    INPUTS[_name] = {"question": MARKED_INPUT if "markers" in _name else "a line\n" * 20}
SIGNATURES = ["question -> answer: int", "question -> answer: list[str], notes"]
ADAPTERS = [sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter(), sio.CompactAdapter()]


def _groups() -> list[tuple[str, list[str]]]:
    """The generators in groups of a unit's shapes (one worker process per group)."""
    groups: dict[str, list[str]] = {}
    for name in GENERATORS:
        unit = next((repr(u) for u in UNITS if name.startswith(f"{u!r} ")), name)
        groups.setdefault(unit, []).append(name)
    return list(groups.items())


GROUPS = _groups()


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


def _patch_patterns(work: list[int]) -> None:
    for module in _structio_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                setattr(module, name, _Counted(value, work))


def _line_counter(work: list[int]) -> Callable[[Callable[[], object]], int]:
    """Returns ``count(run)``: the lines ``run`` executes plus its regex characters."""
    here = __file__
    if sys.version_info >= (3, 12):
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 - 3.12+, for mypy on 3.10

        def line(code: CodeType, _line: int) -> object:
            if code.co_filename == here:
                return monitoring.DISABLE
            work[0] += 1
            return None

        tool = monitoring.PROFILER_ID
        monitoring.use_tool_id(tool, "structio linear work")
        monitoring.register_callback(tool, monitoring.events.LINE, line)

        def count(run: Callable[[], object]) -> int:
            work[0] = 0
            monitoring.set_events(tool, monitoring.events.LINE)
            try:
                run()
            finally:
                monitoring.set_events(tool, 0)
            return work[0]

        return count

    def local(frame: FrameType, event: str, _arg: object) -> Any:
        if event == "line":
            work[0] += 1
        return local

    def call(frame: FrameType, _event: str, _arg: object) -> Any:
        return None if frame.f_code.co_filename == here else local

    def count_traced(run: Callable[[], object]) -> int:
        work[0] = 0
        sys.settrace(call)
        try:
            run()
        finally:
            sys.settrace(None)
        return work[0]

    return count_traced


def _read(
    adapter: sio.Adapter, signature: str, text: str, inputs: dict[str, str] | None = None
) -> Callable[[], object]:
    def run() -> object:
        sig = sio.Signature(signature)
        reader = adapter.stream_reader(sig, inputs=inputs)
        for start in range(0, len(text), 64):
            reader.feed(text[start : start + 64])
        try:
            values = adapter.parse(sig, text, inputs=inputs)
        except sio.ParseError as error:
            return str(error)  # the message is built too
        return reader.finish(values)

    return run


def grown(group: int, count: Callable[[Callable[[], object]], int]) -> dict[str, list[int]]:
    """The readers whose work grew past `GROWTH` on the doubled text of one group."""
    found: dict[str, list[int]] = {}
    for name in GROUPS[group][1]:
        make = GENERATORS[name]
        small, large = make(SMALL), make(2 * SMALL)
        assert 1.8 * len(small) <= len(large) <= 2.2 * len(small), name
        for adapter in ADAPTERS:
            for signature in SIGNATURES:
                inputs = INPUTS.get(name)
                _read(adapter, signature, small, inputs)()  # plans and caches built first
                before = count(_read(adapter, signature, small, inputs))
                after = count(_read(adapter, signature, large, inputs))
                if after > GROWTH * before:
                    found[f"{name} / {type(adapter).__name__} / {signature}"] = [before, after]
    return found


def selftest(count: Callable[[Callable[[], object]], int]) -> list[int]:
    """The counts of a reader that searches the rest of the text once per 50 characters."""
    fence = scan._FENCE_OPEN

    def quadratic(text: str) -> Callable[[], object]:
        return lambda: [fence.search(text, i) for i in range(1, len(text), 50)]

    text = "```\n" + "x" * SMALL
    return [count(quadratic(text)), count(quadratic(text + "x" * SMALL))]


def main(argv: list[str]) -> None:
    """Prints the JSON result of ``argv[0]``: a group's index, or ``selftest``."""
    work = [0]
    _patch_patterns(work)
    count = _line_counter(work)
    result: object = selftest(count) if argv[0] == "selftest" else grown(int(argv[0]), count)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
