"""What a server sends back never escapes structio's error tree, nor its memory bound.

A response is read up to `MAX_RESPONSE_BYTES` decompressed (a gzip bomb stops there); a body
or a streamed chunk of the wrong shape is the server's fault (`ServerError`), never a bare
`TypeError`; a redirect to another host is not followed. The limit is lowered here so the
bodies stay small.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import structio as sio
from structio.lm import _exchange
from tests.wire.server import OpenAIServer, Reply, gzip_bomb

MakeLM = Callable[..., sio.LM]
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_exchange, "MAX_RESPONSE_BYTES", 1024 * 1024)
    return 1024 * 1024


@pytest.mark.parametrize("stream", [False, True])
def test_a_compressed_body_is_read_only_up_to_the_limit(
    server: OpenAIServer, small_limit: int, stream: bool
) -> None:
    body = gzip_bomb(8 * small_limit)
    assert len(body) < small_limit // 8  # small on the wire, eight times the limit unpacked
    server.reply(Reply(raw_body=body, headers={"Content-Encoding": "gzip"}))
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False, num_retries=0)

    def call() -> None:
        if stream:
            with lm.stream(HI) as pieces:
                list(pieces)
        else:
            lm(HI)

    with pytest.raises(sio.ServerError, match="MiB") as raised:
        call()
    assert "decompressed" in str(raised.value)


def test_a_large_plain_body_is_refused_too(server: OpenAIServer, small_limit: int) -> None:
    server.reply(Reply(raw_body=b'{"x": "' + b"a" * (2 * small_limit) + b'"}'))
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False, num_retries=0)
    with pytest.raises(sio.ServerError, match="MiB"):
        lm(HI)


@pytest.mark.parametrize(
    "body",
    [
        b'{"choices": 5}',
        b'{"choices": [{"message": {"content": "x", "tool_calls": 3}}]}',
        b'{"choices": "abc"}',
    ],
)
def test_a_body_of_the_wrong_shape_is_a_server_error(
    server: OpenAIServer, make_lm: MakeLM, body: bytes
) -> None:
    server.reply(Reply(raw_body=body))
    with pytest.raises(sio.LMError):  # never a TypeError or AttributeError
        make_lm(num_retries=0)(HI)


@pytest.mark.parametrize(
    "chunk",
    [
        b'{"choices": 5}',
        b'{"choices": [{"index": "x", "delta": {"content": "a"}}]}',
        b'{"choices": [{"index": 0, "delta": {"tool_calls": 5}}]}',
    ],
)
def test_a_streamed_chunk_of_the_wrong_shape_is_a_server_error(
    server: OpenAIServer, chunk: bytes
) -> None:
    server.reply(Reply(raw_body=b"data: " + chunk + b"\n\ndata: [DONE]\n\n"))
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False, num_retries=0)
    with pytest.raises(sio.ServerError, match=r"chunk|choice"), lm.stream(HI) as pieces:
        list(pieces)


def test_a_redirect_to_another_host_is_not_followed(server: OpenAIServer) -> None:
    other = OpenAIServer().start()
    try:
        target = other.base_url.replace("127.0.0.1", "localhost") + "/chat/completions"
        server.reply(Reply(status=307, headers={"Location": target}))
        lm = sio.LM(
            "openai/test", api_base=server.base_url, api_key="k", cache=False, num_retries=0
        )
        with pytest.raises(sio.LMError):
            lm(HI)
        assert other.requests == []  # the prompt (and the key) never reached the other host
    finally:
        other.stop()


def test_a_usage_of_the_wrong_shape_is_no_usage_never_a_failure(server: OpenAIServer) -> None:
    # The answer is whole; only the count is unreadable: the call answers, with zero tokens.
    server.reply(
        Reply(
            raw_body=b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], '
            b'"usage": 7}'
        )
    )
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False, num_retries=0)
    response = lm(HI)
    assert (response.text, response.usage.total_tokens) == ("x", 0)
    chunk = b'{"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}]}'
    server.reply(Reply(raw_body=b"data: " + chunk + b'\n\ndata: {"usage": "lots"}\n\n'))
    with lm.stream(HI) as pieces:
        streamed = list(pieces)[-1]
    assert (streamed.text, streamed.usage.total_tokens) == ("x", 0)
