"""Formatting, parsing, calling and importing: structio against DSPy 3.4.1, side by side.

Workloads, each run by both libraries in this one process (DSPy when installed):

- (a) ``question -> answer``, no demos;
- (b) a class signature with three inputs (a str, a ``list[str]``, a pydantic model), a
  History of 4 turns, three outputs (a str, a pydantic model with a list, a float and a
  bool, a ``list[str]``) and 3 complete demos;

for ``ChatAdapter.format``, ``ChatAdapter.parse``, ``JSONAdapter.format`` and
``JSONAdapter.parse``; building a signature from a string spec; a whole ``Predict`` call
with a scripted LM (structio's FakeLM, DSPy's DummyLM); ``import`` in a fresh interpreter;
and the prompt tokens (o200k_base) of the same prompts. Times are medians of repeated
rounds; each round runs the operation enough times to last about 50 ms.

Run: python benchmarks/perf.py [--quick]      (pip install -r benchmarks/requirements.txt)
"""

# No `from __future__ import annotations` here: DSPy reads class annotations as they are,
# and would see `dspy.History` as an unresolved string.

import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any, Literal

import pydantic

import structio as sio
from structio.rendering.tokens import get_tokenizer


class Customer(pydantic.BaseModel):
    name: str
    plan: Literal["free", "pro", "team"]
    since: int


class Ticket(pydantic.BaseModel):
    labels: list[str]
    priority: float
    escalate: bool


INSTRUCTIONS = "Answer the customer's support request using the passages and the conversation."
CUSTOMER = {"name": "Ada Lovelace", "plan": "pro", "since": 2019}
PASSAGES = [
    "Refunds are issued within 5 business days to the original payment method.",
    "Pro plans can be cancelled at any time from the billing page.",
    "Duplicate charges are refunded automatically after review.",
]
TURNS = [
    {
        "request": f"Question {i}: why was I charged twice in month {i}?",
        "reply": f"Answer {i}: we are looking into the duplicate charge.",
        "ticket": {"labels": ["billing"], "priority": 0.5, "escalate": False},
        "tags": ["billing", "refund"],
    }
    for i in range(4)
]
DEMOS = [
    {
        "request": f"Demo {i}: my invoice is wrong.",
        "passages": PASSAGES[:2],
        "customer": CUSTOMER,
        "reply": f"Demo reply {i}: we will correct the invoice.",
        "ticket": {"labels": ["billing", "invoice"], "priority": 0.3, "escalate": False},
        "tags": ["invoice"],
    }
    for i in range(3)
]
CHAT_B = (
    "[[ ## reply ## ]]\nWe have refunded the duplicate charge.\n\n"
    '[[ ## ticket ## ]]\n{"labels": ["billing", "refund"], "priority": 0.8, "escalate": true}\n\n'
    '[[ ## tags ## ]]\n["billing", "refund"]\n\n[[ ## completed ## ]]'
)
JSON_B = (
    '{"reply": "We have refunded the duplicate charge.", "ticket": {"labels": ["billing", '
    '"refund"], "priority": 0.8, "escalate": true}, "tags": ["billing", "refund"]}'
)
CHAT_A = "[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]"
JSON_A = '{"answer": "Paris"}'


def structio_b() -> type[sio.Signature]:
    class Support(sio.Signature):
        __doc__ = INSTRUCTIONS

        request: str = sio.InputField()
        passages: list[str] = sio.InputField()
        customer: Customer = sio.InputField()
        history: sio.History = sio.InputField()
        reply: str = sio.OutputField()
        ticket: Ticket = sio.OutputField()
        tags: list[str] = sio.OutputField()

    return Support


def dspy_b(dspy: Any) -> Any:
    class Support(dspy.Signature):
        __doc__ = INSTRUCTIONS

        request: str = dspy.InputField()
        passages: list[str] = dspy.InputField()
        customer: Customer = dspy.InputField()
        history: dspy.History = dspy.InputField()
        reply: str = dspy.OutputField()
        ticket: Ticket = dspy.OutputField()
        tags: list[str] = dspy.OutputField()

    return Support


def timed(operation: Callable[[], Any], rounds: int) -> float:
    """Median seconds per call over ``rounds`` rounds of about 50 ms each."""
    operation()  # warm caches, as every call after the first would find them
    loops, start = 1, time.perf_counter()
    while True:
        for _ in range(loops):
            operation()
        if time.perf_counter() - start > 0.05:
            break
        loops *= 2
        start = time.perf_counter()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(loops):
            operation()
        samples.append((time.perf_counter() - start) / loops)
    return statistics.median(samples)


def import_time(module: str, repeats: int) -> float:
    """Median seconds of ``import module`` in a fresh interpreter, minus a bare start."""

    # As installed packages are used: with bytecode written once and read after.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=env)

    def run(code: str) -> float:
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    return run(f"import {module}") - run("pass")


def workloads(lib: Any, dspy: Any | None) -> dict[str, Callable[[], Any]]:
    """The operations for one library (``dspy`` given: DSPy's, else structio's)."""
    m = dspy or lib
    chat, json_ = m.ChatAdapter(), m.JSONAdapter()
    sig_a = m.Signature("question -> answer")
    sig_b = dspy_b(dspy) if dspy else structio_b()
    history = m.History(messages=TURNS)
    inputs_b = {
        "request": "I was charged twice this month.",
        "passages": PASSAGES,
        "customer": Customer(**CUSTOMER),
        "history": history,
    }
    demos_b = [
        {**d, "customer": Customer(**d["customer"]), "ticket": Ticket(**d["ticket"])} for d in DEMOS
    ]
    inputs_a = {"question": "What is the capital of France?"}
    ops: dict[str, Callable[[], Any]] = {
        "(a) ChatAdapter.format": lambda: chat.format(sig_a, [], inputs_a),
        "(a) ChatAdapter.parse": lambda: chat.parse(sig_a, CHAT_A),
        "(a) JSONAdapter.format": lambda: json_.format(sig_a, [], inputs_a),
        "(a) JSONAdapter.parse": lambda: json_.parse(sig_a, JSON_A),
        "(b) ChatAdapter.format": lambda: chat.format(sig_b, demos_b, inputs_b),
        "(b) ChatAdapter.parse": lambda: chat.parse(sig_b, CHAT_B),
        "(b) JSONAdapter.format": lambda: json_.format(sig_b, demos_b, inputs_b),
        "(b) JSONAdapter.parse": lambda: json_.parse(sig_b, JSON_B),
        "signature from a string spec": lambda: m.Signature(
            "context: list[str], question: str -> answer: int, confidence: float"
        ),
    }
    if dspy is not None:
        from dspy.utils.dummies import DummyLM

        lm = DummyLM([{"answer": "Paris"}] * 10_000_000)
        predict = dspy.Predict(sig_a)

        def call() -> Any:
            with dspy.context(lm=lm, adapter=chat):
                return predict(**inputs_a)

        ops["Predict call, (a), scripted LM"] = call
    else:
        fake = sio.FakeLM(lambda _messages: {"answer": "Paris"})
        predict = sio.Predict(sig_a, lm=fake)
        ops["Predict call, (a), scripted LM"] = lambda: predict(**inputs_a)
    return ops


def prompt_functions(magentic: Any | None) -> dict[str, Callable[[], Any]]:
    """``@prompt`` functions' ``format`` with a bulleted list: structio's, or magentic's."""
    template = "Suggest a recipe for {people} people using:\n{ingredients}"
    ingredients = ["eggs", "cheese", "spinach", "butter"]
    if magentic is None:

        @sio.prompt(template)
        def ours(people: int, ingredients: sio.BulletedList[str]) -> str:
            raise NotImplementedError

        items: Any = sio.BulletedList(ingredients)
        return {
            "@prompt function .format()": lambda: ours.format(4, items),
            "f-string of a BulletedList": lambda: f"{items}",
        }
    from magentic.formatting import BulletedList

    @magentic.prompt(template)
    def theirs(people: int, ingredients: BulletedList[str]) -> str: ...

    their_items: Any = BulletedList(ingredients)
    return {
        "@prompt function .format()": lambda: theirs.format(4, their_items),
        "f-string of a BulletedList": lambda: f"{their_items}",
    }


def tokens(lib: Any, dspy: Any | None) -> dict[str, int]:
    """Prompt tokens (o200k_base) of the (a) and (b) prompts."""
    tokenizer = get_tokenizer("o200k_base")
    ops = workloads(lib, dspy)
    out: dict[str, int] = {}
    for name in ("(a) ChatAdapter.format", "(b) ChatAdapter.format", "(b) JSONAdapter.format"):
        messages = ops[name]()
        out[name.replace(".format", "")] = sum(tokenizer.count(m["content"]) for m in messages)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args()
    rounds = 3 if args.quick else 9
    try:
        import dspy

        logging.getLogger("dspy").setLevel(logging.CRITICAL)
        warnings.filterwarnings("ignore")
    except ImportError:
        dspy = None

    ours = {name: timed(op, rounds) for name, op in workloads(sio, None).items()}
    theirs = {name: timed(op, rounds) for name, op in workloads(sio, dspy).items()} if dspy else {}
    print(f"Median of {rounds} rounds, each about 50 ms of calls.\n")
    _table("DSPy 3.4.1", "DSPy", ours, theirs)

    repeats = 3 if args.quick else 7
    ours_import = import_time("structio", repeats)
    row = f"| import (fresh interpreter) | {ours_import * 1e3:.0f} ms |"
    if dspy is not None:
        theirs_import = import_time("dspy", repeats)
        row += f" {theirs_import * 1e3:.0f} ms | {theirs_import / ours_import:.1f}x |"
    else:
        row += " — | — |"
    print(row)
    litellm_loaded = subprocess.run(
        [sys.executable, "-c", "import sys, structio; print('litellm' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"\n`import structio` loads litellm: {litellm_loaded}")

    try:
        import magentic
    except ImportError:
        magentic = None
    ours_fn = {name: timed(op, rounds) for name, op in prompt_functions(None).items()}
    theirs_fn = (
        {name: timed(op, rounds) for name, op in prompt_functions(magentic).items()}
        if magentic
        else {}
    )
    ours_text = [op() for op in prompt_functions(None).values()]
    same = magentic is not None and ours_text == [
        op() for op in prompt_functions(magentic).values()
    ]
    print()
    _table("magentic 0.41", "magentic", ours_fn, theirs_fn)
    if magentic is not None:
        print(f"\nThe same text as magentic's: {same}")

    print("\n| prompt tokens (o200k_base) | structio | DSPy 3.4.1 |")
    print("|---|---:|---:|")
    their_tokens = tokens(sio, dspy) if dspy else {}
    for name, count in tokens(sio, None).items():
        print(f"| {name} | {count:,} | {their_tokens.get(name, '—')} |")


def _table(other: str, short: str, ours: dict[str, float], theirs: dict[str, float]) -> None:
    print(f"| operation | structio | {other} | {short} / structio |")
    print("|---|---:|---:|---:|")
    for name, seconds in ours.items():
        if name in theirs:
            ratio = theirs[name] / seconds
            print(f"| {name} | {_us(seconds)} | {_us(theirs[name])} | {ratio:.1f}x |")
        else:
            print(f"| {name} | {_us(seconds)} | — | — |")


def _us(seconds: float) -> str:
    micro = seconds * 1e6
    return f"{micro / 1000:.2f} ms" if micro >= 1000 else f"{micro:.1f} µs"


if __name__ == "__main__":
    main()
