"""What seeing a call costs: track_usage, callbacks and OpenTelemetry spans, per Predict call.

Against the loopback server of `calls.py` (its own process), structio's ``Predict`` on the
direct transport, cache off, measured as `calls.py` measures (client CPU time per call,
blocks interleaved round by round, the order rotated, medians over rounds):

- nothing observed (the default: the hooks see no callback and build nothing);
- inside ``track_usage()``;
- with a callback whose hooks do nothing (`structio.Callback`): every event is built;
- with ``OpenTelemetryCallback`` on the SDK's ``TracerProvider`` and an in-memory exporter
  (one span per call, ended and exported synchronously);
- a raw httpx POST of the same messages, for scale.

Then the hooks alone when nothing is observed: the call layer's start, response and end
reports per call, timed in a loop of a million, against the same loop doing nothing.

Run: python benchmarks/observe.py [--quick]    (OpenTelemetry rows need structio[otel])
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calls  # beside this file: importable once the path is set

import structio as sio
from structio.call import CallOptions
from structio.call.drivers import _observe  # the hooks themselves are measured
from structio.call.request import begin as _begin


def systems(url: str) -> dict[str, Callable[[], str]]:
    """One Predict call under each way of observing it, by label."""
    lm = calls.structio_lm(url, "direct")
    predict = sio.Predict(calls.SPEC, lm=lm)

    def plain() -> str:
        return str(predict(question=calls.QUESTION).answer)

    def tracked() -> str:
        with sio.track_usage():
            return plain()

    def with_callbacks(callbacks: list[Any]) -> Callable[[], str]:
        def observed() -> str:
            with sio.context(callbacks=callbacks):
                return plain()

        return observed

    found: dict[str, Callable[[], str]] = {
        "raw httpx POST": calls.per_call_systems(url, None, None)["raw httpx POST"],
        "Predict, nothing observed": plain,
        "Predict in track_usage()": tracked,
        "Predict, a no-op Callback": with_callbacks([sio.Callback()]),
    }
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        print("OpenTelemetry: not installed (pip install 'structio[otel]'), left out\n")
    else:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        otel = sio.OpenTelemetryCallback(tracer_provider=provider)
        spans = with_callbacks([otel])

        def traced() -> str:
            answer = spans()
            exporter.clear()  # the spans of a long run would otherwise pile up
            return answer

        found["Predict, OpenTelemetryCallback"] = traced
    return found


def hooks_alone(loops: int) -> tuple[float, float]:
    """CPU seconds per call of the unobserved hooks, and of the same loop without them."""
    lm = sio.FakeLM(["[[ ## answer ## ]]\nParis"])
    request = _begin(
        sio.ChatAdapter(),
        lm,
        calls.SPEC,
        (),
        {"question": calls.QUESTION},
        None,
        CallOptions(check_inputs=False),
        None,
    )
    # Unobserved, the scope never looks at what it is given.
    response: Any = None
    result: Any = None
    samples: list[tuple[float, float]] = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(loops):
            with _observe(request, lm) as scope:
                scope.responded(response)
                scope.ended(result)
        hooked = (time.process_time() - start) / loops
        start = time.process_time()
        for _ in range(loops):
            pass
        bare = (time.process_time() - start) / loops
        samples.append((hooked, bare))
    return (
        statistics.median(s[0] for s in samples),
        statistics.median(s[1] for s in samples),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (a smoke run)")
    args = parser.parse_args()
    settings = calls.QUICK if args.quick else calls.FULL
    warnings.filterwarnings("ignore")
    with calls.loopback() as server:
        measured = calls.measure_per_call(server, systems(server.url), settings)
    base = measured["Predict, nothing observed"].cpu
    print(f"## Per Predict call, direct transport ({settings.rounds} rounds, medians)\n")
    print("| system | CPU µs / call | ÷ nothing observed | requests / call |")
    print("|---|---:|---:|---:|")
    for name, result in measured.items():
        print(
            f"| {name} | {result.cpu * 1e6:,.0f} | {result.cpu / base:.2f} | "
            f"{result.requests_per_call:.0f} |"
        )
    hooked, bare = hooks_alone(100_000 if args.quick else 1_000_000)
    print(
        f"\nThe hooks of one unobserved call (start, response, end): "
        f"{(hooked - bare) * 1e9:,.0f} ns CPU ({hooked * 1e9:,.0f} ns with the loop, "
        f"{bare * 1e9:,.0f} ns for the empty loop)."
    )


if __name__ == "__main__":
    main()
