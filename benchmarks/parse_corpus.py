"""Score structio's parsers, and DSPy 3.4.1's when installed, on the parsing corpus.

Every case of tests/corpus is a realistic completion with either the values it honestly
holds or no honest value at all. Each parser's result counts as:

- recovered: the expected values;
- rejected: an error on a completion that does hold values (a lost answer);
- wrong: other values than the expected ones on such a completion;
- refused: an error on a completion with no honest value (correct);
- hallucinated: values read from a completion with no honest value.

It also times parsing of the well-formed completions, side by side.

Run: python benchmarks/parse_corpus.py      (pip install -r benchmarks/requirements.txt)
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_core import to_jsonable_python
from tests.corpus import CASES, CUSTOM_TYPES, SPECS, Case

import structio as sio

Parser = Callable[[str, str], Any]  # (signature key, completion) -> values


def structio_parsers() -> dict[str, Parser]:
    sigs = {k: sio.Signature(v, custom_types=CUSTOM_TYPES) for k, v in SPECS.items()}
    chat, json_ = sio.ChatAdapter(), sio.JSONAdapter()
    return {
        "chat": lambda sig, text: chat.parse(sigs[sig], text),
        "json": lambda sig, text: json_.parse(sigs[sig], text),
    }


def dspy_parsers() -> dict[str, Parser] | None:
    try:
        import dspy
    except ImportError:
        return None
    logging.getLogger("dspy").setLevel(logging.CRITICAL)
    sigs = {k: dspy.Signature(v, custom_types=CUSTOM_TYPES) for k, v in SPECS.items()}
    chat, json_ = dspy.ChatAdapter(), dspy.JSONAdapter()
    return {
        "chat": lambda sig, text: chat.parse(sigs[sig], text),
        "json": lambda sig, text: json_.parse(sigs[sig], text),
    }


def outcome(parser: Parser, case: Case) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = to_jsonable_python(parser(case.sig, case.completion))
    except Exception:  # any failure to produce values counts as a refusal here
        return "refused" if case.must_fail else "rejected"
    if case.must_fail:
        return "hallucinated"
    return "recovered" if values == case.expected else "wrong"


def median_us(parser: Parser, cases: list[Case], repeats: int = 7, loops: int = 200) -> float:
    def once() -> None:
        for case in cases:
            parser(case.sig, case.completion)

    once()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            once()
        samples.append((time.perf_counter() - start) / (loops * len(cases)) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parsers = {"structio": structio_parsers()}
    dspy = dspy_parsers()
    if dspy is not None:
        parsers["DSPy 3.4.1"] = dspy
    else:
        print("(DSPy is not installed: pip install -r benchmarks/requirements.txt)\n")
    kinds = ["recovered", "rejected", "wrong", "refused", "hallucinated"]
    print(f"{'format':6} {'parser':12} {'cases':>5} " + " ".join(f"{k:>12}" for k in kinds))
    for fmt, cases in CASES.items():
        for name, by_format in parsers.items():
            counts = Counter(outcome(by_format[fmt], case) for case in cases)
            cells = " ".join(f"{counts[k]:>12}" for k in kinds)
            print(f"{fmt:6} {name:12} {len(cases):>5} {cells}")
    total = sum(len(cases) for cases in CASES.values())
    failing = sum(case.must_fail for cases in CASES.values() for case in cases)
    print(f"\n{total} cases, {failing} with no honest value ({failing / total:.0%}).\n")

    print("Parsing well-formed completions (median of 7 runs, µs per completion):")
    for fmt in CASES:
        well_formed = [c for c in CASES[fmt] if c.id.startswith(f"{fmt}-ok")]
        times = {name: median_us(p[fmt], well_formed) for name, p in parsers.items()}
        line = "  ".join(f"{name} {us:8.1f}" for name, us in times.items())
        if "DSPy 3.4.1" in times:
            line += f"   DSPy/structio = {times['DSPy 3.4.1'] / times['structio']:.2f}x"
        print(f"  {fmt:5} ({len(well_formed)} completions): {line}")


if __name__ == "__main__":
    main()
