"""Which async HTTP client holds at high concurrency: httpx, httpx2 and aiohttp, one server.

The loopback server (`_loopback.py --delay 0.05`, in its own process, so its CPU is never
counted here) answers every chat completion after 50 ms, as a model would. For each
client library, N concurrent POSTs of the body structio sends, at concurrency 64 and
256 (that many tasks, each posting one request after another), its pool sized as
structio sizes it (`structio.lm._pool`: no limit on connections, 256 kept alive):

- ``httpx.AsyncClient`` (0.28, over httpcore 1: its pool rescans every connection for
  each queued request, encode/httpcore#1035);
- ``httpx2.AsyncClient`` (pydantic's fork of httpx, over httpcore2; what the openai SDK
  depends on now);
- ``aiohttp.ClientSession`` (its own C-accelerated HTTP parser, a ``TCPConnector``).

Calls per second of wall time and the client's CPU time per call
(``time.process_time``), median of rounds, the libraries interleaved round by round (the
order rotated), each warmed up first (its connections opened at the highest
concurrency). The server counts requests, to prove every POST made exactly one.

Run: python benchmarks/async_clients.py [--quick] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calls import API_KEY, Loopback, messages  # noqa: E402

CONCURRENCY = (64, 256)
KEEP_ALIVE = 256  # structio's pool: max_keepalive_connections (structio.lm._pool)

Post = Callable[[], Awaitable[str]]  # one POST; the answer text


@dataclass(frozen=True)
class Settings:
    """How much to measure."""

    calls: int  # POSTs per round and concurrency
    rounds: int


FULL = Settings(calls=2048, rounds=7)
QUICK = Settings(calls=512, rounds=2)


def _body() -> bytes:
    return json.dumps({"model": "test", "messages": messages()}).encode()


async def make_posters(url: str) -> tuple[dict[str, Post], list[Callable[[], Awaitable[None]]]]:
    """One POST of each library, by label, and the coroutines that close their clients."""
    endpoint = f"{url}/chat/completions"
    body = _body()
    headers = {"authorization": f"Bearer {API_KEY}", "content-type": "application/json"}
    posters: dict[str, Post] = {}
    closers: list[Callable[[], Awaitable[None]]] = []

    import httpx

    for label, module in (("httpx", httpx), ("httpx2", _optional("httpx2"))):
        if module is None:
            continue
        limits = module.Limits(max_connections=None, max_keepalive_connections=KEEP_ALIVE)
        client = module.AsyncClient(limits=limits, timeout=60)

        async def post(client: Any = client) -> str:
            response = await client.post(endpoint, content=body, headers=headers)
            reply = json.loads(await response.aread())
            return str(reply["choices"][0]["message"]["content"])

        version = importlib.metadata.version(label)
        posters[f"{label} {version} AsyncClient"] = post
        closers.append(client.aclose)

    aiohttp = _optional("aiohttp")
    if aiohttp is not None:
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=60)
        session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=60)
        )

        async def apost() -> str:
            async with session.post(endpoint, data=body, headers=headers) as response:
                reply = json.loads(await response.read())
            return str(reply["choices"][0]["message"]["content"])

        posters[f"aiohttp {aiohttp.__version__} ClientSession"] = apost
        closers.append(session.close)
    return posters, closers


def _optional(name: str) -> Any | None:
    try:
        return __import__(name)
    except ImportError:
        return None


async def run_posts(post: Post, calls: int, concurrency: int) -> int:
    """``calls`` POSTs by ``concurrency`` tasks; how many answered "Paris"."""
    remaining = calls
    good = 0

    async def worker() -> None:
        nonlocal remaining, good
        while remaining > 0:
            remaining -= 1
            answer = await post()  # not `good += ... await`: that reads `good` before
            good += "Paris" in answer

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return good


@dataclass
class Result:
    """Medians over rounds at one concurrency."""

    calls_per_second: float
    cpu_per_call: float
    failures: int


async def measure(
    server: Loopback, posters: dict[str, Post], settings: Settings
) -> dict[tuple[str, int], Result]:
    """Each library at each concurrency, interleaved round by round (order rotated)."""
    for name, post in posters.items():  # connections opened, lazy imports done
        before = server.requests()
        calls = 2 * max(CONCURRENCY)
        good = await run_posts(post, calls, max(CONCURRENCY))
        if good != calls or server.requests() - before != calls:
            print(f"warning: {name} did not make one good request per POST", file=sys.stderr)
    rates: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    failures: dict[tuple[str, int], int] = {}
    names = list(posters)
    for round_ in range(settings.rounds):
        shift = round_ % len(names)
        for concurrency in CONCURRENCY:
            for name in names[shift:] + names[:shift]:
                key = (name, concurrency)
                before = server.requests()
                wall, cpu = time.perf_counter(), time.process_time()
                good = await run_posts(posters[name], settings.calls, concurrency)
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
                made = server.requests() - before
                rates.setdefault(key, []).append(settings.calls / wall)
                cpus.setdefault(key, []).append(cpu / settings.calls)
                failures[key] = failures.get(key, 0) + settings.calls - good
                if made != settings.calls:
                    print(f"warning: {name} made {made} requests for {settings.calls} POSTs")
    return {
        key: Result(statistics.median(rates[key]), statistics.median(cpus[key]), failures[key])
        for key in rates
    }


def report(results: dict[tuple[str, int], Result], settings: Settings, delay: float) -> None:
    """The table: calls/s and CPU per call at each concurrency, and the ceiling."""
    names = list(dict.fromkeys(name for name, _ in results))
    head = " | ".join(f"c={c} calls/s | c={c} CPU/call" for c in CONCURRENCY)
    print(
        f"\n## {settings.calls} POSTs per round, server delay {delay * 1e3:g} ms, median of "
        f"{settings.rounds} rounds\n\n| client | {head} | failures |"
        f"\n|---|{'---:|' * (2 * len(CONCURRENCY))}---:|"
    )
    for name in names:
        cells = " | ".join(
            f"{results[name, c].calls_per_second:,.0f} | "
            f"{results[name, c].cpu_per_call * 1e3:.3f} ms"
            for c in CONCURRENCY
        )
        failed = sum(results[name, c].failures for c in CONCURRENCY)
        print(f"| {name} | {cells} | {failed} |")
    if delay > 0:
        ceiling = ", ".join(f"c={c}: {c / delay:,.0f}" for c in CONCURRENCY)
        print(f"\nCeiling set by the delay (concurrency / delay), calls/s: {ceiling}")


async def amain(settings: Settings, delay: float) -> None:
    """Start the server, measure every library, print the table."""
    server = Loopback(delay)
    try:
        print(f"Loopback server: {server.url} (its own process), delay {delay * 1e3:g} ms")
        posters, closers = await make_posters(server.url)
        try:
            results = await measure(server, posters, settings)
        finally:
            for close in closers:
                await close()
        report(results, settings, delay)
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (a smoke run)")
    parser.add_argument("--delay", type=float, default=0.05, help="the server's delay, seconds")
    args = parser.parse_args()
    started = time.perf_counter()
    asyncio.run(amain(QUICK if args.quick else FULL, args.delay))
    print(f"\nThe whole run took {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
