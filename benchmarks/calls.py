"""What a real model call costs: structio, DSPy 3.4.1 and the raw clients, against one server.

One loopback OpenAI-compatible server (`_loopback.py`, in its own process, so its CPU is
never counted here and it never holds this process's GIL) answers every request with the
same canned ChatAdapter answer for ``question -> answer``. Against it, in this one run:

- per call on each direct transport (OpenAI chat completions, the Responses API,
  Anthropic Messages, Gemini; the one server speaks all four): structio's ``LM`` call and
  ``Predict`` against a raw ``httpx`` POST of the very request structio sends (path,
  headers and body captured once from the server), and DSPy's ``Predict`` for
  ``anthropic/`` and ``gemini/``; the server counts requests per API;
- per call: client CPU time (``time.process_time``) per call of a raw ``httpx`` POST of
  the messages structio sends, the openai SDK, raw ``litellm.completion``, DSPy's
  ``Predict`` (its default engine, and ``engine="litellm"``), and structio's ``Predict``
  and its ``LM`` call alone, on each transport. Blocks of calls, the systems
  interleaved round by round (the order rotated), medians over rounds; each warmed up
  first. Caches are off everywhere, and the server counts requests to prove it: every
  call must make exactly one request;
- throughput: ``Predict.batch`` of distinct questions at concurrency 8 and 64, calls per
  second of wall time, median of rounds, interleaved (a thread pool of raw httpx POSTs,
  for reference);
- async throughput, against a second loopback server that answers after 50 ms (a
  model's latency): structio's ``Predict.abatch`` and DSPy's ``Predict.acall`` gathered
  (as many tasks as the concurrency, each calling one input after another; DSPy's LM set
  with ``dspy.configure``) at concurrency 64 and 256, calls per second of wall time and
  CPU per call, median of rounds, interleaved (raw ``aiohttp`` POSTs, for reference);
- cold start: a fresh interpreter to the first result (wall time from spawn, and the
  child's own CPU time), median of runs, for ``openai/``, ``anthropic/`` and ``gemini/``
  models (DSPy with its default engine and with ``engine="litellm"``), each run counted
  as one request; and whether ``import structio`` loads litellm or httpx.

``--async-cache`` measures only the async throughput, with each library's response cache
on (memory and disk, empty temporary directories; every call a miss).

Then the issue's targets, each marked met or missed (informational: the exit code is 0).
Systems that are not installed (DSPy, the openai SDK) are left out.

Run: python benchmarks/calls.py [--quick | --only-async | --async-cache]
(after pip install -r benchmarks/requirements.txt)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline, before any import

import structio as sio

HERE = Path(__file__).resolve().parent
SPEC = "question -> answer"
QUESTION = "What is the capital of France?"
MODEL = "openai/test"
API_KEY = "k"


@dataclass(frozen=True)
class Settings:
    """How much to measure."""

    rounds: int  # per-call rounds
    block_seconds: float  # CPU time one block of calls aims at
    batch_size: int  # inputs per Predict.batch
    batch_rounds: int
    cold_runs: int
    cold_warmup: bool
    async_calls: int  # inputs per async batch
    async_rounds: int


FULL = Settings(
    rounds=15,
    block_seconds=0.2,
    batch_size=384,
    batch_rounds=7,
    cold_runs=9,
    cold_warmup=True,
    async_calls=2048,
    async_rounds=5,
)
QUICK = Settings(
    rounds=3,
    block_seconds=0.01,
    batch_size=32,
    batch_rounds=1,
    cold_runs=1,
    cold_warmup=False,
    async_calls=512,
    async_rounds=1,
)
CONCURRENCY = (8, 64)
ASYNC_CONCURRENCY = (64, 256)
ASYNC_DELAY = 0.05  # seconds the async benchmark's server waits before each answer


# -- the server ---------------------------------------------------------------------------


class Loopback:
    """The loopback server in a child process: its ``url`` and its request count.

    ``delay``: seconds each chat completion waits before it is written (a model's latency).
    """

    def __init__(self, delay: float = 0.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "_loopback.py"), "--delay", str(delay)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError("the loopback server did not start")
        self.root = self.url.rsplit("/v1", 1)[0]  # the server's address, without a version

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.root + path, timeout=10) as response:
            return json.load(response)

    def requests(self) -> int:
        """Model requests served so far (every API)."""
        return int(self._get("/_stats")["requests"])

    def by_api(self) -> dict[str, int]:
        """Model requests served so far, by API (``chat``, ``responses``, ``messages``...)."""
        return dict(self._get("/_stats")["by_api"])

    def last(self) -> dict[str, Any]:
        """The last model request: its ``path``, ``headers`` and ``body`` (text)."""
        return dict(self._get("/_last"))

    def close(self) -> None:
        """Stop the server (closing its stdin ends it) and wait for it."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def loopback(delay: float = 0.0) -> Iterator[Loopback]:
    """A running `Loopback` (answering after ``delay`` seconds), stopped on exit."""
    server = Loopback(delay)
    try:
        yield server
    finally:
        server.close()


# -- the systems --------------------------------------------------------------------------


TRANSPORTS = ("direct", "litellm")


def structio_lm(url: str, transport: str) -> sio.LM:
    """structio's LM for the loopback server, cache off, on ``transport``."""
    extra: dict[str, Any] = {"transport": transport}
    return sio.LM(MODEL, api_base=url, api_key=API_KEY, cache=False, **extra)


def import_dspy() -> Any | None:
    """DSPy, quiet and with its caches off; None if it is not installed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import dspy
    except ImportError:
        return None
    logging.getLogger("dspy").setLevel(logging.CRITICAL)
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    return dspy


def import_litellm() -> Any | None:
    """litellm, quiet, its cache off; None if it is not installed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import litellm
    except ImportError:
        return None
    litellm.suppress_debug_info = True
    litellm.cache = None
    if hasattr(litellm, "telemetry"):
        litellm.telemetry = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return litellm


def dspy_lm(dspy: Any, url: str, engine: str | None = None) -> Any:
    """DSPy's LM for the loopback server, cache off; its default engine unless named."""
    extra = {"engine": engine} if engine else {}
    return dspy.LM(MODEL, api_base=url, api_key=API_KEY, cache=False, **extra)


def dspy_engine(dspy: Any, url: str) -> str:
    """The engine DSPy's default (``engine="auto"``) picks for this LM."""
    return dspy_engine_of(dspy_lm(dspy, url))


def dspy_engine_of(lm: Any) -> str:
    """The engine DSPy's default (``engine="auto"``) picks for ``lm``."""
    try:
        from dspy.clients.backend_selection import select_backend

        return "lm15" if select_backend(lm).native else "litellm"
    except Exception:  # a private API; only the label depends on it
        return "auto"


def dspy_predict(dspy: Any, lm: Any) -> Any:
    """``dspy.Predict(SPEC)`` bound to ``lm``."""
    predict = dspy.Predict(SPEC)
    predict.set_lm(lm)
    return predict


def messages() -> list[dict[str, Any]]:
    """The messages structio's ChatAdapter sends for QUESTION."""
    return [dict(m) for m in sio.ChatAdapter().format(SPEC, [], {"question": QUESTION})]


def per_call_systems(
    url: str, dspy: Any | None, litellm: Any | None
) -> dict[str, Callable[[], str]]:
    """One call of each system, by label; each returns the answer text it got."""
    import httpx

    chat = messages()
    body = {"model": "test", "messages": chat}
    systems: dict[str, Callable[[], str]] = {}

    client = httpx.Client(timeout=30)
    auth = {"authorization": f"Bearer {API_KEY}"}
    endpoint = f"{url}/chat/completions"

    def raw_httpx() -> str:
        reply = client.post(endpoint, json=body, headers=auth).json()
        return str(reply["choices"][0]["message"]["content"])

    systems["raw httpx POST"] = raw_httpx

    try:
        from openai import OpenAI
    except ImportError:
        pass
    else:
        openai_client = OpenAI(base_url=url, api_key=API_KEY)

        def openai_sdk() -> str:
            reply = openai_client.chat.completions.create(model="test", messages=chat)  # type: ignore[arg-type]
            return str(reply.choices[0].message.content)

        systems["openai SDK"] = openai_sdk

    if litellm is not None:

        def raw_litellm() -> str:
            reply = litellm.completion(model=MODEL, api_base=url, api_key=API_KEY, messages=chat)
            return str(reply.choices[0].message.content)

        systems["raw litellm.completion"] = raw_litellm

        def raw_litellm_same() -> str:
            # The same request as structio's litellm path: its timeout, no client retries
            # (structio retries). Both settings cost litellm CPU of their own (~3% each).
            reply = litellm.completion(
                model=MODEL,
                api_base=url,
                api_key=API_KEY,
                messages=chat,
                timeout=120.0,
                max_retries=0,
            )
            return str(reply.choices[0].message.content)

        systems["raw litellm.completion, timeout=120, max_retries=0"] = raw_litellm_same

    if dspy is not None:
        engine = dspy_engine(dspy, url)
        default = dspy_predict(dspy, dspy_lm(dspy, url))
        systems[f"DSPy 3.4.1 Predict (default engine: {engine})"] = lambda: str(
            default(question=QUESTION).answer
        )
        if engine != "litellm" and "engine" in inspect.signature(dspy.LM.__init__).parameters:
            via_litellm = dspy_predict(dspy, dspy_lm(dspy, url, "litellm"))
            systems["DSPy 3.4.1 Predict (engine='litellm')"] = lambda: str(
                via_litellm(question=QUESTION).answer
            )

    for transport in TRANSPORTS:
        label = transport
        predict_call, lm_call = structio_calls(structio_lm(url, transport), chat)
        systems[f"structio Predict ({label})"] = predict_call
        systems[f"structio LM call ({label})"] = lm_call
    return systems


def structio_calls(
    lm: sio.LM, chat: list[dict[str, Any]]
) -> tuple[Callable[[], str], Callable[[], str]]:
    """A ``Predict`` call on ``lm``, and the bare ``lm`` call of the same messages."""
    predict = sio.Predict(SPEC, lm=lm)

    def predict_call() -> str:
        return str(predict(question=QUESTION).answer)

    def lm_call() -> str:
        return lm(chat).text

    return predict_call, lm_call


@dataclass(frozen=True)
class Provider:
    """One direct transport, as the per-call and cold-start measurements call it."""

    name: str  # the transport, as the tables name it
    model: str
    api: str  # the loopback server's name for the API it calls
    extra: tuple[tuple[str, str], ...] = ()  # further LM arguments
    # Given the server's root as ``api_base`` (as litellm and DSPy take Anthropic's and
    # Gemini's), else its ``/v1`` (an OpenAI-compatible base).
    root: bool = False

    def base(self, server: Loopback) -> str:
        """The ``api_base`` this provider's LMs get."""
        return server.root if self.root else server.url

    def lm(self, server: Loopback) -> sio.LM:
        """structio's LM for it, cache off, on its default transport."""
        return sio.LM(
            self.model, api_base=self.base(server), api_key=API_KEY, cache=False, **dict(self.extra)
        )


PROVIDERS = (
    Provider("chat", MODEL, "chat"),
    Provider("responses", MODEL, "responses", (("api", "responses"),)),
    Provider("anthropic", "anthropic/claude-sonnet-4-5", "messages", root=True),
    Provider("gemini", "gemini/gemini-2.5-flash", "gemini", root=True),
)

# Headers the client sets for itself: not replayed by the raw POST.
_OWN_HEADERS = frozenset(
    {"host", "content-length", "connection", "accept", "accept-encoding", "user-agent"}
)


def answer_text(api: str, reply: dict[str, Any]) -> str:
    """The answer's text in a response of ``api`` (the loopback's names)."""
    if api == "chat":
        return str(reply["choices"][0]["message"]["content"])
    if api == "responses":
        return str(reply["output"][0]["content"][0]["text"])
    if api == "messages":
        return str(reply["content"][0]["text"])
    return str(reply["candidates"][0]["content"]["parts"][0]["text"])


@dataclass(frozen=True)
class ProviderRows:
    """The labels of one provider's systems in the per-call results, and what it sent."""

    raw: str
    lm: str
    predict: str
    dspy: str | None
    path: str  # the path structio's request went to
    body_bytes: int


def provider_systems(
    server: Loopback, dspy: Any | None
) -> tuple[dict[str, Callable[[], str]], dict[str, ProviderRows]]:
    """Per provider: a raw httpx POST of the very request structio sends, and DSPy's Predict.

    structio's own LM and Predict calls for each provider that ``per_call_systems`` does
    not already measure (chat's are its "(direct)" rows). The request is captured once from
    the server (path, headers, body) and replayed as is.
    """
    import httpx

    client = httpx.Client(timeout=30)
    chat = messages()
    systems: dict[str, Callable[[], str]] = {}
    rows: dict[str, ProviderRows] = {}
    for provider in PROVIDERS:
        lm = provider.lm(server)
        lm(chat)  # the request to replay
        seen = server.last()
        endpoint = server.root + seen["path"]
        body = seen["body"].encode()
        headers = {k: v for k, v in seen["headers"].items() if k not in _OWN_HEADERS}

        def raw(
            endpoint: str = endpoint,
            body: bytes = body,
            headers: Any = headers,
            api: str = provider.api,
        ) -> str:
            reply = client.post(endpoint, content=body, headers=headers).json()
            return answer_text(api, reply)

        raw_label = f"raw httpx POST of structio's request ({provider.name})"
        systems[raw_label] = raw
        if provider.name == "chat":
            lm_label, predict_label = "structio LM call (direct)", "structio Predict (direct)"
        else:
            lm_label = f"structio LM call ({provider.name})"
            predict_label = f"structio Predict ({provider.name})"
            systems[predict_label], systems[lm_label] = structio_calls(lm, chat)
        dspy_label = None
        if dspy is not None and provider.name == "chat":  # per_call_systems measures it
            dspy_label = f"DSPy 3.4.1 Predict (default engine: {dspy_engine(dspy, server.url)})"
        elif dspy is not None and provider.root:
            dspy_lm_ = dspy.LM(
                provider.model, api_base=provider.base(server), api_key=API_KEY, cache=False
            )
            program = dspy_predict(dspy, dspy_lm_)
            dspy_label = (
                f"DSPy 3.4.1 Predict, {provider.model.split('/')[0]}/ "
                f"(default engine: {dspy_engine_of(dspy_lm_)})"
            )
            systems[dspy_label] = lambda program=program: str(program(question=QUESTION).answer)
        rows[provider.name] = ProviderRows(
            raw_label, lm_label, predict_label, dspy_label, seen["path"], len(body)
        )
    return systems, rows


# -- measuring ----------------------------------------------------------------------------


@dataclass
class PerCall:
    """Medians over rounds, in seconds per call."""

    cpu: float
    wall: float
    calls: int  # per block
    requests_per_call: float
    apis: str = ""  # the APIs its requests called (the loopback's names)


def measure_per_call(
    server: Loopback, systems: dict[str, Callable[[], str]], settings: Settings
) -> dict[str, PerCall]:
    """CPU and wall time per call of each system, interleaved round by round."""
    blocks: dict[str, int] = {}
    requests: dict[str, float] = {}
    apis: dict[str, str] = {}
    for name, call in systems.items():
        for _ in range(5):  # connections, lazy imports, first-use caches
            answer = call()
        if "Paris" not in answer:
            raise RuntimeError(f"{name} answered {answer!r}")
        by_api = server.by_api()
        before, start = server.requests(), time.process_time()
        warm = 10
        for _ in range(warm):
            call()
        cpu = (time.process_time() - start) / warm
        requests[name] = (server.requests() - before) / warm
        after = server.by_api()
        apis[name] = ", ".join(k for k, v in after.items() if v != by_api.get(k, 0))
        blocks[name] = max(5, min(500, round(settings.block_seconds / max(cpu, 1e-6))))
    cpu_samples: dict[str, list[float]] = {name: [] for name in systems}
    wall_samples: dict[str, list[float]] = {name: [] for name in systems}
    names = list(systems)
    for round_ in range(settings.rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            call, n = systems[name], blocks[name]
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                call()
            cpu_samples[name].append((time.process_time() - cpu) / n)
            wall_samples[name].append((time.perf_counter() - wall) / n)
    return {
        name: PerCall(
            statistics.median(cpu_samples[name]),
            statistics.median(wall_samples[name]),
            blocks[name],
            requests[name],
            apis[name],
        )
        for name in names
    }


BatchRun = Callable[[list[str], int], int]  # (questions, concurrency) -> answers "Paris"


def batch_systems(url: str, dspy: Any | None) -> dict[str, BatchRun]:
    """``Predict.batch`` of each library (and a thread pool of raw httpx POSTs), by label."""
    import httpx

    systems: dict[str, BatchRun] = {}
    body = {"model": "test", "messages": messages()}
    limits = httpx.Limits(max_connections=128, max_keepalive_connections=128)
    client = httpx.Client(timeout=60, limits=limits)
    endpoint = f"{url}/chat/completions"

    def raw_pool(questions: list[str], concurrency: int) -> int:
        from concurrent.futures import ThreadPoolExecutor

        def one(_question: str) -> str:
            reply = client.post(endpoint, json=body).json()
            return str(reply["choices"][0]["message"]["content"])

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return sum("Paris" in text for text in pool.map(one, questions))

    systems["raw httpx POST, thread pool"] = raw_pool

    if dspy is not None:
        engine = dspy_engine(dspy, url)
        program = dspy_predict(dspy, dspy_lm(dspy, url))

        def dspy_batch(questions: list[str], concurrency: int) -> int:
            examples = [dspy.Example(question=q).with_inputs("question") for q in questions]
            results = program.batch(examples, num_threads=concurrency, disable_progress_bar=True)
            return sum(getattr(r, "answer", None) == "Paris" for r in results)

        systems[f"DSPy 3.4.1 Predict.batch (default engine: {engine})"] = dspy_batch

    for transport in TRANSPORTS:
        predict = sio.Predict(SPEC, lm=structio_lm(url, transport))

        def structio_batch(questions: list[str], concurrency: int, p: Any = predict) -> int:
            results = p.batch(
                [{"question": q} for q in questions], max_concurrency=concurrency, progress=False
            )
            return sum(getattr(r, "answer", None) == "Paris" for r in results)

        systems[f"structio Predict.batch ({transport})"] = structio_batch
    return systems


@dataclass
class Throughput:
    """Medians over rounds at one concurrency."""

    calls_per_second: float
    cpu_per_call: float
    failures: int  # over all rounds


def measure_batches(
    server: Loopback, systems: dict[str, BatchRun], settings: Settings
) -> dict[tuple[str, int], Throughput]:
    """Calls per second of each system at each concurrency, interleaved round by round."""
    size = settings.batch_size
    for name, run in systems.items():
        for concurrency in CONCURRENCY:  # opens the connections a round will reuse
            warm = [f"Warm-up {i}: what is {i} plus {i}?" for i in range(2 * concurrency)]
            before = server.requests()
            if run(warm, concurrency) != len(warm) or server.requests() - before != len(warm):
                print(f"warning: {name} did not make one good request per input", file=sys.stderr)
    rates: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    failures: dict[tuple[str, int], int] = {}
    names = list(systems)
    for round_ in range(settings.batch_rounds):
        shift = round_ % len(names)
        for concurrency in CONCURRENCY:
            questions = [
                f"Question {round_}-{concurrency}-{i}: what is {i} plus {i}?" for i in range(size)
            ]
            for name in names[shift:] + names[:shift]:
                key = (name, concurrency)
                wall, cpu = time.perf_counter(), time.process_time()
                good = systems[name](questions, concurrency)
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
                rates.setdefault(key, []).append(size / wall)
                cpus.setdefault(key, []).append(cpu / size)
                failures[key] = failures.get(key, 0) + size - good
    return {
        key: Throughput(statistics.median(rates[key]), statistics.median(cpus[key]), failures[key])
        for key in rates
    }


AsyncRun = Callable[[list[str], int], Awaitable[int]]  # (questions, concurrency) -> "Paris"s


async def _workers(call: Callable[[str], Awaitable[str]], questions: list[str], n: int) -> int:
    """``call`` on every question by ``n`` tasks, each taking the next; answers "Paris"."""
    pending = iter(questions)
    good = 0

    async def worker() -> None:
        nonlocal good
        for question in pending:
            answer = await call(question)  # not `good += ... await`: it would read `good` first
            good += answer == "Paris"

    await asyncio.gather(*(worker() for _ in range(n)))
    return good


def async_systems(
    url: str, dspy: Any | None, cache_dir: Path | None = None
) -> tuple[dict[str, AsyncRun], Callable[[], Awaitable[None]]]:
    """Each library's async calls (and raw aiohttp POSTs, for reference), by label.

    And what closes the raw POSTs' session, in the loop that ran them. With ``cache_dir``,
    each library's response cache is on (memory and disk, in a directory of its own under
    ``cache_dir``, empty at the start): every question is new, so each call is a miss that
    is then stored.
    """
    systems: dict[str, AsyncRun] = {}
    body = json.dumps({"model": "test", "messages": messages()}).encode()
    endpoint = f"{url}/chat/completions"
    headers = {"authorization": f"Bearer {API_KEY}", "content-type": "application/json"}
    sessions: dict[asyncio.AbstractEventLoop, Any] = {}

    async def raw_aiohttp(questions: list[str], concurrency: int) -> int:
        import aiohttp

        loop = asyncio.get_running_loop()
        if loop not in sessions:
            connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
            sessions[loop] = aiohttp.ClientSession(connector=connector)
        session = sessions[loop]

        async def one(_question: str) -> str:
            async with session.post(endpoint, data=body, headers=headers) as response:
                reply = json.loads(await response.read())
            return "Paris" if "Paris" in reply["choices"][0]["message"]["content"] else ""

        return await _workers(one, questions, concurrency)

    try:
        import aiohttp  # noqa: F401
    except ImportError:
        pass
    else:
        systems["raw aiohttp POSTs"] = raw_aiohttp

    cached = " (cache on)" if cache_dir is not None else ""
    if dspy is not None:
        engine = dspy_engine(dspy, url)
        if cache_dir is None:
            dspy.configure(lm=dspy_lm(dspy, url))
        else:
            dspy.configure_cache(
                enable_disk_cache=True,
                enable_memory_cache=True,
                disk_cache_dir=str(cache_dir / "dspy"),
            )
            dspy.configure(lm=dspy.LM(MODEL, api_base=url, api_key=API_KEY, cache=True))
        program = dspy.Predict(SPEC)

        async def dspy_async(questions: list[str], concurrency: int) -> int:
            async def one(question: str) -> str:
                return str((await program.acall(question=question)).answer)

            return await _workers(one, questions, concurrency)

        systems[f"DSPy 3.4.1 Predict.acall gathered (default engine: {engine}){cached}"] = (
            dspy_async
        )

    if cache_dir is None:
        lm = structio_lm(url, "direct")
    else:
        cache = sio.ResponseCache(cache_dir / "structio")
        lm = sio.LM(MODEL, api_base=url, api_key=API_KEY, cache=cache, transport="direct")
    predict = sio.Predict(SPEC, lm=lm)

    async def structio_abatch(questions: list[str], concurrency: int) -> int:
        results = await predict.abatch(
            [{"question": q} for q in questions], max_concurrency=concurrency, progress=False
        )
        return sum(getattr(r, "answer", None) == "Paris" for r in results)

    systems[f"structio Predict.abatch (direct){cached}"] = structio_abatch

    async def close() -> None:
        session = sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()

    return systems, close


def measure_async(
    server: Loopback,
    made: tuple[dict[str, AsyncRun], Callable[[], Awaitable[None]]],
    settings: Settings,
) -> dict[tuple[str, int], Throughput]:
    """Async calls per second of each system at each concurrency, interleaved round by round.

    One event loop for the whole measurement (each library keeps its connections in it).
    """

    systems, close = made

    async def run() -> dict[tuple[str, int], Throughput]:
        try:
            return await measure(systems)
        finally:
            await close()

    async def measure(systems: dict[str, AsyncRun]) -> dict[tuple[str, int], Throughput]:
        top = max(ASYNC_CONCURRENCY)
        for name, call in systems.items():  # connections opened, lazy imports done
            warm = [f"Warm-up {i}: what is {i} plus {i}?" for i in range(2 * top)]
            before = server.requests()
            if await call(warm, top) != len(warm) or server.requests() - before != len(warm):
                print(f"warning: {name} did not make one good request per input", file=sys.stderr)
        rates: dict[tuple[str, int], list[float]] = {}
        cpus: dict[tuple[str, int], list[float]] = {}
        failures: dict[tuple[str, int], int] = {}
        size = settings.async_calls
        names = list(systems)
        for round_ in range(settings.async_rounds):
            shift = round_ % len(names)
            for concurrency in ASYNC_CONCURRENCY:
                questions = [
                    f"Question {round_}-{concurrency}-{i}: what is {i} plus {i}?"
                    for i in range(size)
                ]
                for name in names[shift:] + names[:shift]:
                    key = (name, concurrency)
                    before = server.requests()
                    wall, cpu = time.perf_counter(), time.process_time()
                    good = await systems[name](questions, concurrency)
                    cpu = time.process_time() - cpu
                    wall = time.perf_counter() - wall
                    made = server.requests() - before
                    rates.setdefault(key, []).append(size / wall)
                    cpus.setdefault(key, []).append(cpu / size)
                    failures[key] = failures.get(key, 0) + size - good + abs(made - size)
        return {
            key: Throughput(
                statistics.median(rates[key]), statistics.median(cpus[key]), failures[key]
            )
            for key in rates
        }

    return asyncio.run(run())


def report_async(
    results: dict[tuple[str, int], Throughput],
    settings: Settings,
    targets: Targets,
    cache_dir: Path | None = None,
) -> None:
    """The async throughput table and its targets (with ``cache_dir``: caches on)."""
    caches = "caches on (every call a miss)" if cache_dir is not None else "caches off"
    names = list(dict.fromkeys(name for name, _ in results))
    head = " | ".join(f"c={c} calls/s | c={c} CPU/call" for c in ASYNC_CONCURRENCY)
    print(
        f"\n## Async: {settings.async_calls} distinct questions, server answering in "
        f"{ASYNC_DELAY * 1e3:g} ms, calls per second of wall time, median of "
        f"{settings.async_rounds} rounds\n\n| system | {head} | failures |"
        f"\n|---|{'---:|' * (2 * len(ASYNC_CONCURRENCY))}---:|"
    )
    for name in names:
        cells = " | ".join(
            f"{results[name, c].calls_per_second:,.0f} | {_us(results[name, c].cpu_per_call)}"
            for c in ASYNC_CONCURRENCY
        )
        failed = sum(results[name, c].failures for c in ASYNC_CONCURRENCY)
        print(f"| {name} | {cells} | {failed} |")
    ceiling = ", ".join(f"c={c}: {c / ASYNC_DELAY:,.0f}" for c in ASYNC_CONCURRENCY)
    print(f"\nCeiling set by the server's delay (concurrency / delay), calls/s: {ceiling}")
    print(
        "(failures: answers that were not the expected one, and requests made beyond or "
        "short of one per call)"
    )
    structio = _find(names, "structio")
    dspy = _find(names, "DSPy")
    for c in ASYNC_CONCURRENCY:
        ratio = (
            _ratio(results[structio, c].calls_per_second, results[dspy, c].calls_per_second)
            if structio and dspy
            else None
        )
        if ratio is not None:
            print(f"structio / DSPy async at concurrency {c}: {ratio:.2f}x calls per second")
        targets.check(
            f"async at concurrency {c} (Predict.abatch, direct path, {caches}), "
            ">= 2x DSPy's calls/s",
            ratio,
            2.0,
            at_most=False,
        )
    targets.flag(
        f"async, {caches}: every call made exactly one request",
        all(results[key].failures == 0 for key in results),
        ", ".join(f"{n} c={c}: {r.failures}" for (n, c), r in results.items() if r.failures)
        or "all one request per call, every answer right",
    )


_CHILD_END = (
    "import sys as _s, time as _t\n"
    "_w, _c = _t.monotonic(), _t.process_time()\n"
    "print(repr(_w), repr(_c), 'litellm' in _s.modules, 'httpx' in _s.modules, answer)\n"
)


def cold_scripts(url: str, dspy_installed: bool, root: str | None = None) -> dict[str, str]:
    """Code for a fresh interpreter that makes one call and prints its clocks, by label.

    With the server's ``root``, also ``anthropic/`` and ``gemini/`` models (structio's
    direct transports; DSPy's default engine and its ``engine="litellm"``).
    """
    question = repr(QUESTION)
    scripts = {"bare interpreter (no call)": "answer = 'Paris'\n"}
    for transport in TRANSPORTS:
        extra = f", transport={transport!r}"
        scripts[f"structio ({transport})"] = (
            "import structio as sio\n"
            f"lm = sio.LM({MODEL!r}, api_base={url!r}, api_key={API_KEY!r}, cache=False{extra})\n"
            f"answer = sio.Predict({SPEC!r}, lm=lm)(question={question}).answer\n"
        )
    if dspy_installed:
        scripts["DSPy 3.4.1 (default engine)"] = (
            "import dspy\n"
            f"dspy.configure(lm=dspy.LM({MODEL!r}, api_base={url!r}, api_key={API_KEY!r}, "
            "cache=False))\n"
            f"answer = dspy.Predict({SPEC!r})(question={question}).answer\n"
        )
    for provider in PROVIDERS if root is not None else ():
        if not provider.root:
            continue
        model, prefix = provider.model, provider.model.split("/")[0] + "/"
        scripts[f"structio, {prefix} (direct)"] = (
            "import structio as sio\n"
            f"lm = sio.LM({model!r}, api_base={root!r}, api_key={API_KEY!r}, cache=False)\n"
            f"answer = sio.Predict({SPEC!r}, lm=lm)(question={question}).answer\n"
        )
        if dspy_installed:
            for engine, extra in (
                ("default engine", ""),
                ("engine='litellm'", ", engine='litellm'"),
            ):
                scripts[f"DSPy 3.4.1, {prefix} ({engine})"] = (
                    "import dspy\n"
                    f"dspy.configure(lm=dspy.LM({model!r}, api_base={root!r}, "
                    f"api_key={API_KEY!r}, cache=False{extra}))\n"
                    f"answer = dspy.Predict({SPEC!r})(question={question}).answer\n"
                )
    return {name: code + _CHILD_END for name, code in scripts.items()}


@dataclass
class Cold:
    """Medians over runs, in seconds, and what the child had imported at its result."""

    wall: float
    cpu: float
    litellm: bool
    httpx: bool
    requests: tuple[int, ...] = ()  # the requests each run made (when counted)


def child_env() -> dict[str, str]:
    """This environment, offline for litellm, with bytecode written and read as installed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def run_child(code: str) -> tuple[float, float, bool, bool]:
    """Wall seconds from spawn to result, the child's CPU seconds, litellm and httpx loaded."""
    start = time.monotonic()  # CLOCK_MONOTONIC: the same clock in the child, on Linux
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=120
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"the child failed:\n{done.stderr[-2000:]}")
    wall, cpu, litellm, httpx_, answer = done.stdout.strip().splitlines()[-1].split(" ", 4)
    if answer != "Paris":
        raise RuntimeError(f"the child answered {answer!r}")
    return float(wall) - start, float(cpu), litellm == "True", httpx_ == "True"


def measure_cold(
    scripts: dict[str, str], settings: Settings, server: Loopback | None = None
) -> dict[str, Cold]:
    """Fresh interpreter to first result, interleaved run by run, medians.

    With the ``server``, the requests each run made are counted.
    """
    if settings.cold_warmup:
        for code in scripts.values():  # bytecode written once, read after, as installed
            run_child(code)
    samples: dict[str, list[tuple[float, float, bool, bool]]] = {name: [] for name in scripts}
    made: dict[str, list[int]] = {name: [] for name in scripts}
    names = list(scripts)
    for run in range(settings.cold_runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            before = server.requests() if server is not None else 0
            samples[name].append(run_child(scripts[name]))
            if server is not None:
                made[name].append(server.requests() - before)
    return {
        name: Cold(
            statistics.median(s[0] for s in runs),
            statistics.median(s[1] for s in runs),
            runs[-1][2],
            runs[-1][3],
            tuple(made[name]),
        )
        for name, runs in samples.items()
    }


def import_check() -> tuple[bool, bool]:
    """Whether ``import structio`` in a fresh interpreter loads litellm, and httpx."""
    code = "import sys, structio; print('litellm' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env()
    ).stdout.split()
    return out[0] == "True", out[1] == "True"


# -- reporting ----------------------------------------------------------------------------


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms"


def _group(name: str) -> str:
    """Which provider a cold-start row calls: ``anthropic/``, ``gemini/`` or "" (OpenAI)."""
    return next((g for g in ("anthropic/", "gemini/") if g in name), "")


def _find(names: Any, *parts: str) -> str | None:
    """The first name holding every one of ``parts``."""
    return next((n for n in names if all(p in n for p in parts)), None)


class Targets:
    """The issue's targets, each printed as met, missed or not measured."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def check(self, what: str, value: float | None, limit: float, *, at_most: bool) -> None:
        """One ratio target: ``value`` at most (or at least) ``limit``; None: not measured."""
        if value is None:
            self.lines.append(f"- [n/a]  {what}: not measured (a system is missing)")
            return
        met = value <= limit if at_most else value >= limit
        mark = "met" if met else "MISSED"
        self.lines.append(f"- [{mark}] {what}: {value:.2f}x")

    def flag(self, what: str, met: bool, detail: str) -> None:
        """One yes/no target."""
        self.lines.append(f"- [{'met' if met else 'MISSED'}] {what}: {detail}")

    def print(self) -> None:
        """All of them, under a heading."""
        print("\nTargets (informational; the exit code does not depend on them):")
        for line in self.lines:
            print(line)


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def report_per_call(results: dict[str, PerCall], settings: Settings, targets: Targets) -> None:
    """The per-call table and its targets."""
    print(
        f"## Per call: CPU time of the calling process, median of {settings.rounds} rounds\n"
        "\n| system | CPU / call | wall / call | CPU / raw httpx | calls / block "
        "| requests / call |\n|---|---:|---:|---:|---:|---:|"
    )
    raw = results["raw httpx POST"].cpu
    for name, r in results.items():
        print(
            f"| {name} | {_us(r.cpu)} | {_us(r.wall)} | {r.cpu / raw:.2f}x | {r.calls} "
            f"| {r.requests_per_call:g} |"
        )
    cpu = {name: r.cpu for name, r in results.items()}
    direct = _find(cpu, "structio Predict", "(direct)") or _find(cpu, "structio Predict")
    via_litellm = _find(cpu, "structio Predict", "(litellm)") or _find(
        cpu, "structio Predict", "default LM"
    )
    dspy = _find(cpu, "DSPy", "default engine")
    litellm = _find(cpu, "raw litellm", "max_retries=0") or _find(cpu, "raw litellm")
    dspy_ratio = _ratio(cpu.get(dspy or ""), cpu.get(direct or ""))
    if dspy_ratio is not None:
        print(f"\nDSPy (default engine) / structio Predict: {dspy_ratio:.2f}x CPU per call")
    targets.check(
        "Predict call, direct path, CPU <= 1.5x a raw httpx POST",
        _ratio(cpu.get(direct or ""), raw),
        1.5,
        at_most=True,
    )
    targets.check(
        "Predict call, direct path, >= 3x cheaper than DSPy 3.4.1's default engine",
        dspy_ratio,
        3.0,
        at_most=False,
    )
    targets.check(
        "Predict call, litellm path, CPU <= raw litellm.completion (same settings) + 5%",
        _ratio(cpu.get(via_litellm or ""), cpu.get(litellm or "")),
        1.05,
        at_most=True,
    )
    requests = {name: r.requests_per_call for name, r in results.items()}
    targets.flag(
        "caches off: every call made exactly one request",
        all(v == 1 for v in requests.values()),
        ", ".join(f"{k}: {v:g}" for k, v in requests.items() if v != 1) or "all 1",
    )


def report_providers(
    results: dict[str, PerCall], rows: dict[str, ProviderRows], targets: Targets
) -> None:
    """Per direct transport: structio's CPU against a raw POST of its own request."""
    print(
        "\n## Per call on each direct transport: CPU against a raw httpx POST of the very "
        "request structio sends (captured from the server), same run\n"
        "\n| transport | path | body | raw POST | structio LM call | LM / raw "
        "| structio Predict | Predict / raw | DSPy Predict (default engine) | DSPy / Predict "
        "| APIs called |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    for name, row in rows.items():
        raw, lm, predict = results[row.raw], results[row.lm], results[row.predict]
        dspy = results[row.dspy] if row.dspy else None
        dspy_cells = f"{_us(dspy.cpu)} | {dspy.cpu / predict.cpu:.2f}x" if dspy else "— | —"
        called = {results[label].apis for label in (row.raw, row.lm, row.predict)}
        if dspy is not None:
            called.add(dspy.apis)
        print(
            f"| {name} | `{row.path}` | {row.body_bytes} B | {_us(raw.cpu)} | {_us(lm.cpu)} "
            f"| {lm.cpu / raw.cpu:.2f}x | {_us(predict.cpu)} | {predict.cpu / raw.cpu:.2f}x "
            f"| {dspy_cells} | {', '.join(sorted(called))} |"
        )
    for name, row in rows.items():
        raw = results[row.raw].cpu
        targets.check(
            f"LM call on the {name} transport, CPU <= 1.5x a raw httpx POST of its request",
            _ratio(results[row.lm].cpu, raw),
            1.5,
            at_most=True,
        )
        targets.check(
            f"Predict call on the {name} transport, CPU <= 1.5x a raw httpx POST of its request",
            _ratio(results[row.predict].cpu, raw),
            1.5,
            at_most=True,
        )
    wrong = [
        f"{label}: {results[label].apis or 'none'}"
        for name, row in rows.items()
        for label in (row.raw, row.lm, row.predict, row.dspy)
        if label and results[label].apis != next(p.api for p in PROVIDERS if p.name == name)
    ]
    targets.flag(
        "each transport's calls went to its own API",
        not wrong,
        "; ".join(wrong) or "chat, responses, messages, gemini: as expected",
    )


def report_batches(
    results: dict[tuple[str, int], Throughput], settings: Settings, targets: Targets
) -> None:
    """The throughput table and its targets."""
    names = list(dict.fromkeys(name for name, _ in results))
    head = " | ".join(f"c={c} calls/s | c={c} CPU/call" for c in CONCURRENCY)
    print(
        f"\n## Predict.batch: {settings.batch_size} distinct questions, calls per second of "
        f"wall time, median of {settings.batch_rounds} rounds\n\n| system | {head} | failures |"
        f"\n|---|{'---:|' * (2 * len(CONCURRENCY))}---:|"
    )
    for name in names:
        cells = " | ".join(
            f"{results[name, c].calls_per_second:,.0f} | {_us(results[name, c].cpu_per_call)}"
            for c in CONCURRENCY
        )
        failed = sum(results[name, c].failures for c in CONCURRENCY)
        print(f"| {name} | {cells} | {failed} |")
    direct = _find(names, "structio", "(direct)") or _find(names, "structio")
    dspy = _find(names, "DSPy")
    for c in CONCURRENCY:
        ratio = (
            _ratio(results[direct, c].calls_per_second, results[dspy, c].calls_per_second)
            if direct and dspy
            else None
        )
        if ratio is not None:
            print(f"\nstructio / DSPy at concurrency {c}: {ratio:.2f}x calls per second")
        targets.check(
            f"Predict.batch at concurrency {c}, direct path, >= 2x DSPy's",
            ratio,
            2.0,
            at_most=False,
        )


def report_cold(
    results: dict[str, Cold], imports: tuple[bool, bool], settings: Settings, targets: Targets
) -> None:
    """The cold-start table, the import check, and their targets."""
    print(
        f"\n## Cold start: fresh interpreter to the first result, median of {settings.cold_runs} "
        "runs\n\n| system | wall | CPU | wall / DSPy (default engine, same provider) "
        "| CPU / DSPy | litellm loaded | httpx loaded | requests / run |"
        "\n|---|---:|---:|---:|---:|---|---|---|"
    )
    dspy_of = {
        group: _find([n for n in results if _group(n) == group], "DSPy", "default engine")
        for group in {_group(n) for n in results}
    }
    for name, r in results.items():
        dspy_name = dspy_of[_group(name)]
        if dspy_name:
            ratios = (
                f"{r.wall / results[dspy_name].wall:.2f}x | {r.cpu / results[dspy_name].cpu:.2f}x"
            )
        else:
            ratios = "— | —"
        made = ", ".join(str(n) for n in sorted(set(r.requests))) or "—"
        print(
            f"| {name} | {_ms(r.wall)} | {_ms(r.cpu)} | {ratios} | {r.litellm} | {r.httpx} "
            f"| {made} |"
        )
    for group in ("anthropic/", "gemini/"):
        mine = _find(results, "structio", group)
        for engine in ("default engine", "engine='litellm'"):
            theirs = _find(results, "DSPy", group, engine)
            targets.check(
                f"cold start to a first {group} result, <= 0.5x DSPy's ({engine})",
                _ratio(results[mine].wall, results[theirs].wall) if mine and theirs else None,
                0.5,
                at_most=True,
            )
        if mine:
            targets.flag(
                f"a direct {group} call never imports litellm",
                not results[mine].litellm,
                f"litellm loaded at the first result: {results[mine].litellm}",
            )
    counted = {name: r.requests for name, r in results.items() if r.requests}
    if counted:
        targets.flag(
            "cold start: every run made exactly one request (none for the bare interpreter)",
            all(
                set(runs) == ({0} if name.startswith("bare") else {1})
                for name, runs in counted.items()
            ),
            ", ".join(f"{n}: {sorted(set(r))}" for n, r in counted.items()),
        )
    direct = _find(results, "structio", "(direct)") or _find(results, "structio")
    dspy = dspy_of.get("")
    targets.check(
        "cold start to first result, direct path, <= 0.5x DSPy's",
        _ratio(results[direct].wall, results[dspy].wall) if direct and dspy else None,
        0.5,
        at_most=True,
    )
    litellm, httpx_ = imports
    print(f"\n`import structio` loads litellm: {litellm}; loads httpx: {httpx_}")
    targets.flag(
        "`import structio` loads neither litellm nor httpx",
        not litellm and not httpx_,
        f"litellm {litellm}, httpx {httpx_}",
    )
    if direct and "(direct)" in direct:
        targets.flag(
            "a direct call never imports litellm",
            not results[direct].litellm,
            f"litellm loaded at the first direct result: {results[direct].litellm}",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (a smoke run)")
    parser.add_argument(
        "--only-async", action="store_true", help="only the async throughput (50 ms server)"
    )
    parser.add_argument(
        "--async-cache",
        action="store_true",
        help="only the async throughput, with each library's response cache on (all misses)",
    )
    parser.add_argument(
        "--only-per-call",
        action="store_true",
        help="only the per-call CPU of each transport and system (no throughput, cold start)",
    )
    args = parser.parse_args()
    settings = QUICK if args.quick else FULL
    warnings.filterwarnings("ignore")
    dspy = import_dspy()
    litellm = import_litellm()
    targets = Targets()
    started = time.perf_counter()
    if not args.only_async and not args.async_cache:
        run_sync(dspy, litellm, settings, targets, per_call_only=args.only_per_call)
    if args.only_per_call:
        targets.print()
        return
    with loopback(ASYNC_DELAY) as server, tempfile.TemporaryDirectory() as tmp:
        print(f"\nLoopback server answering in {ASYNC_DELAY * 1e3:g} ms: {server.url}")
        cache_dir = Path(tmp) if args.async_cache else None
        systems = async_systems(server.url, dspy, cache_dir)
        report_async(measure_async(server, systems, settings), settings, targets, cache_dir)
    targets.print()
    print(f"\nThe whole run took {time.perf_counter() - started:.0f} s.")


def run_sync(
    dspy: Any | None,
    litellm: Any | None,
    settings: Settings,
    targets: Targets,
    *,
    per_call_only: bool = False,
) -> None:
    """Per call, thread throughput and cold start, against the immediate server."""
    with loopback() as server:
        print(f"Loopback server: {server.url} (its own process)")
        print(f"structio {sio.__version__}; transports: {TRANSPORTS}")
        if dspy is not None:
            print(f"DSPy {dspy.__version__}, default engine here: {dspy_engine(dspy, server.url)}")
        else:
            print("DSPy: not installed, left out")
        print()
        systems = per_call_systems(server.url, dspy, litellm)
        more, rows = provider_systems(server, dspy)
        per_call = measure_per_call(server, systems | more, settings)
        report_per_call(per_call, settings, targets)
        report_providers(per_call, rows, targets)
        if per_call_only:
            return
        batches = measure_batches(server, batch_systems(server.url, dspy), settings)
        report_batches(batches, settings, targets)
        scripts = cold_scripts(server.url, dspy is not None, server.root)
        cold = measure_cold(scripts, settings, server)
        report_cold(cold, import_check(), settings, targets)


if __name__ == "__main__":
    main()
