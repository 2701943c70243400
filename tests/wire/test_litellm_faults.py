"""The litellm transport held to what the direct one does (tests/wire/test_transport_faults.py).

Real litellm calls (``openai/test`` at a loopback ``api_base``; Anthropic's Messages API,
Gemini's generateContent and the providers sent through the same handler of litellm's,
under "other providers") against the loopback server:
a redirect is refused, never followed (the prompt would go to the host it names); a
response is read only up to `MAX_RESPONSE_BYTES` decompressed, a gzip bomb included, with
memory to match; a stream is read whole however often one chunk repeats; and a body or a
chunk of the wrong shape ends in structio's error tree. Each runs sync and async, called
and streamed. The limit is lowered here so the bodies stay small.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import structio as sio
from structio.lm import _exchange
from structio.lm._litellm import get_litellm
from tests.wire.server import OpenAIServer, Reply, gzip_bomb

MakeLM = Callable[..., sio.LM]
HI = [{"role": "user", "content": "hi"}]
MODES = ["call", "acall", "stream", "astream"]


def litellm_lm(server: OpenAIServer, **options: Any) -> sio.LM:
    settings: dict[str, Any] = {
        "api_base": server.base_url,
        "api_key": "k",
        "cache": False,
        "num_retries": 0,
        "transport": "litellm",
    }
    return sio.LM("openai/test", **{**settings, **options})


def ask(lm: sio.LM, mode: str) -> sio.LMResponse:
    """One request made the way ``mode`` says; the response (a stream's last item)."""
    if mode == "call":
        return lm(HI)
    if mode == "acall":
        return asyncio.run(lm.acall(HI))
    if mode == "stream":
        with lm.stream(HI) as pieces:
            return list(pieces)[-1]

    async def read() -> Any:
        async with lm.astream(HI) as pieces:
            return [item async for item in pieces][-1]

    return asyncio.run(read())  # type: ignore[no-any-return]


@pytest.fixture
def other() -> Iterator[OpenAIServer]:
    """A second server: where a redirect points."""
    srv = OpenAIServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_exchange, "MAX_RESPONSE_BYTES", 1024 * 1024)
    return 1024 * 1024


# -- redirects ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("mode", MODES)
def test_a_redirect_to_another_host_is_refused_never_followed(
    server: OpenAIServer, other: OpenAIServer, mode: str, status: int
) -> None:
    # Another host ("localhost", not 127.0.0.1) and another port: httpx strips the key
    # header there, but a 307 or 308 sends the body, the prompt, on.
    target = other.base_url.replace("127.0.0.1", "localhost") + "/chat/completions?key=x"
    server.reply(Reply(status=status, headers={"Location": target}))
    with pytest.raises(sio.ServerError) as raised:
        ask(litellm_lm(server), mode)
    assert other.requests == []
    text = str(raised.value)
    where = target.split("?")[0]
    assert f"HTTP {status}: a redirect to {where}, not followed" in text, text
    assert "key=x" not in text  # the query (where a key may travel) is not repeated
    assert raised.value.status_code == status


def test_both_transports_refuse_a_redirect_in_the_same_words(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(status=307, headers={"Location": "/elsewhere/chat/completions"}))
    with pytest.raises(sio.ServerError) as raised:
        make_lm(num_retries=0)(HI)
    assert [request.path for request in server.requests] == ["/v1/chat/completions"]
    # A relative Location is named as it came (the direct transport) or where it points.
    assert "HTTP 307: a redirect to " in str(raised.value)
    assert "/elsewhere/chat/completions, not followed" in str(raised.value)


def test_the_guard_changes_nothing_of_litellm_for_anyone_else(server: OpenAIServer) -> None:
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, HTTPHandler

    litellm = get_litellm()
    wrapper = litellm.CustomStreamWrapper
    check, limit = wrapper.raise_on_model_repetition, litellm.REPEATED_STREAMING_CHUNK_LIMIT
    handlers = {cls: dict(vars(cls)) for cls in (HTTPHandler, AsyncHTTPHandler)}
    shared = litellm.module_level_client.client
    server.reply(Reply(content="abc" * 150, chunk_size=3))
    ask(litellm_lm(server), "stream")
    ask(litellm_lm(server), "acall")
    for mode in MODES:  # through litellm's own handler, one of structio's
        server.reply(Reply(raw_body=ANTHROPIC.body(mode)))
        ask(provider_lm(server, ANTHROPIC), mode)
    # litellm's shared clients, its settings and its stream class are as they were.
    assert (litellm.client_session, litellm.aclient_session) == (None, None)
    assert limit == litellm.REPEATED_STREAMING_CHUNK_LIMIT
    assert wrapper.raise_on_model_repetition is check
    # Its handler classes too, and the client its own handler sends with.
    assert {cls: dict(vars(cls)) for cls in handlers} == handlers
    assert litellm.module_level_client.client is shared
    assert shared.follow_redirects
    assert not shared.event_hooks["response"]


# -- repeated chunks ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_of_one_chunk_repeated_is_read_whole(server: OpenAIServer, mode: str) -> None:
    # litellm raised "The model is repeating the same chunk" (a 500, then retried) once 100
    # chunks in a row carried the same text of 3 characters or more: the failure of a
    # 100,000-chunk stream, which starts at chunk 100. litellm takes 1 to 2 ms a chunk (its
    # logging of each), so 1,000 chunks stand in for 100,000 here.
    count = 1000
    assert count > get_litellm().REPEATED_STREAMING_CHUNK_LIMIT
    server.reply(Reply(content="abc" * count, chunk_size=3))
    response = ask(litellm_lm(server), mode)
    assert response.text == "abc" * count
    log = server.streams[-1]
    assert log.completed  # every chunk was sent, and read
    assert log.sent == log.total


# -- the response's size ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_gzip_bomb_is_read_only_up_to_the_limit(
    server: OpenAIServer, small_limit: int, mode: str
) -> None:
    size = 64 * small_limit
    body = gzip_bomb(size)
    assert len(body) < small_limit // 8  # small on the wire, 64 times the limit unpacked
    lm = litellm_lm(server)
    ask(lm, mode)  # litellm's first call of a kind sets itself up: not counted
    server.reply(Reply(raw_body=body, headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        with pytest.raises(sio.ServerError, match="MiB") as raised:
            ask(lm, mode)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "decompressed" in str(raised.value)
    # Undone a piece at a time and stopped at the limit: never the whole body in memory.
    assert peak < 8 * small_limit, peak


@pytest.mark.parametrize("mode", MODES)
def test_a_large_plain_body_is_refused_too(
    server: OpenAIServer, small_limit: int, mode: str
) -> None:
    server.reply(Reply(raw_body=b'{"x": "' + b"a" * (2 * small_limit) + b'"}'))
    with pytest.raises(sio.ServerError, match="MiB"):
        ask(litellm_lm(server), mode)


def completion_body(text: str) -> bytes:
    return json.dumps(
        {"choices": [{"message": {"content": text}, "finish_reason": "stop"}]}
    ).encode()


def raw_deflate(data: bytes) -> bytes:
    """Deflate without zlib's header, as some servers send ``Content-Encoding: deflate``."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", raw_deflate),
        ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data))),
    ],
    ids=["gzip", "deflate", "raw deflate", "gzip twice"],
)
def test_a_compressed_answer_under_the_limit_is_read(
    server: OpenAIServer, small_limit: int, encoding: str, pack: Callable[[bytes], bytes]
) -> None:
    # 220 KB: many pieces of the decompressor's output. Two encodings at once are left to
    # httpx's own decoders, still counted.
    text = "the answer " * 20_000
    reply = Reply(raw_body=pack(completion_body(text)), headers={"Content-Encoding": encoding})
    server.reply(reply, reply)
    assert ask(litellm_lm(server), "call").text == text
    assert ask(litellm_lm(server), "acall").text == text


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_corrupt_compressed_body_is_a_server_error(server: OpenAIServer, encoding: str) -> None:
    server.reply(Reply(raw_body=b"not compressed at all", headers={"Content-Encoding": encoding}))
    with pytest.raises(sio.ServerError, match="corrupt"):
        litellm_lm(server)(HI)


def test_a_bomb_in_two_encodings_is_stopped_too(server: OpenAIServer, small_limit: int) -> None:
    body = gzip.compress(gzip_bomb(16 * small_limit))
    server.reply(Reply(raw_body=body, headers={"Content-Encoding": "gzip, gzip"}))
    with pytest.raises(sio.ServerError, match="MiB"):
        litellm_lm(server)(HI)


# -- bodies and chunks of the wrong shape -------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"choices": 5}',
        b'{"choices": [{"message": {"content": "x", "tool_calls": 3}}]}',
        b'{"choices": "abc"}',
        b'{"choices": [{"message": 7}]}',
        b'{"choices": [',
        b"<html>Bad gateway</html>",
        b"[]",
        b"null",
        b"",
    ],
)
@pytest.mark.parametrize("mode", ["call", "acall"])
def test_a_body_of_the_wrong_shape_is_structios_error(
    server: OpenAIServer, body: bytes, mode: str
) -> None:
    server.reply(Reply(raw_body=body))
    with pytest.raises(sio.LMError):  # never a TypeError, KeyError or AttributeError
        ask(litellm_lm(server), mode)


@pytest.mark.parametrize(
    "chunk",
    [
        b'{"choices": 5}',
        b'{"choices": [{"index": "x", "delta": {"content": "a"}}]}',
        b'{"choices": [{"index": 0, "delta": {"tool_calls": 5}}]}',
        b'{"choices": [{"index": 0, "delta": 3}]}',
        b'{"choices": [',
        b"[1, 2]",
    ],
)
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_streamed_chunk_of_the_wrong_shape_is_structios_error(
    server: OpenAIServer, chunk: bytes, mode: str
) -> None:
    server.reply(Reply(raw_body=b"data: " + chunk + b"\n\ndata: [DONE]\n\n"))
    with pytest.raises(sio.LMError):
        ask(litellm_lm(server), mode)


# -- other providers: litellm's own handler, given one of structio's ----------------------------


@dataclass(frozen=True)
class Provider:
    """A provider litellm sends through its handler: the model, and its answer as sent."""

    model: str
    answer: bytes
    streamed: bytes

    @property
    def name(self) -> str:
        return self.model.split("/")[0]

    def body(self, mode: str) -> bytes:
        return self.streamed if "stream" in mode else self.answer


def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, each named by its type (as Anthropic sends them)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


_MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude"}
ANTHROPIC = Provider(
    "anthropic/claude-3-5-haiku-latest",
    json.dumps(
        {
            **_MESSAGE,
            "content": [{"type": "text", "text": "hello"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 1},
        }
    ).encode(),
    sse(
        [
            {
                "type": "message_start",
                "message": {
                    **_MESSAGE,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 3, "output_tokens": 0},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hel"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "lo"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
            {"type": "message_stop"},
        ]
    ),
)


def gemini_part(text: str, **more: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, **more}]}


_GEMINI_USAGE = {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4}
GEMINI = Provider(
    "gemini/gemini-1.5-flash",
    json.dumps(
        {**gemini_part("hello", finishReason="STOP"), "usageMetadata": _GEMINI_USAGE}
    ).encode(),
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"
        for chunk in [
            gemini_part("hel"),
            {**gemini_part("lo", finishReason="STOP"), "usageMetadata": _GEMINI_USAGE},
        ]
    ),
)

PROVIDERS = [ANTHROPIC, GEMINI]
#: Where litellm sends each (streamed or not), from an ``api_base`` of the server's address.
PATHS = {
    ("anthropic", False): "/v1/messages",
    ("anthropic", True): "/v1/messages",
    ("gemini", False): "/models/gemini-1.5-flash:generateContent",
    ("gemini", True): "/models/gemini-1.5-flash:streamGenerateContent?alt=sse",
}


def provider_lm(server: OpenAIServer, provider: Provider) -> sio.LM:
    """An LM of ``provider`` at the server (litellm adds each provider's own path)."""
    base = server.base_url.removesuffix("/v1")
    return sio.LM(
        provider.model, api_base=base, api_key="x", cache=False, num_retries=0, transport="litellm"
    )


def named(provider: Provider) -> str:
    return provider.name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=named)
def test_another_providers_answer_is_read_through_the_guard(
    server: OpenAIServer, provider: Provider, mode: str
) -> None:
    # Twice: the pooled client outlives each call's handler (litellm 1.83 closes a
    # handler's client when the handler goes).
    server.reply(Reply(raw_body=provider.body(mode)), Reply(raw_body=provider.body(mode)))
    lm = provider_lm(server, provider)
    assert [ask(lm, mode).text for _ in range(2)] == ["hello", "hello"]
    path = PATHS[provider.name, "stream" in mode]
    assert [request.path for request in server.requests] == [path, path]


@pytest.mark.parametrize("status", [307, 308])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=named)
def test_another_providers_redirect_is_refused_never_followed(
    server: OpenAIServer, other: OpenAIServer, provider: Provider, mode: str, status: int
) -> None:
    target = other.base_url.replace("127.0.0.1", "localhost") + "/v1/messages"
    server.reply(Reply(status=status, headers={"Location": target}))
    with pytest.raises(sio.ServerError) as raised:
        ask(provider_lm(server, provider), mode)
    assert other.requests == []
    assert f"HTTP {status}: a redirect to {target}, not followed" in str(raised.value)
    assert raised.value.status_code == status


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=named)
def test_another_providers_gzip_bomb_is_read_only_up_to_the_limit(
    server: OpenAIServer, small_limit: int, provider: Provider, mode: str
) -> None:
    body = gzip_bomb(64 * small_limit)
    lm = provider_lm(server, provider)
    server.reply(Reply(raw_body=provider.body(mode)))
    ask(lm, mode)  # litellm's first call of a kind sets itself up: not counted
    server.reply(Reply(raw_body=body, headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        with pytest.raises(sio.ServerError, match="MiB") as raised:
            ask(lm, mode)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "decompressed" in str(raised.value)
    assert peak < 8 * small_limit, peak


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", PROVIDERS, ids=named)
def test_another_providers_large_plain_body_is_refused(
    server: OpenAIServer, small_limit: int, provider: Provider, mode: str
) -> None:
    server.reply(Reply(raw_body=b'{"x": "' + b"a" * (2 * small_limit) + b'"}'))
    with pytest.raises(sio.ServerError, match="MiB"):
        ask(provider_lm(server, provider), mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "model",
    [
        "mistral/mistral-small-latest",
        "deepseek/deepseek-chat",
        "xai/grok-3",
        "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct",
    ],
)
def test_the_providers_of_the_same_handler_are_guarded_too(
    server: OpenAIServer, other: OpenAIServer, model: str, mode: str
) -> None:
    # OpenAI-shaped answers, sent by litellm's handler (not the OpenAI SDK).
    lm = sio.LM(
        model,
        api_base=server.base_url,
        api_key="x",
        cache=False,
        num_retries=0,
        transport="litellm",
    )
    server.reply(Reply(content="hello"))
    assert ask(lm, mode).text == "hello"
    target = other.base_url.replace("127.0.0.1", "localhost") + "/chat/completions"
    server.reply(Reply(status=307, headers={"Location": target}))
    with pytest.raises(sio.ServerError, match="not followed"):
        ask(lm, mode)
    assert other.requests == []
