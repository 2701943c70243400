"""Rows per second of the ways to run a Predict over a data set: online `run_file`, and Ray.

One loopback OpenAI-compatible server (`_loopback.py`, in its own process, as in
`calls.py`) answers every request with the same ChatAdapter answer for
``question -> answer``. Against it, on the same rows (distinct questions, cache off):

- online: `structio.run.run_file` (what ``structio run`` does: rows streamed, each
  finished row appended to a JSONL file) at concurrency 8 and 64;
- Ray: `structio.ray.predict_dataset` on a local Ray (``num_cpus=2``), 2 actors with 4
  and 32 calls each (8 and 64 in flight in all), the dataset made from the same rows and
  every output row collected (``take_all``). Ray itself is started once, before the
  rounds; each round pays its actors' start (a new pool per dataset run).

- provider batch: `structio.run.run_batch` (``structio run --batch``) against the test
  suite's loopback server (`tests/wire/server.py`, which implements ``/v1/files`` and
  ``/v1/batches``), run in its own process; its batches complete at the first polls, so
  this is the turnaround without the provider's queue: build and upload the input, create,
  poll, download, read every answer, write the rows. Measured in its own rounds after the
  others (another server), same rows and statistics.

The modes are interleaved round by round (the order rotated); medians over rounds. Per
mode: rows per second of wall time; the measuring process's CPU per row
(``time.process_time``; for Ray that is only the driver: the calls run in the actors);
and the whole machine's CPU per row read from ``/proc/stat`` (every process: this one,
Ray's, and the server's, which is the same per request for every mode), where there is
one. The server counts requests: every mode must make exactly one per row, and every row
must come back answered.

Run: python benchmarks/run_modes.py [--quick]     (pip install -e ".[ray]")
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, before any import

from calls import API_KEY, MODEL, Loopback, loopback

import structio as sio
from structio.run import run_file

SPEC = "question -> answer"


@dataclass(frozen=True)
class Settings:
    """How much to measure."""

    rows: int
    rounds: int


FULL = Settings(rows=3_000, rounds=5)
QUICK = Settings(rows=60, rounds=1)
ONLINE_CONCURRENCY = (8, 64)
RAY_WORKERS = 2
RAY_PER_WORKER = (4, 32)  # 8 and 64 calls in flight in all, as online


@dataclass
class Sample:
    """One run of one mode."""

    wall: float
    cpu: float
    machine_cpu: float | None


def machine_cpu() -> float | None:
    """CPU seconds every process on this machine has used so far (Linux), else None."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system = (int(value) for value in fields[:3])
    irq, softirq = (int(value) for value in fields[5:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def questions(rows: int, round_: int) -> list[dict[str, str]]:
    """Distinct rows for each round, so nothing could be served from a cache."""
    return [{"id": f"r{round_}-{i}", "question": f"Question {round_}.{i}?"} for i in range(rows)]


def online(url: str, concurrency: int, workdir: Path) -> Callable[[list[dict[str, str]]], int]:
    """`run_file` at ``concurrency``: the rows to a new JSONL file; rows answered."""
    predict = sio.Predict(SPEC, lm=sio.LM(MODEL, api_base=url, api_key=API_KEY, cache=False))
    runs = iter(range(1_000_000))

    def run(rows: list[dict[str, str]]) -> int:
        out = workdir / f"online-{concurrency}-{next(runs)}.jsonl"
        # A data file holds only the signature's fields (its line number is the row's id).
        data = [{"question": row["question"]} for row in rows]
        summary = run_file(predict, data, out, concurrency=concurrency, progress=False)
        if summary.failed:
            raise RuntimeError(f"online run failed rows: {summary.failed[:3]}")
        return summary.done

    return run


def on_ray(url: str, per_worker: int) -> Callable[[list[dict[str, str]]], int]:
    """`predict_dataset` on the local Ray: every output row collected; rows answered."""
    import ray

    from structio.ray import predict_dataset

    def build() -> sio.Predict:  # runs once in each actor
        return sio.Predict(SPEC, lm=sio.LM(MODEL, api_base=url, api_key=API_KEY, cache=False))

    def run(rows: list[dict[str, str]]) -> int:
        dataset = ray.data.from_items(rows, override_num_blocks=RAY_WORKERS * 4)
        out = predict_dataset(
            dataset, build, workers=RAY_WORKERS, max_concurrency=per_worker, batch_size=250
        ).take_all()
        answered = sum(row["error"] is None and row["answer"] == "Paris" for row in out)
        if len(out) != len(rows) or answered != len(rows):
            raise RuntimeError(f"Ray gave {len(out)} rows for {len(rows)}, {answered} answered")
        return answered

    return run


@contextlib.contextmanager
def local_ray() -> Iterator[float]:
    """Ray on this machine, quiet (2 CPUs, no dashboard); yields its start-up seconds."""
    import ray

    warnings.simplefilter("ignore", DeprecationWarning)  # Ray's own, about its own options
    start = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        _node_ip_address="127.0.0.1",
    )
    started = time.perf_counter() - start
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    try:
        yield started
    finally:
        ray.shutdown()


def measure(
    server: Loopback, modes: dict[str, Callable[[list[dict[str, str]]], int]], settings: Settings
) -> dict[str, list[Sample]]:
    """Each mode over fresh rows, interleaved round by round; one request per row checked."""
    samples: dict[str, list[Sample]] = {name: [] for name in modes}
    names = list(modes)
    for name in names:  # warm-up: connections, imports, Ray's worker processes
        modes[name](questions(min(100, settings.rows), -1))
    for round_ in range(settings.rounds):
        rows = questions(settings.rows, round_)
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            before = server.requests()
            machine = machine_cpu()
            wall, cpu = time.perf_counter(), time.process_time()
            done = modes[name](rows)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            after = machine_cpu()
            made = server.requests() - before
            if done != len(rows) or made != len(rows):
                raise RuntimeError(f"{name}: {done} rows answered, {made} requests, {len(rows)}")
            used = None if machine is None or after is None else after - machine
            samples[name].append(Sample(wall, cpu, used))
    return samples


_BATCH_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.wire.server import OpenAIServer, Reply
server = OpenAIServer().start()
server.default = Reply("[[ ## answer ## ]]\\nParis\\n\\n[[ ## completed ## ]]")
print(server.base_url, flush=True)
sys.stdin.read()  # until the parent closes it
server.stop()
"""


@contextlib.contextmanager
def batch_server() -> Iterator[str]:
    """The test suite's loopback server (files and batches) in a child process: its URL."""
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", _BATCH_SERVER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdin is not None
    try:
        url = child.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError("the batch server did not start")
        yield url
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def measure_batch(url: str, settings: Settings, workdir: Path) -> list[Sample]:
    """`run_batch` over fresh rows, round by round: submit, poll at once, read, write."""
    from structio.run import run_batch

    predict = sio.Predict(SPEC, lm=sio.LM(MODEL, api_base=url, api_key=API_KEY, cache=False))
    samples: list[Sample] = []
    for round_ in range(-1, settings.rounds):  # round -1 warms up
        rows = questions(settings.rows if round_ >= 0 else 100, round_)
        data = [{"question": row["question"]} for row in rows]
        out = workdir / f"batch-{round_}.jsonl"
        machine = machine_cpu()
        wall, cpu = time.perf_counter(), time.process_time()
        summary = run_batch(predict, data, out, poll_interval=0.0, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = machine_cpu()
        if summary.failed or summary.done != len(rows):
            raise RuntimeError(f"batch: {summary.done} rows answered, {summary.failed[:3]}")
        if round_ >= 0:
            used = None if machine is None or after is None else after - machine
            samples.append(Sample(wall, cpu, used))
    return samples


def table(samples: dict[str, list[Sample]], rows: int) -> list[str]:
    """The markdown table of medians."""
    lines = [
        "| mode | rows/s | CPU per row, this process | CPU per row, whole machine |",
        "|---|---:|---:|---:|",
    ]
    for name, runs in samples.items():
        rate = statistics.median(rows / run.wall for run in runs)
        cpu = statistics.median(run.cpu for run in runs) / rows
        machine = [run.machine_cpu for run in runs if run.machine_cpu is not None]
        whole = f"{statistics.median(machine) / rows * 1e6:,.0f} µs" if machine else "n/a"
        lines.append(f"| {name} | {rate:,.0f} | {cpu * 1e6:,.0f} µs | {whole} |")
    return lines


def main() -> None:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (60 rows, 1 round)")
    settings = QUICK if parser.parse_args().quick else FULL
    with loopback() as server, local_ray() as started, tempfile.TemporaryDirectory() as tmp:
        modes: dict[str, Callable[[list[dict[str, str]]], int]] = {}
        for concurrency in ONLINE_CONCURRENCY:
            modes[f"online run_file, c={concurrency}"] = online(server.url, concurrency, Path(tmp))
        for per_worker in RAY_PER_WORKER:
            label = f"Ray, {RAY_WORKERS} actors x {per_worker} (c={RAY_WORKERS * per_worker})"
            modes[label] = on_ray(server.url, per_worker)
        samples = measure(server, modes, settings)
        with batch_server() as url:
            samples["provider batch (run_batch), queue time 0"] = measure_batch(
                url, settings, Path(tmp)
            )
    print(f"## Run modes: {settings.rows:,} rows, median of {settings.rounds} rounds")
    print()
    print("\n".join(table(samples, settings.rows)))
    print()
    print(f"Ray start-up (ray.init, once per process): {started:.1f} s")
    print("every row answered with exactly one request: yes")


if __name__ == "__main__":
    main()
