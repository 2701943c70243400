"""Per-output confidence over the real wire: scripted log probabilities, exact numbers.

The loopback server sends the token entries a test scripts (`Reply.logprobs`), in OpenAI's
chat shape or in the legacy completions shape llama-cpp-python's server sends
(`tests.wire.server.legacy_logprobs`, written from ``llama_cpp/llama.py`` at
abetlen/llama-cpp-python 3691546f1c9e0c1bf93323dff02230bd959cf562).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any, Literal

import pytest

import structio as sio
from structio.lm._stream import logprobs_of
from structio.parsing.confidence import field_confidence
from structio.parsing.stream import FieldValue
from tests.wire.server import OpenAIServer, Reply, legacy_logprobs
from tests.wire.test_stream import ended

MakeLM = Callable[..., sio.LM]


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    summary: str = sio.OutputField()


def entry(token: str, p: float, *alternatives: tuple[str, float]) -> dict[str, Any]:
    """One token as OpenAI sends it: probability ``p``, its top alternatives."""
    top = [{"token": token, "logprob": math.log(p), "bytes": list(token.encode())}]
    top += [
        {"token": t, "logprob": math.log(q), "bytes": list(t.encode())} for t, q in alternatives
    ]
    return {
        "token": token,
        "logprob": math.log(p),
        "bytes": list(token.encode()),
        "top_logprobs": top,
    }


def chat_tokens(bug: float, billing: float, summary: tuple[float, float]) -> list[dict[str, Any]]:
    """A ChatAdapter answer whose category is ``bug`` (``billing`` the other option seen)."""
    return [
        entry("[[ ## category ## ]]", 0.9),
        entry("\n", 1.0),
        entry("bug", bug, ("billing", billing), ("I", 0.01)),
        entry("\n\n", 1.0),
        entry("[[ ## summary ## ]]", 1.0),
        entry("\n", 1.0),
        entry("App", summary[0]),
        entry(" crashes", summary[1]),
        entry("\n\n", 1.0),
        entry("[[ ## completed ## ]]", 1.0),
    ]


def text_of(entries: list[dict[str, Any]]) -> str:
    return "".join(e["token"] for e in entries)


TOKENS = chat_tokens(0.6, 0.2, (0.5, 0.5))
EXPECTED = {"category": pytest.approx(0.6 / 0.8), "summary": pytest.approx(0.5)}


def test_confidence_of_each_output_and_what_was_asked(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    server.reply(Reply(content=text_of(TOKENS), logprobs=[TOKENS]))
    pred = sio.Predict(Triage, lm=make_lm(), confidence=True)(ticket="crash")
    assert (pred.category, pred.summary) == ("bug", "App crashes")
    assert pred.meta.confidence == EXPECTED
    (request,) = server.requests
    assert request.body["logprobs"] is True
    assert request.body["top_logprobs"] == 5


def test_top_logprobs_the_caller_set_is_kept(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=text_of(TOKENS), logprobs=[TOKENS]))
    sio.Predict(Triage, lm=make_lm(), confidence=True, top_logprobs=2)(ticket="crash")
    assert server.requests[0].body["top_logprobs"] == 2


def test_without_the_option_nothing_is_asked(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=text_of(TOKENS)))
    pred = sio.Predict(Triage, lm=make_lm())(ticket="crash")
    assert pred.meta.confidence is None
    assert "logprobs" not in server.requests[0].body


def test_each_choice_has_its_own(server: OpenAIServer, make_lm: MakeLM) -> None:
    second = chat_tokens(0.3, 0.6, (0.25, 1.0))
    server.reply(Reply(content=[text_of(TOKENS), text_of(second)], logprobs=[TOKENS, second]))
    pred = sio.Predict(Triage, lm=make_lm(), confidence=True, n=2)(ticket="crash")
    assert pred.meta.confidence == EXPECTED
    assert pred.completions[0].meta.confidence == EXPECTED
    others = {"category": pytest.approx(0.3 / 0.9), "summary": pytest.approx(0.5)}
    assert pred.completions[1].meta.confidence == others
    assert [c.meta.confidence for c in pred.completions] == [EXPECTED, others]
    assert pred.completions[-1].meta.confidence == others


def test_json_answers_score_values_not_keys(server: OpenAIServer, make_lm: MakeLM) -> None:
    tokens = [
        entry('{"category": "', 0.5),
        entry("billing", 0.9, ("bug", 0.05)),
        entry('", "summary": "', 0.5),
        entry("Charged", 0.25),
        entry(" twice", 0.25),
        entry('"}', 0.5),
    ]
    server.reply(Reply(content=text_of(tokens), logprobs=[tokens]))
    predict = sio.Predict(Triage, lm=make_lm(), adapter=sio.JSONAdapter(), confidence=True)
    pred = predict(ticket="x")
    assert pred.meta.confidence == {
        "category": pytest.approx(0.9 / 0.95),
        "summary": pytest.approx(0.25),
    }


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_gives_each_value_its_confidence_as_it_comes(
    server: OpenAIServer, make_lm: MakeLM, mode: str
) -> None:
    reply = Reply(content=text_of(TOKENS), logprobs=[TOKENS], hold_after=len(TOKENS) - 1)
    server.reply(reply)
    predict = sio.Predict(Triage, lm=make_lm(), confidence=True)
    seen: list[Any] = []

    async def read() -> None:
        async for item in predict.astream(ticket="crash"):
            seen.append(item)
            if isinstance(item, FieldValue):
                reply.release.set()

    if mode == "astream":
        asyncio.run(read())
    else:
        for item in predict.stream(ticket="crash"):
            seen.append(item)
            if isinstance(item, FieldValue):
                reply.release.set()  # the server sends the last tokens only now
    assert ended(server).released is True  # a value came before the last tokens were sent
    values = [e for e in seen if isinstance(e, FieldValue)]
    assert {v.field: v.value for v in values} == {"category": "bug", "summary": "App crashes"}
    # The category was given while the model wrote (the server held the rest until then),
    # scored from the tokens received so far; the summary, at the end, from all of them.
    assert {v.field: v.confidence for v in values} == EXPECTED
    assert seen[-1].meta.confidence == EXPECTED
    # Confidence is metadata: the events compare as before.
    assert FieldValue("summary", "App crashes", 0.5) == FieldValue("summary", "App crashes")


def test_llama_cpp_pythons_legacy_shape(server: OpenAIServer, make_lm: MakeLM) -> None:
    server.reply(Reply(content=text_of(TOKENS), logprobs=[TOKENS], legacy=True))
    pred = sio.Predict(Triage, lm=make_lm(), confidence=True)(ticket="crash")
    assert pred.meta.confidence == EXPECTED


def test_the_legacy_shape_is_read_as_openais() -> None:
    tokens = [entry("ab", 0.5, ("cd", 0.25)), entry("e", 1.0)]
    legacy = legacy_logprobs(tokens)
    assert legacy["text_offset"] == [0, 2]
    entries = logprobs_of({"logprobs": legacy})
    assert entries is not None
    assert [(e["token"], e["logprob"]) for e in entries] == [("ab", math.log(0.5)), ("e", 0.0)]
    assert {t["token"]: t["logprob"] for t in entries[0]["top_logprobs"]} == {
        "ab": math.log(0.5),
        "cd": math.log(0.25),
    }
    # A server that sends both shapes is read by OpenAI's.
    both = logprobs_of({"logprobs": {**legacy, "content": tokens[:1]}})
    assert both is not None
    assert [e["token"] for e in both] == ["ab"]
    # The first token of an echoed prompt has no numbers (OpenAI's legacy quirk).
    legacy["token_logprobs"][0] = None
    legacy["top_logprobs"][0] = None
    first = (logprobs_of({"logprobs": legacy}) or [{}])[0]
    assert first["logprob"] is None
    assert first["top_logprobs"] == []


def test_a_model_without_logprobs_is_refused_before_any_request(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    lm = make_lm(profile={"logprobs": False})
    with pytest.raises(sio.ConfigurationError, match=r"openai/test.*profile=\{'logprobs': True\}"):
        sio.Predict(Triage, lm=lm, confidence=True)(ticket="crash")
    assert server.requests == []


def test_the_option_must_be_a_bool() -> None:
    with pytest.raises(sio.ConfigurationError, match="confidence must be True or False"):
        sio.Predict(Triage, confidence="yes")  # type: ignore[arg-type]


def test_llama_cpp_pythons_chat_conversion_without_bytes_is_read() -> None:
    # llama_chat_format._convert_text_completion_logprobs_to_chat (same commit): the chat
    # shape with "bytes": None everywhere and a "refusal" key; the tokens' text stands.
    converted = [{**e, "bytes": None} for e in TOKENS]
    entries = logprobs_of({"logprobs": {"content": converted, "refusal": None}})
    fields = {name: f.annotation for name, f in Triage.output_fields.items()}
    assert field_confidence(text_of(TOKENS), entries, fields) == EXPECTED


def test_confidence_is_saved_with_the_prompt(tmp_path: Any) -> None:
    predict = sio.Predict(Triage, confidence=True)
    path = tmp_path / "triage.json"
    predict.save(path)
    assert sio.Predict.load(path).options.confidence is True
    assert "confidence" not in sio.Predict(Triage).to_dict()  # files without it unchanged
