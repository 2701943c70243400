"""Tools, media and reasoning over the real wire, both transports, with `mcp` not installed.

Requests carry content parts, tool definitions and tool messages as they were given;
replies give back tool calls, a reasoning model's reasoning and its reasoning tokens,
streamed or not. Every test of this module runs with ``import mcp`` failing (see
`no_mcp`), the state of a plain install: litellm's MCP gateway must never be needed for
ordinary tools. The subprocess tests at the end run the litellm transport with the `mcp`
package missing and with one importable, and with a litellm that cannot be told to skip
its gateway.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]
ROOT = Path(__file__).resolve().parents[2]

# A 1x1 PNG, as a data URI: what an Image becomes in a content part.
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    "DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
MEDIA_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Describe what you are given."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"}},
            {
                "type": "file",
                "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
            },
        ],
    },
]
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
    {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
    },
]
TOOL_CHOICE = {"type": "function", "function": {"name": "get_weather"}}
CALLS: list[dict[str, Any]] = [
    {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'},
    },
    {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
]
QUESTION = [{"role": "user", "content": "Weather and time in Paris?"}]
MULTI_TURN: list[dict[str, Any]] = [
    *QUESTION,
    {"role": "assistant", "content": None, "tool_calls": CALLS},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"forecast": "sunny"}'},
    {"role": "tool", "tool_call_id": "call_2", "content": "12:00"},
]
THOUGHT = "The user asks for 2+2. Adding: 4. Check: 4-2=2, fine."
REASONING_USAGE = {
    "prompt_tokens": 20,
    "completion_tokens": 57,
    "total_tokens": 77,
    "completion_tokens_details": {"reasoning_tokens": 50},
}


@pytest.fixture(autouse=True)
def no_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import mcp`` fails in every test here, whether or not the package is installed."""
    for name in ("mcp", "mcp_types"):
        monkeypatch.setitem(sys.modules, name, None)


def last_response(items: list[Any]) -> sio.LMResponse:
    """The response a stream ends with (after its text pieces)."""
    assert isinstance(items[-1], sio.LMResponse)
    assert all(isinstance(item, str) for item in items[:-1])
    return items[-1]


def streamed(lm: sio.LM, messages: list[dict[str, Any]], **params: Any) -> list[Any]:
    return list(lm.stream(messages, **params))


def astreamed(lm: sio.LM, messages: list[dict[str, Any]], **params: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [item async for item in lm.astream(messages, **params)]

    return asyncio.run(run())


def test_mcp_cannot_be_imported_here() -> None:
    with pytest.raises(ImportError):
        import mcp  # noqa: F401


# -- requests -------------------------------------------------------------------------------


def test_content_parts_arrive_intact(server: OpenAIServer, make_lm: MakeLM) -> None:
    given = copy.deepcopy(MEDIA_MESSAGES)
    lm = make_lm()
    lm(given)
    asyncio.run(lm.acall(given))
    streamed(lm, given)
    assert [request.messages for request in server.requests] == [MEDIA_MESSAGES] * 3
    assert given == MEDIA_MESSAGES  # the caller's messages are left as they were


@pytest.mark.parametrize("mode", ["call", "acall", "stream", "astream"])
def test_tools_and_tool_choice_arrive(server: OpenAIServer, make_lm: MakeLM, mode: str) -> None:
    params: dict[str, Any] = {
        "tools": copy.deepcopy(TOOLS),
        "tool_choice": TOOL_CHOICE,
        "parallel_tool_calls": False,
        "reasoning_effort": "low",
    }
    lm = make_lm()
    if mode == "call":
        lm(QUESTION, **params)
    elif mode == "acall":
        asyncio.run(lm.acall(QUESTION, **params))
    elif mode == "stream":
        streamed(lm, QUESTION, **params)
    else:
        astreamed(lm, QUESTION, **params)
    (request,) = server.requests
    assert request.body["tools"] == TOOLS
    assert request.body["tool_choice"] == TOOL_CHOICE
    assert request.body["parallel_tool_calls"] is False
    assert request.body["reasoning_effort"] == "low"
    assert request.messages == QUESTION
    assert "_skip_mcp_handler" not in request.body


def test_tool_choice_strings_arrive(server: OpenAIServer, make_lm: MakeLM) -> None:
    lm = make_lm(tools=TOOLS)  # tools set on the LM go with every request
    for choice in ("auto", "required", "none"):
        lm(QUESTION, tool_choice=choice)
    assert [r.body["tool_choice"] for r in server.requests] == ["auto", "required", "none"]
    assert all(r.body["tools"] == TOOLS for r in server.requests)


def test_a_tool_conversation_arrives_intact(
    server: OpenAIServer, make_lm: MakeLM, transport: str
) -> None:
    given = copy.deepcopy(MULTI_TURN)
    lm = make_lm()
    lm(given, tools=TOOLS)
    streamed(lm, given, tools=TOOLS)
    expected = copy.deepcopy(MULTI_TURN)
    if transport == "litellm":
        # litellm drops every None-valued field of a message before sending it
        # (litellm.utils.cleanup_none_field_in_message): the assistant's "content": null
        # goes out absent, which OpenAI's API reads the same.
        del expected[1]["content"]
    assert [request.messages for request in server.requests] == [expected] * 2
    assert given == MULTI_TURN


# -- tool calls in replies ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["call", "acall", "stream", "astream"])
def test_a_reply_of_tool_calls_only(server: OpenAIServer, make_lm: MakeLM, mode: str) -> None:
    server.reply(Reply(content=None, tool_calls=CALLS, finish_reason="tool_calls"))
    lm = make_lm()
    if mode == "call":
        response = lm(QUESTION, tools=TOOLS)
    elif mode == "acall":
        response = asyncio.run(lm.acall(QUESTION, tools=TOOLS))
    else:
        items = (streamed if mode == "stream" else astreamed)(lm, QUESTION, tools=TOOLS)
        assert len(items) == 1  # no text to hand out: only the response
        response = last_response(items)
    (completion,) = response.completions
    assert completion.text == ""
    assert response.text == ""
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls is not None
    assert [dict(call) for call in completion.tool_calls] == CALLS
    assert completion.reasoning is None


def test_the_json_reply_really_has_null_content(server: OpenAIServer) -> None:
    import httpx

    server.reply(Reply(content=None, tool_calls=CALLS, finish_reason="tool_calls"))
    body = {"model": "test", "messages": QUESTION}
    message = httpx.post(f"{server.base_url}/chat/completions", json=body).json()["choices"][0]
    assert message["message"]["content"] is None
    assert message["message"]["tool_calls"] == CALLS


def test_text_and_tool_calls_together(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(
        Reply(content="Let me look.", tool_calls=CALLS[:1], finish_reason="tool_calls"),
        Reply(content="Let me look.", tool_calls=CALLS[:1], finish_reason="tool_calls"),
    )
    lm = make_lm()
    whole = lm(QUESTION, tools=TOOLS)
    items = streamed(lm, QUESTION, tools=TOOLS)
    assert "".join(items[:-1]) == "Let me look."
    for response in (whole, last_response(items)):
        assert response.text == "Let me look."
        assert [dict(call) for call in response[0].tool_calls or ()] == CALLS[:1]


# -- reasoning ------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("mode", ["call", "acall", "stream", "astream"])
def test_reasoning_and_its_tokens(
    server: OpenAIServer, make_lm: MakeLM, mode: str, spelling: str
) -> None:
    server.reply(Reply(content="4", usage=REASONING_USAGE, chunk_size=5, **{spelling: THOUGHT}))
    lm = make_lm()
    if mode == "call":
        response = lm(QUESTION)
    elif mode == "acall":
        response = asyncio.run(lm.acall(QUESTION))
    else:
        items = (streamed if mode == "stream" else astreamed)(lm, QUESTION)
        assert items[:-1] == ["4"]  # the pieces handed out are the answer, never the thinking
        response = last_response(items)
        if spelling == "reasoning":  # the server really streamed it in pieces
            assert server.requests[0].body["stream"] is True
    assert response.text == "4"
    assert response[0].reasoning == THOUGHT
    assert response.usage == sio.Usage(
        prompt_tokens=20, completion_tokens=57, cached_tokens=0, reasoning_tokens=50
    )
    assert response.usage.total_tokens == 77  # reasoning is inside completion_tokens


def test_both_spellings_at_once_are_read_once(server: OpenAIServer, make_lm: MakeLM) -> None:
    both = Reply(content="4", reasoning_content=THOUGHT, reasoning=THOUGHT)
    server.reply(both, both)
    lm = make_lm()
    assert lm(QUESTION)[0].reasoning == THOUGHT
    assert last_response(streamed(lm, QUESTION))[0].reasoning == THOUGHT


def test_reasoning_per_choice_with_tool_calls(server: OpenAIServer, make_lm: MakeLM) -> None:
    reply = Reply(
        content=[None, None],
        tool_calls=CALLS[:1],
        reasoning_content=THOUGHT,
        finish_reason="tool_calls",
    )
    server.reply(reply, reply)
    lm = make_lm()
    for response in (lm(QUESTION, n=2, tools=TOOLS), last_response(streamed(lm, QUESTION, n=2))):
        assert [c.text for c in response] == ["", ""]
        assert [c.reasoning for c in response] == [THOUGHT, THOUGHT]
        assert [[dict(call) for call in c.tool_calls or ()] for c in response] == [CALLS[:1]] * 2


def test_no_reasoning_is_none(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content="plain"), Reply(content="plain"))
    lm = make_lm()
    assert lm(QUESTION)[0].reasoning is None
    response = last_response(streamed(lm, QUESTION))
    assert response[0].reasoning is None
    assert response.usage.reasoning_tokens == 0


def test_a_cache_hit_keeps_reasoning_and_tool_calls(
    server: OpenAIServer, make_lm: MakeLM, tmp_path: Path
) -> None:
    server.reply(
        Reply(
            content=None,
            tool_calls=CALLS,
            reasoning_content=THOUGHT,
            usage=REASONING_USAGE,
            finish_reason="tool_calls",
        )
    )
    cache = sio.ResponseCache(tmp_path / "cache")
    lm = make_lm(cache=cache)
    first = lm(QUESTION, tools=TOOLS)
    cache.close()
    reopened = sio.ResponseCache(tmp_path / "cache")  # from the disk tier
    for hit in (
        lm(QUESTION, tools=TOOLS),
        make_lm(cache=reopened)(QUESTION, tools=TOOLS),
        last_response(streamed(make_lm(cache=reopened), QUESTION, tools=TOOLS)),
    ):
        assert hit.cached
        assert hit.completions == first.completions
        assert hit[0].reasoning == THOUGHT
        assert [dict(call) for call in hit[0].tool_calls or ()] == CALLS
    assert len(server.requests) == 1
    # Other tools, another tool choice, another effort: other requests, not cache hits.
    lm(QUESTION, tools=TOOLS[:1])
    lm(QUESTION, tools=TOOLS, tool_choice="required")
    lm(QUESTION, tools=TOOLS, reasoning_effort="high")
    assert len(server.requests) == 4


def test_history_hides_a_credential_echoed_in_the_reasoning(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content="ok", reasoning_content="the key is secret-key-987, I see"))
    lm = make_lm(api_key="secret-key-987")
    response = lm(QUESTION)
    assert response[0].reasoning == "the key is secret-key-987, I see"  # the caller's, as sent
    assert lm.history[-1].response[0].reasoning == "the key is [redacted], I see"
    printed = io.StringIO()
    sio.inspect_history(1, file=printed)
    shown = printed.getvalue()
    assert "secret-key-987" not in shown
    assert "reasoning:\n  the key is [redacted], I see\n" in shown


# -- the `mcp` package: missing, present, and a litellm that cannot skip its gateway --------

# The `mcp` package as litellm's gateway imports it, without its server stack: every
# submodule of `mcp` and `mcp_types` can be imported and every name in one is a
# placeholder class. litellm only imports these names to define its gateway; a request
# with function tools never uses them.
STUB = '''
"""A stand-in for the `mcp` package: importable, every name a placeholder class."""

# Private names: a submodule sets its name in the package's namespace (`mcp.types`
# would replace a module-level `types`).
import importlib.abc as _abc
import importlib.machinery as _machinery
import sys as _sys
import types as _module_types

_CLASSES = {}


def _placeholder(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _CLASSES:
        _CLASSES[name] = type(name, (), {"__class_getitem__": classmethod(lambda c, i: c)})
    return _CLASSES[name]


class _Stubs(_abc.MetaPathFinder, _abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in ("mcp", "mcp_types") and "." in fullname:
            return _machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _module_types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = _placeholder
        return module

    def exec_module(self, module):
        pass


if not any(isinstance(finder, _Stubs) for finder in _sys.meta_path):
    _sys.meta_path.insert(0, _Stubs())
__getattr__ = _placeholder
'''

SCRIPT = """
import asyncio, json, sys
from tests.wire.server import OpenAIServer, Reply
import structio as sio
from structio.lm import _litellm

MCP = sys.argv[1]
if MCP == "missing":
    sys.modules["mcp"] = sys.modules["mcp_types"] = None  # `import mcp` fails
server = OpenAIServer().start()
server.default = Reply(content="done")
lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False,
            num_retries=2, backoff=0.01, transport="litellm")
messages = [{"role": "user", "content": "hi"}]
tools = TOOLS


async def astream():
    return [item async for item in lm.astream(messages, tools=tools)][-1]


def results():
    out = {}
    for mode, call in (
        ("call", lambda: lm(messages, tools=tools)),
        ("acall", lambda: asyncio.run(lm.acall(messages, tools=tools))),
        ("stream", lambda: list(lm.stream(messages, tools=tools))[-1]),
        ("astream", lambda: asyncio.run(astream())),
    ):
        before = len(server.requests)
        try:
            text = call().text
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
        sent = server.requests[before:]
        out[mode] = [text, len(sent), all(r.body.get("tools") == tools for r in sent)]
    return out


_litellm.get_litellm()
report = {"flag": _litellm._SKIPS_MCP}
report["skipped"] = results()
report["mcp imported"] = sys.modules.get("mcp") is not None
# A litellm that does not read `_skip_mcp_handler`: its gateway check runs on every call.
_litellm._SKIPS_MCP = False
report["checked"] = results()
report["mcp imported after"] = sys.modules.get("mcp") is not None
server.stop()
print(json.dumps(report))
"""


def run_litellm(mcp: str, tmp_path: Path) -> dict[str, Any]:
    """Run `SCRIPT` in a fresh interpreter with ``mcp`` "missing" or "stub" (importable)."""
    paths = [str(ROOT)]
    if mcp == "stub":
        (tmp_path / "stub" / "mcp").mkdir(parents=True)
        (tmp_path / "stub" / "mcp" / "__init__.py").write_text(STUB, encoding="utf-8")
        (tmp_path / "stub" / "mcp_types").mkdir()
        (tmp_path / "stub" / "mcp_types" / "__init__.py").write_text(
            "from mcp import __getattr__\n", encoding="utf-8"
        )
        paths.insert(0, str(tmp_path / "stub"))  # before any real install of the package
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    script = f"TOOLS = {TOOLS!r}\n" + textwrap.dedent(SCRIPT)
    done = subprocess.run(
        [sys.executable, "-c", script, mcp],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


MODES = ("call", "acall", "stream", "astream")


def test_litellm_tools_without_the_mcp_package(tmp_path: Path) -> None:
    report = run_litellm("missing", tmp_path)
    assert report["flag"] is True  # litellm 1.106 reads _skip_mcp_handler
    # Skipping the gateway check: each request goes out once, tools and all.
    assert report["skipped"] == {mode: ["done", 1, True] for mode in MODES}
    assert report["mcp imported"] is False
    # Without the skip, litellm up to 1.106 imports `mcp` for its gateway check and fails
    # before any request: said plainly, never retried (acompletion wraps the ImportError as
    # a connection error). Later releases no longer import it for function tools, and the
    # request goes out as it does with the skip. Either way, every mode does the same.
    outcomes = {tuple(report["checked"][mode]) for mode in MODES}
    assert len(outcomes) == 1, report["checked"]
    ((text, sent, with_tools),) = outcomes
    if sent:
        assert (text, sent, with_tools) == ("done", 1, True)
    else:
        assert text.startswith("ConfigurationError: litellm "), text
        assert "imports its MCP gateway for every request with tools=" in text
        assert "pip install mcp, or use transport='direct'" in text


def test_litellm_tools_with_the_mcp_package_importable(tmp_path: Path) -> None:
    report = run_litellm("stub", tmp_path)
    assert report["flag"] is True
    assert report["skipped"] == {mode: ["done", 1, True] for mode in MODES}
    assert report["mcp imported"] is False  # skipped: litellm never imported it
    # Without the skip, litellm's gateway check (which imports `mcp` up to litellm 1.106)
    # finds no MCP tool among function tools, and sends the request as it would have anyway.
    assert report["checked"] == {mode: ["done", 1, True] for mode in MODES}


# -- log probabilities ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["call", "acall", "stream", "astream"])
def test_logprobs_asked_for_are_kept(server: OpenAIServer, make_lm: MakeLM, mode: str) -> None:
    server.reply(Reply("The answer is 4.", chunk_size=4))
    lm = make_lm(logprobs=True, top_logprobs=1)
    if mode == "call":
        response = lm(QUESTION)
    elif mode == "acall":
        response = asyncio.run(lm.acall(QUESTION))
    else:
        response = last_response((streamed if mode == "stream" else astreamed)(lm, QUESTION))
    assert server.requests[0].body["logprobs"] is True
    (completion,) = response.completions
    assert completion.logprobs is not None
    assert [entry["token"] for entry in completion.logprobs] == ["The ", "answ", "er i", "s 4."]
    assert [entry["logprob"] for entry in completion.logprobs] == [0.0, -0.5, -1.0, 0.0]
    assert [top["token"] for top in completion.logprobs[1]["top_logprobs"]] == ["answ"]


def test_logprobs_survive_the_cache_and_are_none_when_not_asked_for(
    server: OpenAIServer, make_lm: MakeLM, tmp_path: Path
) -> None:
    server.reply(Reply("Four.", chunk_size=2), Reply("Four."))
    cache = sio.ResponseCache(tmp_path / "cache")
    first = make_lm(cache=cache, logprobs=True)(QUESTION)
    cache.close()
    hit = make_lm(cache=sio.ResponseCache(tmp_path / "cache"), logprobs=True)(QUESTION)
    assert hit.cached
    assert hit[0].logprobs == first[0].logprobs
    assert [entry["token"] for entry in hit[0].logprobs or ()] == ["Fo", "ur", "."]
    assert make_lm(cache=False)(QUESTION)[0].logprobs is None
