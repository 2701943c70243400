"""Costs that must stay flat as the work grows: batch concurrency, live signatures, 1 MB answers.

Three measurements in one run, each side by side in this one process, in interleaved rounds
(the order alternating), CPU time (``time.process_time``), medians:

- *batch*: ``Predict.batch`` of distinct questions against the loopback server of
  `calls.py` (its own process, so its CPU is never counted here; the direct transport,
  response cache off), at 1, 8 and 64 calls at once: CPU per call. Target: at 64, at most
  1.3x the CPU per call at 1;
- *live signatures*: a call (``ChatAdapter.format`` then ``parse``, and a ``Predict`` call
  on an LM whose transport answers at once, cache off) on one signature, against calls
  spread round-robin over 10,000 live signatures (each with outputs of its own names, so
  no cache keyed by names can serve one signature for another). Target: at most 1.2x;
- *1 MB answers*: each adapter's ``parse`` of an answer of about 1 MB, a long ``str``
  output (lines of prose and code) and a long ``list[str]`` output, against DSPy 3.4.1's
  same adapter on the same completion (``ChatAdapter``, ``JSONAdapter``, ``XMLAdapter``;
  structio's ``CompactAdapter``, whose answer is a JSON object, against DSPy's
  ``JSONAdapter``). Target: at most 1.0x DSPy's time, every adapter.

Each target is printed with its ratio and marked met or missed (informational: the exit
code is 0). Without DSPy the parse table shows structio's times alone.

Run: python benchmarks/flat_costs.py [--quick]   (pip install -r benchmarks/requirements.txt)
     --quick: a smoke run (fewer calls and signatures, 64 KB answers, one round)
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import random
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import structio as sio
from structio.lm.mock import MockRequest, MockTransport

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calls import loopback, structio_lm
from parse_scaling import CODE_LINES, PROSE_LINES

CONCURRENCY = (1, 8, 64)
BATCH_TARGET = 1.3
LIVE_TARGET = 1.2
PARSE_TARGET = 1.0
ADAPTERS = {  # structio's adapter: DSPy's adapter it is compared with
    "ChatAdapter": "ChatAdapter",
    "JSONAdapter": "JSONAdapter",
    "XMLAdapter": "XMLAdapter",
    "CompactAdapter": "JSONAdapter",
}


def cpu(action: Callable[[], Any]) -> float:
    """CPU seconds of ``action()``, after a collection (so no earlier garbage is paid)."""
    gc.collect()
    start = time.process_time()
    action()
    return time.process_time() - start


def interleaved(cases: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """The median of each case's result over ``rounds``, cases alternating in order."""
    names = list(cases)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names if index % 2 == 0 else names[::-1]:
            samples[name].append(cases[name]())
    return {name: statistics.median(values) for name, values in samples.items()}


def verdict(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "missed"


# -- batch --------------------------------------------------------------------------------


def batch_costs(calls: int, rounds: int) -> dict[int, float]:
    """CPU per call of ``Predict.batch`` of ``calls`` questions, by concurrency."""
    with loopback() as server:
        predict = sio.Predict("question -> answer", lm=structio_lm(server.url, "direct"))
        asked = [0]

        def case(concurrency: int) -> Callable[[], float]:
            def run() -> float:
                asked[0] += 1
                questions = [{"question": f"{asked[0]}-{i}: 2 + {i}?"} for i in range(calls)]
                results: list[Any] = []
                spent = cpu(
                    lambda: results.extend(
                        predict.batch(questions, max_concurrency=concurrency, progress=False)
                    )
                )
                if not all(getattr(r, "answer", None) == "Paris" for r in results):
                    raise RuntimeError(f"a call failed at concurrency {concurrency}")
                return spent / calls

            return run

        cases = {str(c): case(c) for c in CONCURRENCY}
        for run in cases.values():  # warm: the connections a round will reuse
            run()
        medians = interleaved(cases, rounds)
    return {int(name): value for name, value in medians.items()}


# -- live signatures ----------------------------------------------------------------------

_OUTPUT = re.compile(r"\[\[ ## (answer_\d+) ## \]\]")


def _answer(request: MockRequest) -> str:
    """The ChatAdapter answer for the output the request's system message names."""
    system = str(request.messages[0]["content"])
    name = _OUTPUT.search(system)
    if name is None:
        raise RuntimeError("no output named in the request")
    return f"[[ ## {name.group(1)} ## ]]\nParis\n\n[[ ## completed ## ]]\n"


def live_costs(live: int, calls: int, rounds: int) -> dict[str, tuple[float, float]]:
    """Per call on one signature and spread over ``live`` signatures: (one, many)."""
    chat = sio.ChatAdapter()
    lm = sio.LM("openai/test", transport=MockTransport(_answer), cache=False)
    signatures = [sio.Signature(f"question -> answer_{i}") for i in range(live)]
    predicts = [sio.Predict(signature, lm=lm, adapter=chat) for signature in signatures]
    completions = [f"[[ ## answer_{i} ## ]]\nParis\n\n[[ ## completed ## ]]\n" for i in range(live)]
    inputs = {"question": "What is the capital of France?"}

    def adapter_calls(spread: int) -> float:
        def run() -> None:
            for call in range(calls):
                index = call % spread
                chat.format(signatures[index], [], inputs)
                chat.parse(signatures[index], completions[index])

        return cpu(run) / calls

    def predict_calls(spread: int) -> float:
        def run() -> None:
            for call in range(calls):
                predicts[call % spread](**inputs)

        return cpu(run) / calls

    result: dict[str, tuple[float, float]] = {}
    for label, measure in (("format + parse", adapter_calls), ("Predict call", predict_calls)):
        measure(live)  # every signature seen once: its caches filled, as a live one's are
        cases = {"1": lambda m=measure: m(1), str(live): lambda m=measure: m(live)}
        medians = interleaved(cases, rounds)
        result[label] = (medians["1"], medians[str(live)])
        lm.history.clear()
    return result


# -- 1 MB answers -------------------------------------------------------------------------


def long_text(size: int) -> str:
    """About ``size`` characters of lines of prose and code, as a long answer holds."""
    rng = random.Random(7)
    lines: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(PROSE_LINES + CODE_LINES)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def long_list(size: int) -> list[str]:
    """About ``size`` characters of list items, as JSON."""
    return [f"item {i}: a short entry of the list" for i in range(size // 40)]


def completion(dspy_adapter: str, values: dict[str, Any]) -> str:
    """The completion ``dspy_adapter``'s format asks for, holding ``values``."""
    if dspy_adapter == "JSONAdapter":
        return json.dumps(values)

    def shown(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    if dspy_adapter == "XMLAdapter":
        return "".join(f"<{k}>{escape(shown(v))}</{k}>\n" for k, v in values.items())
    sections = "".join(f"[[ ## {k} ## ]]\n{shown(v)}\n\n" for k, v in values.items())
    return sections + "[[ ## completed ## ]]\n"


Shape = tuple[str, Callable[[int], dict[str, Any]]]
SHAPES: dict[str, Shape] = {
    "long str": ("question -> answer", lambda size: {"answer": long_text(size)}),
    "long list[str]": ("question -> items: list[str]", lambda size: {"items": long_list(size)}),
}


def parse_costs(
    size: int, rounds: int, dspy: Any | None
) -> dict[tuple[str, str], tuple[float, float | None]]:
    """Per (shape, adapter): structio's parse and DSPy's (None without DSPy), CPU seconds."""
    result: dict[tuple[str, str], tuple[float, float | None]] = {}
    for shape, (spec, make) in SHAPES.items():
        values = make(size)
        for ours_name, theirs_name in ADAPTERS.items():
            text = completion(theirs_name, values)
            ours, signature = getattr(sio, ours_name)(), sio.Signature(spec)
            if ours.parse(signature, text) != values:
                raise RuntimeError(f"structio's {ours_name} misread the {shape} answer")
            cases: dict[str, Callable[[], float]] = {
                "structio": lambda a=ours, s=signature, t=text: cpu(lambda: a.parse(s, t))
            }
            if dspy is not None:
                theirs, their_signature = getattr(dspy, theirs_name)(), dspy.Signature(spec)
                theirs.parse(their_signature, text)
                cases["DSPy"] = lambda a=theirs, s=their_signature, t=text: cpu(
                    lambda: a.parse(s, t)
                )
            medians = interleaved(cases, rounds)
            result[shape, ours_name] = (medians["structio"], medians.get("DSPy"))
    return result


# -- the report ---------------------------------------------------------------------------


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def report(
    batch: dict[int, float],
    live: dict[str, tuple[float, float]],
    count: int,
    parses: dict[tuple[str, str], tuple[float, float | None]],
    size: int,
    rounds: int,
) -> None:
    print(f"CPU time (process_time), medians of {rounds} interleaved rounds.\n")
    print("## Predict.batch: CPU per call by concurrency (loopback server, direct transport)\n")
    print("| concurrency | CPU per call | / at 1 |")
    print("|---:|---:|---:|")
    for concurrency, value in batch.items():
        print(f"| {concurrency} | {_us(value)} | {value / batch[1]:.2f}x |")
    print(f"\n## Per call, 1 live signature against {count:,} (round-robin)\n")
    print(f"| call | 1 signature | {count:,} signatures | ratio |")
    print("|---|---:|---:|---:|")
    for label, (one, many) in live.items():
        print(f"| {label} | {_us(one)} | {_us(many)} | {many / one:.2f}x |")
    kb = f"{size // 1000} KB" if size < 1_000_000 else f"{size // 1_000_000} MB"
    print(f"\n## Parsing a {kb} answer: structio against DSPy 3.4.1's same adapter\n")
    print("| answer | structio adapter | structio | DSPy adapter | DSPy | structio / DSPy |")
    print("|---|---|---:|---|---:|---:|")
    for (shape, adapter), (ours, theirs) in parses.items():
        ratio = f"{ours / theirs:.2f}x" if theirs else "—"
        shown = _ms(theirs) if theirs else "—"
        print(f"| {shape} | {adapter} | {_ms(ours)} | {ADAPTERS[adapter]} | {shown} | {ratio} |")
    print("\n## Targets\n")
    ratio = batch[64] / batch[1]
    print(
        f"- Predict.batch CPU per call at 64 / at 1: {ratio:.2f}x "
        f"(target ≤ {BATCH_TARGET}x): {verdict(ratio, BATCH_TARGET)}"
    )
    for label, (one, many) in live.items():
        ratio = many / one
        print(
            f"- {label} with {count:,} live signatures / with 1: {ratio:.2f}x "
            f"(target ≤ {LIVE_TARGET}x): {verdict(ratio, LIVE_TARGET)}"
        )
    for (shape, adapter), (ours, theirs) in parses.items():
        if theirs is None:
            print(f"- {kb} {shape}, {adapter}: no DSPy to compare with")
            continue
        ratio = ours / theirs
        print(
            f"- {kb} {shape}, {adapter} / DSPy {ADAPTERS[adapter]}: {ratio:.2f}x "
            f"(target ≤ {PARSE_TARGET}x): {verdict(ratio, PARSE_TARGET)}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    calls, live, size = (64, 200, 64_000) if args.quick else (640, 10_000, 1_000_000)
    dspy: Any | None = None
    try:
        import dspy as dspy_module

        logging.getLogger("dspy").setLevel(logging.CRITICAL)
        warnings.filterwarnings("ignore")
        dspy = dspy_module
    except ImportError:
        print("(DSPy is not installed: pip install -r benchmarks/requirements.txt)\n")
    batch = batch_costs(calls, rounds)
    live_figures = live_costs(live, 4 * live if args.quick else live, rounds)
    parses = parse_costs(size, rounds, dspy)
    report(batch, live_figures, live, parses, size, rounds)


if __name__ == "__main__":
    main()
