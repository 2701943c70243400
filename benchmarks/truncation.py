"""Cache-aware truncation over a long chat: structio against Prompt Poet, side by side.

A simulated chat of 400 turns (a system part, user and assistant messages with a realistic
spread of lengths, all history truncatable) is truncated at every turn under token limits of
4k, 8k and 32k with truncation steps from 0 to 4000, and with structio's "auto" step. Per
setting it reports, over the turns where the chat no longer fits:

- cache rate: the tokens each prompt shares with the previous turn's prompt (its prefix,
  which the provider's prefix cache serves), over the prompt's tokens;
- fill: the prompt's tokens over the limit (what the budget is used for).

Then it times building, tokenizing and truncating one 300-message prompt from a YAML +
Jinja2 template, as a chat server does every turn.

Prompt Poet pins tiktoken 0.7, which litellm (a structio dependency) does not accept, so it
runs in its own interpreter: set PROMPT_POET_PYTHON to a Python that has prompt-poet
(benchmarks/requirements-prompt-poet.txt). Without it, only structio's figures print.

Run: python benchmarks/truncation.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structio as sio
from structio.rendering.tokens import get_tokenizer

LIMITS = (4_000, 8_000, 32_000)
STEPS: tuple[int | str, ...] = (0, 100, 250, 500, 1000, 2000, 4000, "auto")
TURNS = 400
TIMED_HISTORY = 298  # + the system part and the new user message: a 300-message prompt
TIMED_LIMIT, TIMED_STEP = 8_000, 500

# The same prompt in both template dialects. Prompt Poet needs its escape function around
# data that may hold newlines or quotes; structio's templates keep data literal on their own.
PROMPT_POET_TEMPLATE = """\
- name: system
  role: system
  content: |
    {{ escape_special_characters(system) }}
{% for m in messages %}
- name: message_{{ loop.index }}
  role: {{ m.role }}
  truncation_priority: 1
  content: |
    {{ escape_special_characters(m.content) }}
{% endfor %}
- name: user
  role: user
  content: |
    {{ escape_special_characters(user) }}
"""
STRUCTIO_TEMPLATE = """\
- name: system
  role: system
  content: |
    {{ system }}
{% for m in messages %}
- name: message_{{ loop.index }}
  role: {{ m.role }}
  truncation_priority: 1
  content: |
    {{ m.content }}
{% endfor %}
- name: user
  role: user
  content: |
    {{ user }}
"""

_WORDS = (  # noqa: SIM905 - a vocabulary reads best as one text
    "the a an and or but if then so because while when where which that this these those "
    "it its we you they he she I me my our your their model prompt token cache request "
    "response answer question context window budget message history user assistant system "
    "data value field type list dict string number error retry limit step cost price time "
    "fast slow good bad new old first last next previous every each some many few more less "
    "can could should would will may might must is are was were be been being have has had "
    "do does did make makes made take takes took use uses used try tries tried need needs "
    "want wants see sees saw know knows knew think thinks thought say says said tell told "
    "work works worked run runs ran build builds built test tests tested read reads write "
    "writes wrote file files code function class method call calls server client network "
    "database query table row column index key schema JSON YAML Python Rust text image "
    "order delivery refund account password email address phone payment invoice shipping "
    "product price discount coupon weather travel flight hotel booking recipe dinner plan"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + rng.choice(".....?!")


def _message(rng: random.Random, median_words: float, sigma: float, cap: int) -> str:
    """A message whose length follows a log-normal spread, with paragraphs and some lists."""
    total = max(1, min(cap, round(rng.lognormvariate(math.log(median_words), sigma))))
    paragraphs: list[str] = []
    while total > 0:
        if rng.random() < 0.15 and total > 12:  # a short list, as assistants write
            items = [f"- {_sentence(rng, rng.randint(3, 9))}" for _ in range(rng.randint(2, 5))]
            paragraphs.append("\n".join(items))
            total -= 6 * len(items)
            continue
        size = min(total, rng.randint(8, 60))
        sentences: list[str] = []
        while size > 0:
            n = min(size, rng.randint(4, 18))
            sentences.append(_sentence(rng, n))
            size -= n
            total -= n
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def make_chat(turns: int, seed: int = 7) -> tuple[str, list[dict[str, str]]]:
    """A system prompt and ``turns`` user/assistant exchanges (deterministic for a seed)."""
    rng = random.Random(seed)
    system = "You are a helpful support assistant for an online shop. " + " ".join(
        _sentence(rng, rng.randint(8, 20)) for _ in range(14)
    )
    messages: list[dict[str, str]] = []
    for _ in range(turns):
        messages.append({"role": "user", "content": _message(rng, 18, 1.0, 600)})
        messages.append({"role": "assistant", "content": _message(rng, 70, 0.9, 1200)})
    return system, messages


def history_parts(system: str, messages: Sequence[dict[str, str]], turn: int) -> list[sio.Part]:
    """The prompt at ``turn``: system, the earlier messages (truncatable), the new message."""
    parts = [sio.Part("system", "system", system)]
    for i, m in enumerate(messages[: 2 * turn], start=1):
        parts.append(sio.Part(f"message_{i}", m["role"], m["content"], truncation_priority=1))
    parts.append(sio.Part("user", "user", messages[2 * turn]["content"]))
    return parts


def structio_dropped(
    system: str, messages: Sequence[dict[str, str]], turns: int
) -> dict[str, list[int]]:
    """For each (limit, step): how many history messages structio drops at each turn."""
    out: dict[str, list[int]] = {f"{lim}/{st}": [] for lim in LIMITS for st in STEPS}
    for turn in range(turns):
        prompt = sio.Prompt(history_parts(system, messages, turn))
        for limit in LIMITS:
            for step in STEPS:
                cut = prompt.truncate(limit, step)  # type: ignore[arg-type]
                dropped = [p.name for p in cut.dropped]
                assert dropped == [f"message_{i}" for i in range(1, len(dropped) + 1)]
                out[f"{limit}/{step}"].append(len(dropped))
    return out


class Scorer:
    """Cache rate and fill of a truncation run, from the history dropped at each turn."""

    def __init__(self, system: str, messages: Sequence[dict[str, str]]) -> None:
        tok = get_tokenizer("o200k_base")
        self.system_tokens = tok.count(system)
        self.texts = [m["content"] for m in messages]
        self.tokens = [tok.encode(t) for t in self.texts]
        self.counts = [len(t) for t in self.tokens]
        self.prefix = [0]
        for c in self.counts:
            self.prefix.append(self.prefix[-1] + c)

    def _span(self, start: int, stop: int) -> int:
        return self.prefix[stop] - self.prefix[start]

    def score(self, limit: int, dropped: Sequence[int]) -> tuple[float, float, int]:
        """(cache rate, mean fill, turns measured) over the turns that had to be truncated."""
        shared_sum = tokens_sum = 0
        fills: list[float] = []
        for turn in range(1, len(dropped)):
            full = self.system_tokens + self._span(0, 2 * turn + 1)
            if full <= limit:
                continue
            d, prev_d = dropped[turn], dropped[turn - 1]
            tokens = self.system_tokens + self._span(d, 2 * turn + 1)
            prev_tokens = self.system_tokens + self._span(prev_d, 2 * turn - 1)
            if d == prev_d:  # the previous prompt is a prefix of this one
                shared = prev_tokens
            else:  # shared: the system part, then the common start of two messages
                a, b = self.tokens[d], self.tokens[prev_d]
                common = next(
                    (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                    min(len(a), len(b)),
                )
                shared = self.system_tokens + common
            shared_sum += shared
            tokens_sum += tokens
            fills.append(tokens / limit)
        if not fills:
            return math.nan, math.nan, 0
        return shared_sum / tokens_sum, statistics.fmean(fills), len(fills)


def _median_time(
    run: Callable[[], Any], repeats: int, setup: Callable[[], Any] | None = None
) -> float:
    samples: list[float] = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def structio_timings(system: str, messages: list[dict[str, str]], repeats: int) -> dict[str, float]:
    """Seconds to build, tokenize and truncate the 300-message prompt, several ways."""
    history, user = messages[:TIMED_HISTORY], messages[TIMED_HISTORY]["content"]
    data = {"system": system, "messages": history, "user": user}
    template = sio.Template(STRUCTIO_TEMPLATE, name="chat")
    tokenizer = get_tokenizer("o200k_base")

    def from_template() -> sio.Prompt:
        return template.render(data).truncate(TIMED_LIMIT, TIMED_STEP)

    def compile_each_turn() -> sio.Prompt:
        return sio.Template(STRUCTIO_TEMPLATE).render(data).truncate(TIMED_LIMIT, TIMED_STEP)

    def from_parts() -> sio.Prompt:
        return sio.Prompt(history_parts(system, messages, TIMED_HISTORY // 2)).truncate(
            TIMED_LIMIT, TIMED_STEP
        )

    def warm() -> None:  # a running chat: every message but this turn's two was seen before
        tokenizer.clear()
        _ = sio.Prompt(history_parts(system, messages, TIMED_HISTORY // 2 - 1)).token_count

    check = from_template()
    assert [m["content"] for m in check.messages] == [
        m["content"] for m in from_parts().messages
    ], "the template and the parts must give the same prompt"
    return {
        "template, cold": _median_time(from_template, repeats, tokenizer.clear),
        "template, next turn": _median_time(from_template, repeats, warm),
        "template compiled each turn, next turn": _median_time(compile_each_turn, repeats, warm),
        "parts, next turn": _median_time(from_parts, repeats, warm),
        "tokens": float(check.token_count),
        "parts": float(len(check)),
    }


def prompt_poet(
    system: str, messages: list[dict[str, str]], repeats: int, simulate: bool
) -> dict[str, Any] | None:
    python = os.environ.get("PROMPT_POET_PYTHON")
    if not python:
        return None
    job = {
        "template": PROMPT_POET_TEMPLATE,
        "system": system,
        "messages": messages,
        "limits": LIMITS,
        "steps": [s for s in STEPS if isinstance(s, int)],
        "simulate": simulate,
        "timing": {
            "history": TIMED_HISTORY,
            "limit": TIMED_LIMIT,
            "step": TIMED_STEP,
            "repeats": repeats,
        },
    }
    env = dict(os.environ)
    # Prompt Poet's tiktoken reads o200k_base from a cache folder: litellm ships the file.
    spec = importlib.util.find_spec("litellm")  # found, not imported (that takes seconds)
    if spec is not None and spec.submodule_search_locations:
        package = Path(next(iter(spec.submodule_search_locations)))
        env.setdefault("TIKTOKEN_CACHE_DIR", str(package / "litellm_core_utils" / "tokenizers"))
    worker = Path(__file__).with_name("prompt_poet_worker.py")
    done = subprocess.run(
        [python, str(worker)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        sys.exit(f"Prompt Poet's worker failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    repeats = 5 if args.quick else 21
    system, messages = make_chat(TURNS)
    scorer = Scorer(system, messages)
    sizes = sorted(scorer.counts)
    print(
        f"chat: {TURNS} turns, {len(messages)} messages, {sum(sizes):,} tokens (o200k_base); "
        f"message tokens p10 {sizes[len(sizes) // 10]}, median {sizes[len(sizes) // 2]}, "
        f"p90 {sizes[9 * len(sizes) // 10]}, max {sizes[-1]}; system part {scorer.system_tokens}"
    )

    started = time.perf_counter()
    ours = structio_dropped(system, messages, TURNS)
    sim_s = time.perf_counter() - started
    print(f"structio: {TURNS * len(LIMITS) * len(STEPS)} truncations in {sim_s:.1f} s")
    started = time.perf_counter()
    theirs = prompt_poet(system, messages, repeats, simulate=True)
    if theirs is not None:
        print(f"Prompt Poet: simulation and timing in {time.perf_counter() - started:.1f} s")

    print(
        "\n| limit | step | turns | cache rate | fill | Prompt Poet cache rate | fill | same cuts |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for limit in LIMITS:
        for step in STEPS:
            key = f"{limit}/{step}"
            rate, fill, n = scorer.score(limit, ours[key])
            row = f"| {limit:,} | {step} | {n} | {rate:.1%} | {fill:.1%} |"
            if theirs is not None and key in theirs["dropped"]:
                p_rate, p_fill, _ = scorer.score(limit, theirs["dropped"][key])
                same = "yes" if theirs["dropped"][key] == ours[key] else "NO"
                row += f" {p_rate:.1%} | {p_fill:.1%} | {same} |"
            else:
                row += " — | — | — |"
            print(row)

    times = structio_timings(system, messages, repeats)
    kept, kept_tokens = int(times.pop("parts")), int(times.pop("tokens"))
    print(
        f"\nBuild, tokenize and truncate a {TIMED_HISTORY + 2}-message prompt (to {TIMED_LIMIT:,} "
        f"tokens, step {TIMED_STEP}: {kept} messages, {kept_tokens:,} tokens kept), "
        f"median of {repeats}:\n"
    )
    pp_time = theirs["timing"]["median_s"] if theirs else None
    print("| path | structio | Prompt Poet | Prompt Poet / structio |")
    print("|---|---:|---:|---:|")
    for label, seconds in times.items():
        if pp_time:
            ratio = pp_time / seconds
            print(f"| {label} | {seconds * 1e3:.2f} ms | {pp_time * 1e3:.1f} ms | {ratio:.1f}x |")
        else:
            print(f"| {label} | {seconds * 1e3:.2f} ms | — | — |")


if __name__ == "__main__":
    main()
