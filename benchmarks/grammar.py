"""`Adapter.grammar` after the first call: the goal is at most 1 ms a call.

For each adapter with a grammar (Chat, XML, JSON), on a signature of eight outputs (a
label, a number, free text, models, lists, dicts, optional values): the first call (the
grammar built, then spelled as GBNF and as Lark) on a fresh signature, and then a call on
the same signature with a new adapter instance each time (the cache is per signature and
options, not per instance) asking for both texts. CPU time (``process_time``), adapters
interleaved, medians of batches of 1,000 calls.

Run: python benchmarks/grammar.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adapters.test_grammar import Scalars, Structured

import structio as sio

GOAL_S = 0.001


def signature() -> type[sio.Signature]:
    """A new signature class (its caches empty): the tests' labels, numbers and structures."""

    class Report(Structured):
        """Describe the picture."""

    return Report.append("label", Scalars.output_fields["label"]).append(
        "count", Scalars.output_fields["count"]
    )


ADAPTERS = (sio.ChatAdapter, sio.XMLAdapter, sio.JSONAdapter)


def main() -> None:
    """Measure and print the first and the cached call of each adapter."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    rounds = 5 if parser.parse_args().quick else 21
    first: dict[str, list[float]] = {a.__name__: [] for a in ADAPTERS}
    cached: dict[str, list[float]] = {a.__name__: [] for a in ADAPTERS}
    for _ in range(rounds):
        for adapter_class in ADAPTERS:  # interleaved
            sig = signature()
            start = time.process_time()
            grammar = adapter_class().grammar(sig)
            assert grammar is not None
            grammar.gbnf(), grammar.lark()
            first[adapter_class.__name__].append(time.process_time() - start)
            start = time.process_time()
            for _ in range(1000):
                again = adapter_class().grammar(sig)
                assert again is not None
                again.gbnf(), again.lark()
            cached[adapter_class.__name__].append((time.process_time() - start) / 1000)
    for name in first:
        after = statistics.median(cached[name])
        verdict = "ok" if after <= GOAL_S else "OVER THE GOAL"
        print(
            f"{name:12} first call {statistics.median(first[name]) * 1e3:6.2f} ms   "
            f"after it {after * 1e6:6.2f} us a call   ({verdict}: goal {GOAL_S * 1e3:.0f} ms)"
        )


if __name__ == "__main__":
    main()
