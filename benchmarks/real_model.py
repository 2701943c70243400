"""A real model: how often each adapter's answer is parsed and right, with and without a grammar.

The model is Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M) served on the CPU by
llama-cpp-python's OpenAI-compatible server (`real_model_setup.sh` installs and starts it
from PyPI packages). Three signatures of different shapes, 20 inputs each
(`real_model_data.py`): a label, a nested extraction with an optional field, a list of
objects. Every cell asks every input once, at temperature 0:

- structio's ChatAdapter, JSONAdapter, XMLAdapter and CompactAdapter, each with decoding
  left free (``constrain=False``) and constrained (``constrain=True``: Chat and XML by the
  GBNF grammar structio compiles from the signature, JSON and Compact by the outputs' JSON
  schema, which the server turns into its own grammar); ToolOutputAdapter once (``tool``:
  the server holds a forced tool call's arguments to the tool's schema in any case);
- DSPy 3.4.1's ChatAdapter and JSONAdapter (when DSPy is installed), on the same server.

Each request goes through a small proxy in this process that forwards it to the server,
counts requests per answer and reads the server process's CPU time (``/proc/PID/stat``)
around each request; answers are kept in a JSON Lines file keyed by the exact request body,
so a second run (or another cell sending the very same request, as DSPy's ChatAdapter and
structio's do) reads them back instead of asking again, and a stopped run resumes.

Per cell and signature it prints: parsed (a value came back), correct, refused (an error,
never a value), wrong (a value that is not the right answer), requests per answer, server
CPU per answer, and the grammar's compile time (the first call's, then per call).

Run: python benchmarks/real_model.py [--cells chat,chat+g,...] [--signatures label,...]
     [--limit N] [--base http://127.0.0.1:8765/v1]
Not in CI: several hours of CPU on a 2-core machine for the whole table.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import os
import statistics
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pydantic

import structio as sio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_model_data import CONTACTS, ORDERS, REVIEWS  # noqa: E402

MODEL = "qwen2.5-coder-1.5b-instruct"
MAX_TOKENS = 400
STATE = Path(os.environ.get("STRUCTIO_REALMODEL_STATE", "/tmp/structio-realmodel"))


# --- the signatures, as structio and DSPy spell them -------------------------------------


class Company(pydantic.BaseModel):
    name: str
    city: str


class Contact(pydantic.BaseModel):
    name: str
    email: str
    age: int | None = None
    company: Company


class Item(pydantic.BaseModel):
    name: str
    quantity: int


def signatures(lib: Any) -> dict[str, Any]:
    """The three signatures in ``lib``'s spelling: structio's and DSPy's are the same words."""

    class Sentiment(lib.Signature):  # type: ignore[misc,name-defined]
        """Classify the sentiment of a product review."""

        review: str = lib.InputField()
        sentiment: Literal["positive", "negative"] = lib.OutputField()

    class ExtractContact(lib.Signature):  # type: ignore[misc,name-defined]
        """Extract the contact details from the text. Leave age empty when it is not stated."""

        text: str = lib.InputField()
        contact: Contact = lib.OutputField()

    class OrderItems(lib.Signature):  # type: ignore[misc,name-defined]
        """List the items of the order with their quantities, in the order given."""

        order: str = lib.InputField()
        items: list[Item] = lib.OutputField()

    return {"label": Sentiment, "extraction": ExtractContact, "list": OrderItems}


def structio_signatures() -> dict[str, type[sio.Signature]]:
    return signatures(sio)


def dspy_signatures(dspy: Any) -> dict[str, Any]:
    return signatures(dspy)


DATA: dict[str, list[tuple[dict[str, Any], Any]]] = {
    "label": [({"review": text}, gold) for text, gold in REVIEWS],
    "extraction": [({"text": text}, gold) for text, gold in CONTACTS],
    "list": [({"order": text}, gold) for text, gold in ORDERS],
}


def _norm(value: Any, plural: bool) -> Any:
    if isinstance(value, pydantic.BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        return {k: _norm(v, plural) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_norm(v, plural) for v in value), key=repr)
    if isinstance(value, str):
        words = value.casefold().split()
        if plural:  # "3 apples": "apples" and "apple" name the same item
            words = [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words]
        return " ".join(words)
    return value


def is_correct(signature: str, value: Any, gold: Any) -> bool:
    """Whether a parsed value is the right answer.

    Strings are compared without case or repeated spaces; an order's item names also
    without a plural ``s`` (the model writes "apple" for "3 apples" as often as not).
    """
    plural = signature == "list"
    return bool(_norm(value, plural) == _norm(gold, plural))


# --- the proxy: requests counted, answers kept, the server's CPU read -----------------------


def server_cpu(pid: int) -> float:
    """The server process's CPU seconds so far (user + system), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request_key(body: dict[str, Any]) -> str:
    """What makes two requests the same request to this server.

    DSPy (through litellm) sends ``max_completion_tokens`` and ``temperature: 0.0`` where
    structio sends ``max_tokens`` and ``0``; llama-cpp-python 0.2.62 ignores the first
    (DSPy's answers are then unbounded: none of these reaches 400 tokens) and reads both
    temperatures alike. The model name is the alias the server serves whatever is sent.
    """
    body = dict(body)
    body.pop("model", None)
    if "max_completion_tokens" in body:
        body["max_tokens"] = body.pop("max_completion_tokens")
    if isinstance(body.get("temperature"), (int, float)):
        body["temperature"] = float(body["temperature"])
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class Proxy:
    """Forwards chat completions to the real server; keeps each answer by its request body."""

    def __init__(self, upstream: str, pid: int, store: Path) -> None:
        self.upstream = upstream.rstrip("/")
        self.pid = pid
        self.store = store
        self.kept: dict[str, dict[str, Any]] = {}
        if store.exists():
            for line in store.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    self.kept[record["key"]] = record
        self.lock = threading.Lock()
        self.requests = 0
        self.cpu = 0.0
        self.fresh = 0
        self.hits = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                status, body = proxy.answer(self.path, raw)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def answer(self, path: str, raw: bytes) -> tuple[int, bytes]:
        key = request_key(json.loads(raw))
        with self.lock:  # the server answers one request at a time anyway
            self.requests += 1
            record = self.kept.get(key)
            if record is None:
                record = self._ask(path, raw, key)
            elif record.get("cpu") is not None:
                self.hits += 1
            self.cpu += record["cpu"]
            return record["status"], record["body"].encode()

    def _ask(self, path: str, raw: bytes, key: str) -> dict[str, Any]:
        request = urllib.request.Request(
            self.upstream + path.removeprefix("/v1"),
            data=raw,
            headers={"content-type": "application/json"},
        )
        before, started = server_cpu(self.pid), time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=1800) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        record = {
            "key": key,
            "status": status,
            "body": text,
            "cpu": server_cpu(self.pid) - before,
            "wall": time.monotonic() - started,
            "request": json.loads(raw),
        }
        self.fresh += 1
        self.kept[key] = record
        with self.store.open("a") as out:
            out.write(json.dumps(record) + "\n")
        return record


# --- cells ----------------------------------------------------------------------------------


@dataclass
class Cell:
    """One system and adapter setting, asked every input of a signature."""

    name: str
    system: str  # "structio" | "dspy"
    make: Callable[[str], Callable[[dict[str, Any]], Any]]
    compile_ms: dict[str, tuple[float, float]] = field(default_factory=dict)


def structio_cells(proxy: Proxy) -> list[Cell]:
    signatures = structio_signatures()

    @functools.cache
    def model() -> sio.LM:
        return sio.LM(
            f"openai/{MODEL}",
            api_base=proxy.url,
            api_key="unused",
            server="llamacpp",
            temperature=0,
            max_tokens=MAX_TOKENS,
            cache=False,
            num_retries=0,
            timeout=1800,
        )

    adapters = {
        "chat": sio.ChatAdapter,
        "json": sio.JSONAdapter,
        "xml": sio.XMLAdapter,
        "compact": sio.CompactAdapter,
    }
    cells = []
    for short, cls in adapters.items():
        for constrain in (False, True):
            name = f"{short}{'+g' if constrain else ''}"

            def make(
                sig: str,
                cls: Any = cls,
                constrain: bool = constrain,
                name: str = name,
                short: str = short,
            ) -> Callable[[dict[str, Any]], Any]:
                lm = model()
                adapter = cls(constrain=constrain)
                predict = sio.Predict(signatures[sig], lm=lm, adapter=adapter)
                cell = CELLS[name]
                if constrain and short in ("chat", "xml"):
                    started = time.perf_counter()
                    adapter.grammar(signatures[sig])
                    first = (time.perf_counter() - started) * 1e3
                    started = time.perf_counter()
                    for _ in range(100):
                        adapter.grammar(signatures[sig])
                    again = (time.perf_counter() - started) * 10
                    cell.compile_ms[sig] = (first, again)
                output = next(iter(signatures[sig].output_fields))
                return lambda inputs: getattr(predict(**inputs), output)

            cells.append(Cell(name, "structio", make))

    def tool(sig: str) -> Callable[[dict[str, Any]], Any]:
        # A forced tool call: llama-cpp-python holds its arguments to the tool's schema
        # whatever is asked, so this adapter has no unconstrained cell.
        predict = sio.Predict(signatures[sig], lm=model(), adapter=sio.ToolOutputAdapter())
        output = next(iter(signatures[sig].output_fields))
        return lambda inputs: getattr(predict(**inputs), output)

    cells.append(Cell("tool", "structio", tool))
    return cells


def dspy_cells(proxy: Proxy) -> list[Cell]:
    try:
        import dspy
    except ImportError:
        return []
    signatures = dspy_signatures(dspy)
    lm = dspy.LM(
        f"openai/{MODEL}",
        api_base=proxy.url,
        api_key="unused",
        temperature=0,
        max_tokens=MAX_TOKENS,
        cache=False,
        num_retries=0,
    )
    cells = []
    for short, adapter in (("dspy-chat", dspy.ChatAdapter), ("dspy-json", dspy.JSONAdapter)):

        def make(sig: str, adapter: Any = adapter):
            predict = dspy.Predict(signatures[sig])
            output = next(iter(signatures[sig].output_fields))

            def ask(inputs: dict[str, Any]) -> Any:
                with dspy.context(lm=lm, adapter=adapter()):
                    # pred.items would be the dict method of DSPy's Prediction
                    return predict(**inputs)[output]

            return ask

        cells.append(Cell(short, "dspy", make))
    return cells


CELLS: dict[str, Cell] = {}


# --- running and the table -------------------------------------------------------------------


def finished(results: Path) -> set[str]:
    """The answers already in the results file (another run may be adding to it)."""
    done = set()
    if results.exists():
        for line in results.read_text().splitlines():
            r = json.loads(line)
            done.add(f"{r['cell']}|{r['signature']}|{r['index']}")
    return done


def run_cell(cell: Cell, sig: str, proxy: Proxy, results: Path, limit: int, start: int = 0) -> None:
    ask = cell.make(sig)
    for index, (inputs, gold) in enumerate(DATA[sig][:limit]):
        tag = f"{cell.name}|{sig}|{index}"
        if index < start or tag in finished(results):
            continue
        requests, cpu, fresh = proxy.requests, proxy.cpu, proxy.fresh
        started = time.monotonic()
        outcome, shown = "refused", ""
        try:
            value = ask(inputs)
        except (sio.LMConnectionError, sio.LMTimeoutError, NameError, AttributeError):
            raise  # the benchmark's own trouble, or the server's: not an answer
        except Exception as error:  # a refusal: what the library raised instead of a value
            shown = f"{type(error).__name__}: {str(error)[:300]}"
            if not isinstance(error, (sio.ParseError,)) and "AdapterParseError" not in repr(
                type(error)
            ):
                shown = "ERROR " + shown
                traceback.print_exc(limit=3)
        else:
            outcome = "correct" if is_correct(sig, value, gold) else "wrong"
            shown = repr(value)[:300]
        record = {
            "cell": cell.name,
            "signature": sig,
            "index": index,
            "outcome": outcome,
            "value": shown,
            "requests": proxy.requests - requests,
            "server_cpu": proxy.cpu - cpu,
            "asked_server": proxy.fresh - fresh,
            "wall": time.monotonic() - started,
        }
        with results.open("a") as out:
            out.write(json.dumps(record) + "\n")
        print(
            f"{tag:28s} {outcome:8s} req={record['requests']} cpu={record['server_cpu']:.1f}s "
            f"{shown[:90]}",
            flush=True,
        )


def table(results: Path, compile_ms: dict[str, dict[str, tuple[float, float]]]) -> str:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        rows.setdefault((record["signature"], record["cell"]), []).append(record)
    lines = [
        "| signature | cell | n | parsed | correct | refused | wrong | requests/answer "
        "| server CPU/answer (s, median) | grammar compile (first / again, ms) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (sig, cell), records in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        n = len(records)
        count = {
            o: sum(r["outcome"] == o for r in records) for o in ("correct", "refused", "wrong")
        }
        compiled = compile_ms.get(cell, {}).get(sig)
        lines.append(
            f"| {sig} | {cell} | {n} | {count['correct'] + count['wrong']} | {count['correct']} "
            f"| {count['refused']} | {count['wrong']} "
            f"| {sum(r['requests'] for r in records) / n:.2f} "
            f"| {statistics.median(r['server_cpu'] for r in records):.1f} "
            f"| {f'{compiled[0]:.1f} / {compiled[1]:.3f}' if compiled else '-'} |"
        )
    return "\n".join(lines)


def summary(results: Path) -> str:
    """One row per cell: correct of 20 (refused) per signature, requests and CPU per answer."""
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        rows.setdefault(record["cell"], {}).setdefault(record["signature"], []).append(record)
    signatures = ("label", "list", "extraction")
    lines = [
        "| cell | "
        + " | ".join(f"{s}: correct (refused)" for s in signatures)
        + " | requests/answer | server CPU/answer, s (label / list / extraction) |",
        "|---|" + "---|" * (len(signatures) + 2),
    ]
    for cell, by_signature in rows.items():
        cells, cpu, requests, answers = [], [], 0, 0
        for sig in signatures:
            records = by_signature.get(sig, [])
            correct = sum(r["outcome"] == "correct" for r in records)
            refused = sum(r["outcome"] == "refused" for r in records)
            cells.append(f"{correct}/{len(records)} ({refused})" if records else "-")
            cpu.append(
                f"{statistics.median(r['server_cpu'] for r in records):.1f}" if records else "-"
            )
            requests += sum(r["requests"] for r in records)
            answers += len(records)
        per_answer = requests / max(answers, 1)
        lines.append(f"| {cell} | {' | '.join(cells)} | {per_answer:.2f} | {' / '.join(cpu)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--pid-file", default="/tmp/realmodel/server.pid")
    parser.add_argument("--cells", default="")
    parser.add_argument("--signatures", default="label,list,extraction")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--start", type=int, default=0, help="skip the inputs before this one")
    parser.add_argument("--table-only", action="store_true")
    args = parser.parse_args()
    STATE.mkdir(parents=True, exist_ok=True)
    results = STATE / "results.jsonl"
    compiled_path = STATE / "compile_ms.json"
    compile_ms = json.loads(compiled_path.read_text()) if compiled_path.exists() else {}
    if not args.table_only:
        pid = int(Path(args.pid_file).read_text())
        proxy = Proxy(args.base, pid, STATE / "answers.jsonl")
        for cell in structio_cells(proxy) + dspy_cells(proxy):
            CELLS[cell.name] = cell
        chosen = [c for c in args.cells.split(",") if c] or list(CELLS)
        for sig in args.signatures.split(","):
            for name in chosen:
                run_cell(CELLS[name], sig, proxy, results, args.limit, args.start)
                if CELLS[name].compile_ms:
                    compile_ms.setdefault(name, {}).update(
                        {s: list(v) for s, v in CELLS[name].compile_ms.items()}
                    )
                    compiled_path.write_text(json.dumps(compile_ms))
    if results.exists():
        print(table(results, compile_ms))
        print()
        print(summary(results))


if __name__ == "__main__":
    main()
