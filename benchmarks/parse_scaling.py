"""Parsing time against the completion's length: structio, and DSPy 3.4.1 when installed.

Each shape is a completion a model may write at length, made from 1 KB to 1 MB by repeating
its parts: reasoning drafts that never close, code full of braces without any marker,
long answers of many lines and fences. Both adapters parse each one, structio's and DSPy's
side by side in this one process, in interleaved rounds; a figure is the median CPU time
(``time.process_time``) of a parse, shown per KB of completion. A parse that is linear in
the completion's length takes the same time per KB at every size: the *linearity* column
divides the time per KB at the largest size by that at 1 KB (about 1 when linear, under 1
where the fixed cost of a parse dominates at 1 KB, 1000 when quadratic).

DSPy runs a size only while a quadratic growth from the size before would stay under
`DSPY_CAP` seconds a parse; larger sizes show "skipped".

Run: python benchmarks/parse_scaling.py            (pip install -r benchmarks/requirements.txt)
     python benchmarks/parse_scaling.py --quick    (structio only, to 64 KB: a smoke run)
"""

from __future__ import annotations

import argparse
import gc
import logging
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import structio as sio

SIZES = [1_000, 8_000, 64_000, 256_000, 1_000_000]
QUICK_SIZES = [1_000, 8_000, 64_000]
DSPY_CAP = 20.0  # seconds a parse: DSPy's JSON pattern is quadratic on some brace-heavy text

# -- the shapes -----------------------------------------------------------------------------

# Lines of Python and JavaScript as models write them: dicts, lambdas, f-strings, JSON-like
# fragments, comprehensions, object literals. Each line is balanced on its own.
CODE_LINES = [
    'config = {"name": "svc", "ports": [80, 443], "env": {"DEBUG": False, "LEVEL": "info"}}',
    "handler = lambda event, ctx: {'status': 200, 'body': json.dumps({'ok': True})}",
    "print(f\"{user['name']!r} has {len(items)} items: {[i.id for i in items]}\")",
    "const routes = [{path: '/', component: Home}, {path: '/about', component: About}];",
    "function merge(a, b) { return {...a, ...b, meta: {merged: true, keys: Object.keys(b)}}; }",
    "if (x > 0) { y = arr[i][j] + map[key]; } else { y = {}; }",
    'data = json.loads(\'{"a": [1, 2, {"b": null}], "c": {"d": "e"}}\')',
    "matrix = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
    "def f(x: dict[str, list[int]]) -> set[int]: return {v for vs in x.values() for v in vs}",
    "result = {k: [v * 2 for v in vals if v] for k, vals in groups.items()}",
    "export default { data() { return { count: 0, items: [] }; }, methods: { inc() { n++; } } };",
    "// TODO: handle {edge} cases in [parser]",
]

PROSE_LINES = [
    "Here is how the function handles the empty case.",
    "Step 3: merge the two maps, keeping the newer value.",
    "x = {'a': [1, 2]}",
    "The test below checks it.",
]


def _lines(pool: list[str], size: int, seed: int, fence_every: int = 0) -> str:
    """Lines drawn from ``pool`` up to ``size`` characters, a fence every few lines."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        if fence_every and rng.randrange(fence_every) == 0:
            line = rng.choice(["```python", "```", "```json", "```"])
        else:
            line = rng.choice(pool)
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def code(size: int) -> str:
    return _lines(CODE_LINES, size, seed=1)


def code_in_a_class(size: int) -> str:
    body = _lines(CODE_LINES, size - 60, seed=2).replace("\n", "\n    ")
    return "class Service {\n  handle(request) {\n    " + body + "\n  }\n}\n"


def code_in_blocks(size: int) -> str:
    body = _lines(CODE_LINES, size - 130, seed=4)
    return "if (items) {\n" * 8 + body + "\n}" * 8


def fenced(size: int) -> str:
    return _lines(PROSE_LINES, size, seed=3, fence_every=5)


def long_draft(size: int) -> str:
    draft = _repeat("I could write [[ ## answer ## ]] 41 here, <think> but no.\n", size - 60)
    return "<think>" + draft + "</think>\n[[ ## answer ## ]]\n42\n\n[[ ## completed ## ]]\n"


def fenced_section(size: int) -> str:
    return "[[ ## answer ## ]]\n" + fenced(size - 50) + "\n\n[[ ## completed ## ]]\n"


def fenced_decorated(size: int) -> str:
    return "### [[ ## answer ## ]]:\n" + fenced(size - 50) + "\n**[[ ## completed ## ]]**\n"


# name: (signature, make a completion of about this many characters)
SHAPES: dict[str, tuple[str, Callable[[int], str]]] = {
    "`<think>` repeated, never closed": ("question -> answer", lambda n: _repeat("<think>", n)),
    "`<think>x` repeated, never closed": ("question -> answer", lambda n: _repeat("<think>x", n)),
    "a long draft full of markers and tags, then the answer": (
        "question -> answer: int",
        long_draft,
    ),
    "code, no marker, no output named": ("question -> answer", code),
    "code, no marker, the output named in it": ("question -> items: list[str]", code),
    "code in one class, the output named in it": ("question -> items: list[str]", code_in_a_class),
    "code in blocks eight deep, the output named in each": (
        "question -> items: list[str]",
        code_in_blocks,
    ),
    "lines and fences, no marker": ("question -> answer", fenced),
    "a section of lines and fences": ("question -> answer", fenced_section),
    "decorated markers, lines and fences": ("question -> answer", fenced_decorated),
}

# -- measuring ------------------------------------------------------------------------------

Parse = Callable[[], Any]


def parsers(library: Any, signature: str, adapter: str, text: str) -> Parse:
    """A call that parses ``text`` with ``library``'s adapter, errors included."""
    sig = library.Signature(signature)
    parser = getattr(library, adapter)()

    def parse() -> Any:
        try:
            return parser.parse(sig, text)
        except Exception as error:  # a refusal is a result too: its time counts
            return error

    return parse


def per_parse(parse: Parse, number: int) -> float:
    """CPU seconds of one parse, over ``number`` parses."""
    gc.collect()
    start = time.process_time()
    for _ in range(number):
        parse()
    return (time.process_time() - start) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="structio only, to 64 KB, 1 round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    rounds = 1 if args.quick else args.rounds
    target = 0.002 if args.quick else 0.02  # seconds of parsing in one measurement
    libraries: dict[str, Any] = {"structio": sio}
    if not args.quick:
        try:
            import dspy

            logging.getLogger("dspy").setLevel(logging.CRITICAL)
            warnings.filterwarnings("ignore")
            libraries["DSPy"] = dspy
        except ImportError:
            print("(DSPy is not installed: pip install -r benchmarks/requirements.txt)\n")

    # One calibration pass: how many parses make a measurement, and which sizes DSPy runs.
    cells: dict[tuple[str, str, str, int], tuple[Parse, int]] = {}
    for shape, (signature, make) in SHAPES.items():
        for adapter in ("ChatAdapter", "JSONAdapter"):
            for name, library in libraries.items():
                previous: tuple[int, float] | None = None
                for size in sizes:
                    if name != "structio" and previous is not None:
                        last_size, last_time = previous
                        if last_time * (size / last_size) ** 2 > DSPY_CAP:
                            break
                    parse = parsers(library, signature, adapter, make(size))
                    single = per_parse(parse, 1)
                    previous = (size, single)
                    cells[shape, adapter, name, size] = (parse, max(1, round(target / single)))

    samples: dict[tuple[str, str, str, int], list[float]] = {key: [] for key in cells}
    keys = list(cells)
    for index in range(rounds):
        # Interleaved: every cell once per round, the libraries alternating who goes first.
        for key in keys if index % 2 == 0 else keys[::-1]:
            parse, number = cells[key]
            samples[key].append(per_parse(parse, number))
    medians = {key: statistics.median(values) for key, values in samples.items()}
    _print_table(medians, sizes, list(libraries), rounds)


def _print_table(
    medians: dict[tuple[str, str, str, int], float], sizes: list[int], names: list[str], rounds: int
) -> None:
    largest = sizes[-1]
    print(f"CPU time per KB of completion (µs), median of {rounds} interleaved rounds.\n")
    head = " | ".join(_kb(size) for size in sizes)
    print(
        f"| shape (signature) | adapter | {head} | linearity | DSPy {_kb(sizes[0])} | "
        f"DSPy {_kb(largest)} | DSPy linearity | structio / DSPy at {_kb(largest)} |"
    )
    print("|---|---|" + "---:|" * (len(sizes) + 5))
    for shape, (signature, _) in SHAPES.items():
        for adapter in ("ChatAdapter", "JSONAdapter"):
            ours = [medians[shape, adapter, "structio", size] / size * 1e3 * 1e6 for size in sizes]
            cells = [_us(value) for value in ours] + [f"{ours[-1] / ours[0]:.2f}"]
            if "DSPy" in names:
                first = medians.get((shape, adapter, "DSPy", sizes[0]))
                last = medians.get((shape, adapter, "DSPy", largest))
                theirs_first = first / sizes[0] * 1e9 if first is not None else None
                theirs_last = last / largest * 1e9 if last is not None else None
                cells.append(_us(theirs_first) if theirs_first is not None else "skipped")
                cells.append(_us(theirs_last) if theirs_last is not None else "skipped")
                if theirs_first is not None and theirs_last is not None:
                    cells.append(f"{theirs_last / theirs_first:.2f}")
                    cells.append(f"{ours[-1] / theirs_last:.2f}x")
                else:
                    cells += ["—", "—"]
            else:
                cells += ["—"] * 4
            print(f"| {shape} (`{signature}`) | {adapter} | " + " | ".join(cells) + " |")


def _kb(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1_000} KB"


def _us(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


if __name__ == "__main__":
    main()
