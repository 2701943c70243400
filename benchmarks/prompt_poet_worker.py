"""Prompt Poet's side of benchmarks/truncation.py, run in Prompt Poet's own interpreter.

Prompt Poet pins tiktoken 0.7, which conflicts with litellm, so it lives in its own virtual
environment; truncation.py starts this script there and talks JSON over stdin/stdout. It
imports only the standard library and prompt_poet.

Input: {"template", "system", "messages", "limits", "steps", "timing": {...}}.
Output: per (limit, step) the number of history messages dropped at each turn, and the
timings of building, tokenizing and truncating one prompt.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import time
from typing import Any

from prompt_poet import Prompt


def build(template: str, system: str, history: list[dict[str, str]], user: str) -> Any:
    data = {"system": system, "messages": history, "user": user}
    return Prompt(raw_template=template, template_data=data, tiktoken_encoding_name="o200k_base")


def dropped_history(prompt: Any, history_len: int) -> int:
    """How many history messages truncation removed (checking they are the oldest ones)."""
    names = [part.name for part in prompt.parts]
    kept = [int(n.split("_")[1]) for n in names if n.startswith("message_")]
    dropped = history_len - len(kept)
    if kept != list(range(dropped + 1, history_len + 1)):
        raise AssertionError(f"Prompt Poet kept a non-suffix of the history: {kept[:5]}...")
    return dropped


def simulate(job: dict[str, Any]) -> dict[str, list[int]]:
    messages = job["messages"]
    results: dict[str, list[int]] = {
        f"{lim}/{st}": [] for lim in job["limits"] for st in job["steps"]
    }
    for turn in range(len(messages) // 2):
        history = messages[: 2 * turn]
        prompt = build(job["template"], job["system"], history, messages[2 * turn]["content"])
        prompt.tokenize()
        for limit in job["limits"]:
            for step in job["steps"]:
                # Prompt Poet's step 1 is its naive truncation (structio's step 0).
                prompt.truncate(token_limit=limit, truncation_step=max(step, 1))
                results[f"{limit}/{step}"].append(dropped_history(prompt, len(history)))
    return results


def timing(job: dict[str, Any]) -> dict[str, float]:
    spec = job["timing"]
    history = job["messages"][: spec["history"]]
    user = job["messages"][spec["history"]]["content"]
    samples: list[float] = []
    tokens = 0
    for _ in range(spec["repeats"]):
        start = time.perf_counter()
        prompt = build(job["template"], job["system"], history, user)
        prompt.tokenize()
        prompt.truncate(token_limit=spec["limit"], truncation_step=spec["step"])
        samples.append(time.perf_counter() - start)
        tokens = len(prompt.tokens)
    return {"median_s": statistics.median(samples), "tokens": tokens, "parts": len(prompt.parts)}


def main() -> None:
    logging.disable(logging.WARNING)  # Prompt Poet logs a line for every truncate() call
    job = json.load(sys.stdin)
    out: dict[str, Any] = {"timing": timing(job)}
    if job.get("simulate", True):
        out["dropped"] = simulate(job)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
