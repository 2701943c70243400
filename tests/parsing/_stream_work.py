"""The worker of `test_stream_linear.py`: the work of each reader per piece of one long line.

Run as ``python -m tests.parsing._stream_work`` in a fresh interpreter (see
`tests/reliability/_linear_work.py`, whose counter it uses: Python lines run and the
characters structio's regular expressions are handed). Prints, for each adapter, the work
of feeding a ``str`` output written on one line in `SHORT` and in `LONG` four-character
pieces, then finishing.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import structio as sio
from tests.reliability._linear_work import _line_counter, _patch_patterns

SHORT = 500
LONG = 8_000
ADAPTERS = {
    "chat": sio.ChatAdapter(),
    "json": sio.JSONAdapter(),
    "xml": sio.XMLAdapter(),
    "compact": sio.CompactAdapter(),
}


def one_line(adapter: sio.Adapter, sig: type[sio.Signature], size: int) -> str:
    """A completion whose ``answer`` is one line of ``size`` characters, written by ``adapter``."""
    words = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    record = adapter.format_finetune_data(sig, [], {"question": "q"}, {"answer": words})
    return str(record["messages"][-1]["content"])


def _feeding(adapter: sio.Adapter, sig: type[sio.Signature], text: str) -> Callable[[], object]:
    def run() -> object:
        reader = adapter.stream_reader(sig)
        for start in range(0, len(text), 4):
            reader.feed(text[start : start + 4])
        return reader.finish(adapter.parse(sig, text))

    return run


def main() -> None:
    """Print each adapter's work at both sizes, as JSON."""
    sig = sio.Signature("question -> answer")
    work = [0]
    _patch_patterns(work)
    count = _line_counter(work)
    counts: dict[str, list[int]] = {}
    for name, adapter in ADAPTERS.items():
        counts[name] = [
            count(_feeding(adapter, sig, one_line(adapter, sig, pieces * 4)))
            for pieces in (SHORT, LONG)
        ]
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
