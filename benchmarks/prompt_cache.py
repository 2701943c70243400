"""Prompt caching on Anthropic: the share of prompt tokens billed as cache reads, and the cost.

A 20-turn conversation (`structio.Predict` over a signature with a `History` input and
demos), through ChatAdapter and JSONAdapter, against a loopback server that answers as
Anthropic's Messages API does and bills prompt tokens as its prompt cache would
(`tests.wire.providers.anthropic_server.CacheSimulator`): a prefix ending at a
``cache_control`` breakpoint is cached when it has at least 1024 tokens; a later request
whose prefix at one of its breakpoints was cached reads it. Tokens are counted with
tiktoken's ``cl100k_base``, an approximation of Claude's tokenizer. Each run goes once
with ``prompt_cache=False`` (before: nothing marked, nothing cached) and once with the
default (after: the breakpoints `structio.lm._anthropic` places), priced at
claude-sonnet-4-5's prices in litellm's map (reads 0.1x, 5-minute writes 1.25x input).

Run: ``PYTHONPATH=src:. python benchmarks/prompt_cache.py``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [
    str(Path(__file__).resolve().parents[1]),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from tests.wire.providers.anthropic_server import (  # noqa: E402
    AnthropicServer,
    Reply,
    Request,
    message,
)

import structio as sio  # noqa: E402

MODEL = "anthropic/claude-sonnet-4-5"
TURNS = 20


class Support(sio.Signature):
    """You are the support assistant of a company that sells bicycles and their parts.

    Answer the customer's question in one or two sentences, kindly and precisely, using
    what was said earlier in the conversation. Never invent an order number, a price or a
    delivery date that the conversation does not give; when one is needed and missing, ask
    for it. Prefer the metric system, and name parts as the catalogue names them.
    """

    question: str = sio.InputField(desc="the customer's newest message")
    history: sio.History = sio.InputField(desc="the conversation so far")
    answer: str = sio.OutputField(desc="the reply to the customer")


def _demo(i: int) -> sio.Example:
    topics = ["brake pads", "a chain", "tyres", "a saddle", "a derailleur", "pedals"]
    topic = topics[i % len(topics)]
    question = (
        f"Hello, I bought {topic} from you last month for my touring bicycle and I would like "
        f"to know how often {topic} should be checked or replaced when I ride about 150 km a "
        "week on mixed roads, partly gravel, in a rainy climate. Is there anything special?"
    )
    answer = (
        f"With 150 km a week on wet gravel, check {topic} every two weeks and plan a "
        "replacement at the first sign of wear; rinse off grit after rainy rides."
    )
    return sio.Example(question=question, history=sio.History(), answer=answer).with_inputs(
        "question", "history"
    )


DEMOS = [_demo(i) for i in range(6)]


def _question(turn: int) -> str:
    return (
        f"Turn {turn}: thanks. One more thing about my order: could you tell me whether part "
        f"number {1000 + turn} fits a 2019 frame with 142 mm thru-axle spacing?"
    )


def _reply(request: Request) -> Reply:
    answer = "It fits if the frame uses a 12 mm axle; please confirm the model year."
    if "output_config" in request.body:
        return Reply(message=message(json.dumps({"answer": answer})))
    return Reply(message=message(f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"))


def conversation(adapter: sio.Adapter, *, prompt_cache: bool) -> dict[str, Any]:
    """Run the conversation; its prompt, cache-read and cache-write tokens, and its cost."""
    server = AnthropicServer(simulate_cache=True).start()
    server.handler = _reply
    try:
        lm = sio.LM(
            MODEL, api_base=server.base_url, api_key="k", cache=False, prompt_cache=prompt_cache
        )
        support = sio.Predict(Support, lm=lm, adapter=adapter, demos=DEMOS)
        turns: list[dict[str, Any]] = []
        prompt = read = written = 0
        cost = 0.0
        for turn in range(TURNS):
            question = _question(turn)
            pred = support(question=question, history=sio.History(list(turns)))
            turns.append({"question": question, "answer": pred.answer})
            usage = pred.meta.usage
            prompt += usage.prompt_tokens
            read += usage.cached_tokens
            written += usage.cache_write_tokens
            cost += pred.meta.cost or 0.0
        return {"prompt": prompt, "read": read, "written": written, "cost": cost}
    finally:
        server.stop()


def main() -> None:
    """Print before and after for each adapter."""
    print(f"{TURNS}-turn conversation with {len(DEMOS)} demos, {MODEL} prices")
    print(
        f"{'adapter':<12} {'cache':<6} {'prompt tok':>10} {'read':>8} {'written':>8} "
        f"{'read share':>10} {'cost $':>9}"
    )
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        runs = {}
        for setting in (False, True):
            runs[setting] = result = conversation(adapter, prompt_cache=setting)
            share = result["read"] / result["prompt"]
            print(
                f"{type(adapter).__name__:<12} {'on' if setting else 'off':<6} "
                f"{result['prompt']:>10} {result['read']:>8} {result['written']:>8} "
                f"{share:>10.1%} {result['cost']:>9.4f}"
            )
        print(
            f"{type(adapter).__name__:<12} cost with prompt_cache / without: "
            f"{runs[True]['cost'] / runs[False]['cost']:.3f}"
        )


if __name__ == "__main__":
    main()
