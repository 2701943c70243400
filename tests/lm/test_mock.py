"""`MockTransport`: the LM's retries, cache and streams tested without a socket."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.lm import MockRequest, MockTransport, ResponseCache
from structio.lm import lm as lm_module
from structio.lm.types import Completion, LMResponse, Usage

MESSAGES = [{"role": "user", "content": "Hi?"}]


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between attempts, recorded instead of slept."""
    recorded: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", recorded.append)

    async def asleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", asleep)
    return recorded


def failing(*errors: BaseException, then: Any = "ok") -> MockTransport:
    """A transport that fails with ``errors`` in turn, then answers ``then``."""
    left = list(errors)

    def handler(request: MockRequest) -> Any:
        return left.pop(0) if left else then

    return MockTransport(handler)


def make(transport: MockTransport, **options: Any) -> sio.LM:
    settings: dict[str, Any] = {"cache": False, "backoff": 1.0, "max_backoff": 60.0}
    settings.update(options)
    return sio.LM("openai/test", transport=transport, **settings)


def test_replies_of_every_kind() -> None:
    texts = MockTransport(lambda request: f"echo {request.text}")
    assert make(texts)(MESSAGES).text == "echo Hi?"
    whole = LMResponse((Completion("a", "stop"), Completion("b", "length")), model="openai/test")
    response = make(MockTransport(lambda request: whole))(MESSAGES)
    assert [c.text for c in response] == ["a", "b"]
    data = {
        "choices": [{"message": {"role": "assistant", "content": "dict"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    response = make(MockTransport(lambda request: data))(MESSAGES)
    assert (response.text, response.usage.prompt_tokens) == ("dict", 3)
    with pytest.raises(sio.ConfigurationError, match="not a int"):
        make(MockTransport(lambda request: 3))(MESSAGES)  # type: ignore[arg-type,return-value]


def test_a_retryable_error_is_retried_with_backoff(waits: list[float]) -> None:
    transport = failing(
        sio.ServerError("boom", model="openai/test"),
        sio.ServerError("boom", model="openai/test"),
    )
    response = make(transport, num_retries=3)(MESSAGES)
    assert response.text == "ok"
    assert [r.attempt for r in transport.requests] == [1, 2, 3]
    assert len(waits) == 2
    # Exponential, with up to a quarter of jitter.
    assert 1.0 <= waits[0] <= 1.25
    assert 2.0 <= waits[1] <= 2.5


def test_retry_after_is_honoured_up_to_max_backoff(waits: list[float]) -> None:
    transport = failing(
        sio.RateLimitError("slow down", model="openai/test", retry_after=7.0),
        sio.RateLimitError("slow down", model="openai/test", retry_after=600.0),
    )
    assert make(transport, num_retries=2)(MESSAGES).text == "ok"
    assert waits == [7.0, 60.0]


def test_retries_run_out(waits: list[float]) -> None:
    transport = failing(*[sio.ServerError("boom", model="openai/test")] * 5)
    with pytest.raises(sio.ServerError):
        make(transport, num_retries=2)(MESSAGES)
    assert len(transport.requests) == 3
    assert len(waits) == 2


def test_a_non_retryable_error_is_raised_once(waits: list[float]) -> None:
    transport = failing(sio.AuthenticationError("no key", model="openai/test"))
    with pytest.raises(sio.AuthenticationError, match="no key"):
        make(transport)(MESSAGES)
    assert len(transport.requests) == 1
    assert waits == []


def test_raw_exceptions_are_translated_or_raised(waits: list[float]) -> None:
    transport = failing(TimeoutError("read timed out"), ConnectionResetError("reset"))
    assert make(transport)(MESSAGES).text == "ok"
    assert len(waits) == 2
    unknown = failing(ValueError("a bug in the handler"))
    with pytest.raises(ValueError, match="a bug in the handler"):
        make(unknown)(MESSAGES)
    assert len(unknown.requests) == 1

    def translate(exc: BaseException, model: str, attempt: int) -> sio.LMError:
        return sio.RateLimitError(f"{model}: {exc}", model=model, retry_after=0.5)

    custom = MockTransport(lambda request: KeyError("x") if request.attempt == 1 else "ok")
    custom.translate = translate
    assert make(custom)(MESSAGES).text == "ok"
    assert waits[-1] == 0.5


def test_a_credential_is_redacted_from_a_translated_error(waits: list[float]) -> None:
    transport = failing(*[TimeoutError("timed out for sk-very-secret")] * 2)
    with pytest.raises(sio.LMTimeoutError) as info:
        make(transport, api_key="sk-very-secret", num_retries=1)(MESSAGES)
    assert "sk-very-secret" not in str(info.value)
    assert "[redacted]" in str(info.value)


def test_a_second_call_is_a_cache_hit(tmp_path: Path) -> None:
    transport = MockTransport(lambda request: f"answer {len(transport.requests)}")
    lm = make(transport, cache=ResponseCache(tmp_path))
    first = lm(MESSAGES)
    second = lm(MESSAGES)
    assert (first.text, first.cached) == ("answer 1", False)
    assert (second.text, second.cached) == ("answer 1", True)
    assert len(transport.requests) == 1
    assert lm(MESSAGES, temperature=0.5).text == "answer 2"  # another request


def test_a_stream_comes_in_pieces_then_the_response() -> None:
    usage = Usage(prompt_tokens=5, completion_tokens=4)
    reply = LMResponse(
        (Completion("Hello, world!", "stop", reasoning="think"), Completion("two", "length")),
        model="openai/test",
        usage=usage,
    )
    transport = MockTransport(lambda request: reply, piece_size=5)
    items = list(make(transport).stream(MESSAGES))
    assert items[:-1] == ["Hello", ", wor", "ld!"]
    response = items[-1]
    assert isinstance(response, LMResponse)
    assert [(c.text, c.finish_reason) for c in response] == [
        ("Hello, world!", "stop"),
        ("two", "length"),
    ]
    assert response[0].reasoning == "think"
    assert response.usage == usage
    assert transport.requests[0].stream


def test_a_stream_asked_as_a_call_is_read_whole() -> None:
    transport = MockTransport(lambda request: "whole text", piece_size=2)
    assert make(transport)(MESSAGES, stream=True).text == "whole text"
    assert transport.requests[0].stream


def test_a_stream_with_tool_calls_is_assembled() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    reply = LMResponse((Completion("", "tool_calls", tool_calls=(call,)),), model="openai/test")
    items = list(make(MockTransport(lambda request: reply)).stream(MESSAGES))
    (response,) = items
    assert isinstance(response, LMResponse)
    assert response[0].tool_calls == (call,)


def test_a_failed_stream_is_retried_before_any_text(waits: list[float]) -> None:
    transport = failing(sio.ServerError("boom", model="openai/test"), then="fine")
    items = list(make(transport).stream(MESSAGES))
    assert "".join(i for i in items if isinstance(i, str)) == "fine"
    assert [r.attempt for r in transport.requests] == [1, 2]
    assert len(waits) == 1


def test_a_cached_stream_is_replayed(tmp_path: Path) -> None:
    transport = MockTransport(lambda request: "x" * 100, piece_size=10)
    lm = make(transport, cache=ResponseCache(tmp_path))
    first = list(lm.stream(MESSAGES))
    assert len(first) == 11
    again = list(lm.stream(MESSAGES))
    assert "".join(i for i in again if isinstance(i, str)) == "x" * 100
    last = again[-1]
    assert isinstance(last, LMResponse)
    assert last.cached
    assert len(transport.requests) == 1


def test_the_async_forms(tmp_path: Path, waits: list[float]) -> None:
    transport = failing(sio.ServerError("boom", model="openai/test"), then="async ok")
    lm = make(transport, cache=ResponseCache(tmp_path))

    async def main() -> tuple[LMResponse, LMResponse, list[Any]]:
        first = await lm.acall(MESSAGES)
        second = await lm.acall(MESSAGES)
        streamed = [item async for item in lm.astream(MESSAGES, temperature=1)]
        return first, second, streamed

    first, second, streamed = asyncio.run(main())
    assert (first.text, first.cached, second.cached) == ("async ok", False, True)
    assert len(waits) == 1
    assert "".join(i for i in streamed if isinstance(i, str)) == "async ok"
    assert [r.stream for r in transport.requests] == [False, False, True]


def test_a_mock_transport_checks_its_arguments() -> None:
    with pytest.raises(sio.ConfigurationError, match="needs a function"):
        MockTransport("reply")  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match="piece_size"):
        MockTransport(lambda request: "", piece_size=0)


def test_a_predict_over_a_mock_transport() -> None:
    transport = MockTransport(lambda request: "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]")
    predict = sio.Predict("question -> answer: int", lm=make(transport), adapter=sio.ChatAdapter())
    assert predict(question="2+2?").answer == 4
    assert "2+2?" in transport.requests[0].text
