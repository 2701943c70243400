"""DSPy's ways of calling an LM and reading its history, on structio's `BaseLM`."""

from __future__ import annotations

import asyncio
import datetime
import uuid

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply


def test_a_text_prompt_returns_the_completion_texts() -> None:
    lm = sio.FakeLM(["Paris"])
    assert lm("Capital of France?") == ["Paris"]
    assert lm.calls[0].messages == [{"role": "user", "content": "Capital of France?"}]


def test_prompt_and_messages_keywords() -> None:
    lm = sio.FakeLM(["one", "two", ["a", "b"]])
    assert lm(prompt="hi") == ["one"]
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert lm(messages=chat, temperature=0.5) == ["two"]
    assert lm.calls[1].messages == chat
    assert lm.calls[1].params == {"temperature": 0.5}  # prompt/messages are not parameters
    assert lm("hi", n=2) == ["a", "b"]


def test_a_list_by_position_still_returns_the_response() -> None:
    response = sio.FakeLM(["x"])([{"role": "user", "content": "hi"}])
    assert isinstance(response, sio.LMResponse)
    assert response.text == "x"


def test_reasoning_or_tool_calls_make_dicts_as_dspy() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    lm = sio.FakeLM(
        [[sio.Completion("4", reasoning="2+2"), sio.Completion("", tool_calls=(call,))]]
    )
    assert lm("2+2?", n=2) == [
        {"text": "4", "reasoning_content": "2+2"},
        {"text": "", "tool_calls": [call]},
    ]


def test_what_to_send_must_be_given_once() -> None:
    lm = sio.FakeLM(["x"])
    with pytest.raises(TypeError, match="not both"):
        lm("hi", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match=r"lm\('text'\)"):
        lm()
    assert lm.call_count == 0


def test_acall_in_dspys_spellings() -> None:
    lm = sio.FakeLM(["a", "b", "c"])

    async def main() -> tuple[object, object, object]:
        return (
            await lm.acall("hi"),
            await lm.acall(messages=[{"role": "user", "content": "hi"}]),
            await lm.acall([{"role": "user", "content": "hi"}]),
        )

    first, second, third = asyncio.run(main())
    assert (first, second) == (["a"], ["b"])
    assert isinstance(third, sio.LMResponse)


def test_history_entries_read_as_dspys_dicts() -> None:
    lm = sio.FakeLM(["Paris", "Again"])
    lm("Capital of France?", temperature=0)
    (entry,) = lm.history
    assert entry["prompt"] == "Capital of France?"
    assert entry["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert entry["kwargs"] == {"temperature": 0}
    assert entry["outputs"] == ["Paris"]
    assert entry["response"] is entry.response
    assert entry["model"] == entry["response_model"] == "fake"
    assert entry["model_type"] == "chat"
    assert entry["cost"] is None
    assert entry["usage"]["total_tokens"] == 0
    when = datetime.datetime.fromisoformat(entry["timestamp"])
    assert when.timestamp() == pytest.approx(entry.timestamp)
    assert list(entry) == list(entry.keys())
    assert "outputs" in entry
    # The keys print as a dict's do, never the whole prompt and response behind them.
    assert repr(entry.keys()) == f"dict_keys({list(entry)!r})"
    assert "Capital" not in repr(entry.keys())
    assert set(entry.keys()) >= {"prompt", "outputs"}
    # DSPy 3.4.1's keys, in its order.
    assert list(entry) == [
        "prompt", "messages", "kwargs", "response", "outputs", "usage", "cost",
        "timestamp", "uuid", "model", "response_model", "model_type",
    ]  # fmt: skip
    lm("Again?")
    ids = [uuid.UUID(e["uuid"]) for e in lm.history]
    assert [i.version for i in ids] == [4, 4]
    assert ids[0] != ids[1]
    assert entry.get("request") is None
    with pytest.raises(KeyError, match="a history entry has the keys prompt, messages"):
        _ = entry["request"]


def test_history_entries_of_a_real_call(server: OpenAIServer) -> None:
    server.reply(Reply(content="Paris"))
    lm = sio.LM("openai/gpt-4o-mini", api_base=server.base_url, api_key="sk-secret-key")
    assert lm("Capital of France? sk-secret-key") == ["Paris"]
    entry = lm.history[-1]
    assert entry["usage"] == {
        "prompt_tokens": 11,
        "completion_tokens": 3,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    assert entry["cost"] is not None
    assert entry["cost"] > 0
    assert entry["outputs"] == ["Paris"]
    # The prompt is kept as the messages are: without the key.
    assert entry["prompt"] == "Capital of France? [redacted]"
    assert "sk-secret-key" not in str(entry["messages"])
    (request,) = server.requests
    assert request.messages == [{"role": "user", "content": "Capital of France? sk-secret-key"}]


def test_a_predict_call_has_no_prompt_in_its_entry() -> None:
    lm = sio.FakeLM([{"answer": "4"}])
    sio.Predict("question -> answer", lm=lm)(question="2+2?")
    (entry,) = lm.history
    assert entry["prompt"] is None
    assert entry["messages"][0]["role"] == "system"
    assert entry["outputs"] == [entry.response.text]


def test_each_history_uuid_is_a_uuid4_written_as_the_uuid_module_writes_it() -> None:
    from structio.lm.base import _new_uuid

    for _ in range(300):
        text = _new_uuid()
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_lm_inspect_history_prints_this_lms_calls_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As DSPy's docs write it: ``lm.inspect_history(n=1)``."""
    import io

    import structio as dspy

    lm = dspy.FakeLM(["Paris", "Rome"])
    other = dspy.FakeLM(["Berlin"])
    lm("Capital of France?")
    lm("Capital of Italy?")
    other("Capital of Germany?")  # the latest call of the process, not of lm

    assert lm.inspect_history(n=1) is None  # type: ignore[func-returns-value]
    printed = capsys.readouterr().out
    assert "Capital of Italy?" in printed
    assert "Rome" in printed
    assert "France" not in printed
    assert "Berlin" not in printed

    buffer = io.StringIO()
    lm.inspect_history(2, file=buffer)
    assert capsys.readouterr().out == ""
    text = buffer.getvalue()
    assert text.index("France") < text.index("Italy")
    # The same rendering as the process-wide one, for the same call.
    whole = io.StringIO()
    sio.inspect_history(1, file=whole)
    mine = io.StringIO()
    other.inspect_history(1, file=mine)
    assert mine.getvalue() == whole.getvalue()

    fresh = io.StringIO()
    dspy.FakeLM(["x"]).inspect_history(file=fresh)
    assert fresh.getvalue() == "(no model calls yet)\n"
    none = io.StringIO()
    lm.inspect_history(0, file=none)
    assert none.getvalue() == "(no model calls yet)\n"
