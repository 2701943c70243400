"""A loopback OpenAI-compatible server that streams, for `streaming.py`: standard library only.

Run as a script (``python _loopback_stream.py [--chunk-size N]``) it listens on
``127.0.0.1`` (a free port), prints its base URL (``http://127.0.0.1:PORT/v1``) on one
line of standard output, and serves until its standard input closes (its parent ended)
or it is sent SIGTERM. Like `_loopback.py` it runs in its own process, so its CPU time
is never counted in the measuring process's ``time.process_time()``, and it never holds
that process's GIL.

Every ``POST .../chat/completions`` is answered, by default, with `CONTENT`, a ChatAdapter
answer for ``question -> reasoning, answer`` (a reasoning of about 1,500 characters, a
short answer). A request whose body has ``"stream": true`` gets it as Server-Sent Events
in OpenAI's ``chat.completion.chunk`` shape, over chunked transfer encoding (one HTTP
chunk per event), keep-alive:

1. a first chunk whose delta is ``{"role": "assistant", "content": ""}``;
2. the text in content chunks of ``--chunk-size`` characters (4 by default: about a
   token each);
3. a chunk with an empty delta and ``finish_reason: "stop"``;
4. when ``stream_options.include_usage`` is set, a usage chunk (``"choices": []``);
5. ``data: [DONE]``.

The model name picks the answer (``stream_scaling.py``): with ``-long<N>`` in it,
`long_content` (a ``question -> answer`` answer whose text is one unbroken line of *N*
characters); with ``-list<N>``, `list_content` (a ``question -> items: list[str]`` answer
of *N* items, written as a JSON array on one line); else `CONTENT`.

The model name picks a delay per request, so that one server serves every measurement:
``test-delay-2ms`` (any ``-delay-<float>ms`` suffix) sends content chunk *i* at
``start + (i + 1) * 2 ms``: deadlines from the start, so that timer overshoot does not add
up and the stream's schedule is the same for every client. Without a suffix the whole
stream is written at once. A request without ``"stream": true`` gets the whole
``chat.completion``. ``GET /_stats`` answers ``{"requests": N}``, the chat completions
served so far, so a benchmark can check that each call made exactly one request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from typing import Any

import _loopback
from _loopback import _BAD, _NOT_FOUND, _response, take_request

# Plain prose: no "[[" (a marker's opening), no blank line (where a ChatAdapter section
# could end early), long enough that streaming it takes hundreds of chunks.
REASONING = (
    "Sunlight looks white but holds every visible wavelength, from red near 700 nanometres "
    "down to violet near 400. On its way through the atmosphere it meets molecules of "
    "nitrogen and oxygen that are far smaller than those wavelengths. Light meeting such "
    "small particles is scattered in every direction with a strength that grows as the "
    "inverse fourth power of the wavelength: Rayleigh scattering. Blue light, at about 450 "
    "nanometres, is therefore scattered roughly five times more strongly than red light at "
    "700. Looking at any patch of sky away from the sun, we see light that has been "
    "scattered towards us by the air, and that light is rich in short wavelengths. Violet "
    "is scattered even more than blue, yet the sky does not look violet, for three "
    "reasons. The sun emits less violet than blue to begin with. Part of the violet is "
    "absorbed high in the atmosphere by ozone. And our eyes are much less sensitive to "
    "violet: the three kinds of cone cells respond to the scattered spectrum in a mix that "
    "the brain reads as a pale sky blue. The same physics explains red sunsets. When the "
    "sun is low, its light crosses a far longer path of air before it reaches us, so most "
    "of the blue has been scattered out of the direct beam, and what remains is orange and "
    "red. Clouds, by contrast, are made of droplets much larger than the wavelengths of "
    "light; they scatter all colours about equally and so look white or grey. On the Moon, "
    "with no atmosphere to scatter sunlight, the sky is black even in daytime. So the "
    "colour of our sky is a direct result of the size of air molecules."
)
ANSWER = "Air molecules scatter blue light much more than red (Rayleigh scattering)."
CONTENT = (
    f"[[ ## reasoning ## ]]\n{REASONING}\n\n[[ ## answer ## ]]\n{ANSWER}\n\n[[ ## completed ## ]]"
)
CHUNK_SIZE = 4
_WORDS = "lorem ipsum dolor sit amet, consectetur adipiscing elit "


def long_content(size: int) -> str:
    """A ChatAdapter answer for ``question -> answer``: one unbroken line of ``size`` chars."""
    line = (_WORDS * (size // len(_WORDS) + 1))[:size].strip()
    return f"[[ ## answer ## ]]\n{line}\n\n[[ ## completed ## ]]"


def list_items(count: int) -> list[str]:
    """The items of `list_content`: short sentences, about ten chunks each."""
    return [f"item {i}: {_WORDS[: 20 + i % 17].strip()}" for i in range(count)]


def list_content(count: int) -> str:
    """A ChatAdapter answer for ``question -> items: list[str]`` of ``count`` items."""
    return f"[[ ## items ## ]]\n{json.dumps(list_items(count))}\n\n[[ ## completed ## ]]"


_CONTENT_OF = re.compile(r"-(long|list)(\d+)")


def content_for(model: str) -> str:
    """The answer the model name asks for (see the module's docstring)."""
    chosen = _CONTENT_OF.search(model)
    if chosen is None:
        return CONTENT
    size = int(chosen.group(2))
    return long_content(size) if chosen.group(1) == "long" else list_content(size)


_ID = "chatcmpl-loopback-stream"
_CREATED = 1_700_000_000
_DELAY = re.compile(r"-delay-(\d+(?:\.\d+)?)ms$")
_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n"
    b"connection: keep-alive\r\n\r\n"
)
_LAST_CHUNK = b"0\r\n\r\n"


def pieces(text: str, size: int) -> list[str]:
    """``text`` cut into consecutive pieces of ``size`` characters (the last may be shorter)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _usage(completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": 150,
        "completion_tokens": completion_tokens,
        "total_tokens": 150 + completion_tokens,
    }


def _chunk(model: str, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": _ID,
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": model,
        "system_fingerprint": None,
        "choices": choices,
        **extra,
    }


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def _event(payload: str) -> bytes:
    """One server-sent event as one HTTP chunk."""
    data = f"data: {payload}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(data), data)


def stream_events(model: str, chunk_size: int, include_usage: bool) -> list[bytes]:
    """The HTTP chunks of one streamed answer: the first, one per content piece, the rest.

    The first element is the role chunk, then one element per content piece; the last
    element holds the finish chunk, the usage chunk if asked for, ``[DONE]`` and the
    chunked body's end, so that the server can pause before each content piece only.
    """
    texts = pieces(content_for(model), chunk_size)
    events = [_event(json.dumps(_chunk(model, _delta({"role": "assistant", "content": ""}))))]
    events += [_event(json.dumps(_chunk(model, _delta({"content": text})))) for text in texts]
    tail = _event(json.dumps(_chunk(model, _delta({}, "stop"))))
    if include_usage:
        tail += _event(json.dumps(_chunk(model, [], usage=_usage(len(texts)))))
    events.append(tail + _event("[DONE]") + _LAST_CHUNK)
    return events


def _completion(model: str, chunk_size: int) -> bytes:
    body = {
        "id": _ID,
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content_for(model)},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(len(pieces(content_for(model), chunk_size))),
        "system_fingerprint": None,
    }
    return _response("200 OK", json.dumps(body).encode())


class _Stats:
    requests = 0


class _Server:
    """What every connection shares: the chunk size and the answers built so far."""

    def __init__(self, chunk_size: int) -> None:
        self.chunk_size = chunk_size
        self._events: dict[tuple[str, bool], list[bytes]] = {}
        self._whole: dict[tuple[str, bool], bytes] = {}
        self._completions: dict[str, bytes] = {}

    def events(self, model: str, include_usage: bool) -> list[bytes]:
        """The stream's HTTP chunks, built once per model name and usage setting."""
        key = (model, include_usage)
        if key not in self._events:
            self._events[key] = stream_events(model, self.chunk_size, include_usage)
        return self._events[key]

    def whole(self, model: str, include_usage: bool) -> bytes:
        """The whole streamed response in one piece, for a stream without a delay."""
        key = (model, include_usage)
        if key not in self._whole:
            self._whole[key] = _STREAM_HEAD + b"".join(self.events(model, include_usage))
        return self._whole[key]

    def completion(self, model: str) -> bytes:
        """The non-streamed response."""
        if model not in self._completions:
            self._completions[model] = _completion(model, self.chunk_size)
        return self._completions[model]


class _Connection(asyncio.Protocol):
    """One client connection: requests answered in order, a delayed stream by a task.

    While a delayed stream is being written, further requests that arrive on the same
    connection (pipelined) wait in the buffer, so that responses never interleave.
    """

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.streaming: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        # A client that stops reading early closes the connection: stop writing to it.
        if self.streaming is not None:
            self.streaming.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._serve()

    def _serve(self) -> None:
        try:
            while self.streaming is None and self._one_request():
                pass
        except (ValueError, IndexError, KeyError, TypeError, AttributeError):
            if self.transport is not None:
                self.transport.write(_BAD)
                self.transport.close()

    def _one_request(self) -> bool:
        """Answer the first complete request in the buffer; False if there is none."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return False
        request = take_request(self.buffer)
        if request is None:
            return False
        method, path, close = request.method, request.path, request.close
        if method == "POST" and path.endswith("/chat/completions"):
            body = json.loads(request.body)
            _Stats.requests += 1
            model = str(body.get("model", "test"))
            if not body.get("stream"):
                transport.write(self.server.completion(model))
            else:
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                delay = _DELAY.search(model)
                if delay is None:
                    transport.write(self.server.whole(model, include_usage))
                else:
                    events = self.server.events(model, include_usage)
                    self.streaming = asyncio.ensure_future(
                        self._stream(events, float(delay.group(1)) / 1000, close)
                    )
                    return False
        elif method == "GET" and path == "/_stats":
            transport.write(_response("200 OK", json.dumps({"requests": _Stats.requests}).encode()))
        else:
            transport.write(_NOT_FOUND)
        if close:
            transport.close()
            return False
        return True

    async def _stream(self, events: list[bytes], delay: float, close: bool) -> None:
        """Write a stream, each content piece at its deadline; then serve what waited."""
        transport = self.transport
        assert transport is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        transport.write(_STREAM_HEAD + events[0])
        for i, event in enumerate(events[1:-1]):
            wait = start + (i + 1) * delay - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if transport.is_closing():
                return
            transport.write(event)
        transport.write(events[-1])
        self.streaming = None
        if close:
            transport.close()
        else:
            self._serve()


async def serve(chunk_size: int) -> None:
    """Listen, print the base URL, and serve until stdin closes or SIGTERM arrives."""
    shared = _Server(chunk_size)
    await _loopback.serve(lambda: _Connection(shared))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--chunk-size", type=int, default=CHUNK_SIZE, help="characters per content chunk"
    )
    asyncio.run(serve(parser.parse_args().chunk_size))
