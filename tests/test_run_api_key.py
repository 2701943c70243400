"""`structio run --api-base`: no key demanded of a server that asks for none; --api-key(-env)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from structio.cli import NO_KEY, main
from tests.wire.server import OpenAIServer, Reply, Request

SIG = "question -> answer: int"
TIMEOUT = 120


@pytest.fixture
def server(server: OpenAIServer) -> OpenAIServer:
    """The loopback server (tests/conftest.py), answering every call by default."""
    server.default = Reply(content="[[ ## answer ## ]]\n4")
    return server


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"question": "2+2?"}\n{"question": "1+3?"}\n', encoding="utf-8")
    return data


def authorization(request: Request) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get("authorization")


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_a_local_server_needs_no_key_in_the_environment(
    server: OpenAIServer, rows: Path, tmp_path: Path, transport: str
) -> None:
    out = tmp_path / "preds.jsonl"
    # A real process, with no key of any provider in its environment.
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "structio", "run", SIG, str(rows), "-o", str(out)),
            *("--model", "openai/llama3.2", "--api-base", server.base_url),
            # -q: no progress lines (a slow litellm import can outlast their interval);
            # warnings and errors would still show.
            *("--transport", transport, "--no-cache", "-q"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("2 rows predicted, 0 already in")
    outputs = [json.loads(line)["outputs"] for line in out.read_text().splitlines()]
    assert outputs == [{"answer": 4}, {"answer": 4}]
    sent = {authorization(request) for request in server.requests}
    # The direct transport sends no key; litellm must send one, so it gets a placeholder.
    assert sent == ({None} if transport == "direct" else {f"Bearer {NO_KEY}"})


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_api_key_and_api_key_env_are_sent(
    server: OpenAIServer,
    rows: Path,
    tmp_path: Path,
    transport: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = ["run", SIG, str(rows), "--model", "openai/llama3.2", "--no-cache"]
    base += ["--api-base", server.base_url, "--transport", transport]
    assert main([*base, "-o", str(tmp_path / "a.jsonl"), "--api-key", "sk-given"]) == 0
    monkeypatch.setenv("MY_SERVER_KEY", "sk-from-env")
    assert main([*base, "-o", str(tmp_path / "b.jsonl"), "--api-key-env", "MY_SERVER_KEY"]) == 0
    assert [authorization(r) for r in server.requests] == ["Bearer sk-given"] * 2 + [
        "Bearer sk-from-env"
    ] * 2


def test_an_api_key_env_that_is_not_set_is_a_usage_error(
    rows: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", SIG, str(rows), "-o", str(tmp_path / "p.jsonl"), "--model", "openai/x"]
    assert main([*argv, "--api-key-env", "STRUCTIO_TEST_UNSET_KEY"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "structio: error: --api-key-env names the environment variable "
        "STRUCTIO_TEST_UNSET_KEY, which is not set; export STRUCTIO_TEST_UNSET_KEY=... "
        "first (or pass --api-key)\n"
    )
    assert not (tmp_path / "p.jsonl").exists()
    with pytest.raises(SystemExit) as caught:  # one key or the other, not both
        main([*argv, "--api-key", "a", "--api-key-env", "B"])
    assert caught.value.code == 2


@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_a_server_that_wants_a_key_says_so_once(
    server: OpenAIServer,
    tmp_path: Path,
    transport: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.default = Reply(status=401, error_message="Missing bearer token")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(f'{{"question": "q{n}"}}\n' for n in range(40)), encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    argv = ["run", SIG, str(data), "-o", str(out), "--model", "openai/llama3.2", "--no-cache"]
    argv += ["--api-base", server.base_url, "--transport", transport, "--concurrency", "1"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    # The key is every row's: the first row's refusal stopped the run, not forty errors. (The
    # row queued for the worker when it failed may have been sent as well.)
    sent = len(server.requests)
    assert sent in (1, 2)
    assert captured.out.startswith("0 rows predicted, 0 already in")
    error, hint = captured.err.splitlines()
    assert error.startswith(
        "structio: error: stopped at the first failed row: its error is in the settings every "
        "row uses: AuthenticationError: openai/llama3.2 (provider openai): "
        "authentication failed"
    )
    assert "Missing bearer token" in error
    assert error.endswith("fix the cause and rerun the same command (the rows done are kept)")
    assert hint == (
        "  the server refused the key, or asked for one: pass --api-key KEY or --api-key-env "
        "NAME (or set the provider's variable, e.g. OPENAI_API_KEY)"
    )
    errors = out.with_name("preds.errors.jsonl").read_text(encoding="utf-8").splitlines()
    failed = [json.loads(line)["line"] for line in errors]
    assert failed == list(range(1, sent + 1))  # the rest are left for the rerun
