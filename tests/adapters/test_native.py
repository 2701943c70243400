"""Tool calls and reasoning through a whole call: native and text modes, checked calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import structio as sio
from structio.adapters.native import native_plan
from structio.lm.types import Completion


def get_weather(city: str, unit: str = "C") -> str:
    """Get the weather for a city."""
    return f"sunny in {city} ({unit})"


def add(a: int, b: int = 0) -> int:
    """Add two numbers."""
    return a + b


class Ask(sio.Signature):
    """Answer, calling tools when needed."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


class Solve(sio.Signature):
    """Solve the problem."""

    question: str = sio.InputField()
    reasoning: sio.Reasoning = sio.OutputField()
    answer: int = sio.OutputField()


def openai_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


class Chat(sio.Signature):
    """Answer the user."""

    question: str = sio.InputField()
    tools: list[sio.Tool] = sio.InputField()
    history: sio.History = sio.InputField()
    calls: sio.ToolCalls = sio.OutputField()
    answer: str = sio.OutputField()


def native_lm(*replies: Any) -> sio.FakeLM:
    return sio.FakeLM(list(replies), supports_function_calling=True)


# -- native tools --------------------------------------------------------------------------


def test_a_reply_of_only_tool_calls_is_an_answer_not_a_parse_error() -> None:
    lm = native_lm(
        Completion("", "tool_calls", (openai_call("c1", "get_weather", {"city": "Oslo"}),))
    )
    pred = sio.Predict(Ask, lm=lm)(question="Weather in Oslo?", tools=[get_weather, add])
    assert pred.answer is None  # the model has not answered yet: it asked for a tool
    assert [(c.id, c.name, c.args) for c in pred.calls] == [("c1", "get_weather", {"city": "Oslo"})]
    assert pred.calls.execute() == ["sunny in Oslo (C)"]
    sent = lm.calls[0]
    assert [t["function"]["name"] for t in sent.params["tools"]] == ["get_weather", "add"]
    assert sent.params["tools"][0] == sio.Tool(get_weather).to_openai()
    # Neither the tools nor the calls are in the prompt: they travel natively.
    assert "tools" not in sent.messages[-1]["content"]
    assert "[[ ## calls ## ]]" not in sent.messages[0]["content"]


def test_native_calls_with_an_answer_in_the_text() -> None:
    text = "[[ ## answer ## ]]\nLet me check.\n\n[[ ## completed ## ]]"
    lm = native_lm(Completion(text, "tool_calls", (openai_call("c1", "add", {"a": "2", "b": 3}),)))
    pred = sio.Predict(Ask, lm=lm)(question="2+3?", tools=[add])
    assert pred.answer == "Let me check."
    assert pred.calls[0].args == {"a": 2, "b": 3}  # validated: "2" became 2
    assert pred.calls.execute() == [5]


def test_a_reply_without_tool_calls_gives_empty_calls() -> None:
    lm = native_lm("[[ ## answer ## ]]\nSunny.\n\n[[ ## completed ## ]]")
    pred = sio.Predict(Ask, lm=lm)(question="Weather?", tools=[get_weather])
    assert pred.answer == "Sunny."
    assert len(pred.calls) == 0
    assert not pred.calls


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (openai_call("c1", "get_wether", {"city": "Oslo"}), "get_wether"),
        (openai_call("c1", "get_weather", {"town": "Oslo"}), "city"),
        (openai_call("c1", "add", {"a": "two"}), "`a`"),
    ],
)
def test_a_call_to_no_tool_or_with_wrong_arguments_is_a_parse_error(
    call: dict[str, Any], reason: str
) -> None:
    lm = native_lm(Completion("", "tool_calls", (call,)))
    with pytest.raises(sio.ParseError) as exc:
        sio.Predict(Ask, lm=lm, adapter=sio.ChatAdapter(fallback=None))(
            question="?", tools=[get_weather, add]
        )
    assert "calls" in exc.value.invalid
    assert reason in exc.value.invalid["calls"][1]


def test_the_call_params_and_the_model_say_how_tools_travel() -> None:
    lm = sio.FakeLM([Completion("", "tool_calls", (openai_call("c", "add", {"a": 1}),))])
    assert native_plan(Ask, lm, native_tools=None, native_reasoning=None).native_calls is False
    lm = sio.FakeLM([], profile={"tools": True})
    plan = native_plan(Ask, lm, native_tools=None, native_reasoning=None)
    assert plan is not None
    assert plan.native_calls
    assert list(plan.wire.fields) == ["question", "answer"]
    forced = native_plan(Ask, lm, native_tools=False, native_reasoning=None)
    assert forced is not None
    assert not forced.native_calls
    assert (
        native_plan(sio.Signature("q -> a"), lm, native_tools=True, native_reasoning=True) is None
    )


def test_the_callers_tool_choice_is_kept() -> None:
    lm = native_lm(Completion("", "tool_calls", (openai_call("c1", "add", {"a": 1}),)))
    sio.Predict(Ask, lm=lm, tool_choice="required", parallel_tool_calls=False)(
        question="?", tools=[add]
    )
    params = lm.calls[0].params
    assert params["tool_choice"] == "required"
    assert params["parallel_tool_calls"] is False


def test_text_mode_reads_calls_from_the_sections_and_checks_them() -> None:
    text = (
        '[[ ## calls ## ]]\n{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}\n\n'
        "[[ ## answer ## ]]\nComputing.\n\n[[ ## completed ## ]]"
    )
    lm = sio.FakeLM([text], supports_function_calling=True)
    adapter = sio.ChatAdapter(native_tools=False)
    pred = sio.Predict(Ask, lm=lm, adapter=adapter)(question="1+2?", tools=[add])
    assert "tools" not in lm.calls[0].params
    assert "add, whose description is <desc>Add two numbers.</desc>" in lm.calls[0].prompt
    assert pred.calls.execute() == [3]
    bad = text.replace('"add"', '"mul"')
    with pytest.raises(sio.ParseError) as exc:
        sio.Predict(Ask, lm=sio.FakeLM([bad]), adapter=sio.ChatAdapter(fallback=None))(
            question="1+2?", tools=[add]
        )
    assert "mul" in str(exc.value)


def test_a_multi_turn_tool_conversation_replays_calls_and_results() -> None:
    lm = native_lm(
        Completion("", "tool_calls", (openai_call("c1", "get_weather", {"city": "Rome"}),)),
        "[[ ## answer ## ]]\nIt is sunny in Rome.\n\n[[ ## completed ## ]]",
    )
    chat = sio.Predict(Chat, lm=lm)
    first = chat(question="Weather in Rome?", tools=[get_weather], history=sio.History())
    first.calls.execute()
    history = sio.History([{"question": "Weather in Rome?", "calls": first.calls}])
    second = chat(question="Weather in Rome?", tools=[get_weather], history=history)
    assert second.answer == "It is sunny in Rome."
    messages = lm.calls[1].messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[2]["content"] is None
    assert messages[2]["tool_calls"] == [openai_call("c1", "get_weather", {"city": "Rome"})]
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "get_weather",
        "content": "sunny in Rome (C)",
    }
    # In text mode the same turn is an answer with the calls, then the results as a user turn.
    text = sio.ChatAdapter(native_tools=False).format(
        Chat, [], {"question": "And now?", "tools": [get_weather], "history": history}
    )
    assert [m["role"] for m in text] == ["system", "user", "assistant", "user", "user"]
    assert text[2]["content"].startswith(
        '[[ ## calls ## ]]\n{"tool_calls": [{"name": "get_weather", "args": {"city": "Rome"}}]}'
    )
    assert text[3]["content"] == (
        '[[ ## tool_call_results ## ]]\n{"tool_call_results": [{"call_id": "c1", "name": '
        '"get_weather", "value": "sunny in Rome (C)", "is_error": false}]}'
    )


def test_calls_not_yet_run_are_not_replayed_natively() -> None:
    calls = sio.ToolCalls.from_openai([openai_call("c1", "get_weather", {"city": "Rome"})])
    lm = native_lm("[[ ## answer ## ]]\nOk.\n\n[[ ## completed ## ]]")
    history = sio.History([{"question": "Rome?", "calls": calls}])
    sio.Predict(Chat, lm=lm)(question="Ok?", tools=[get_weather], history=history)
    roles = [m["role"] for m in lm.calls[0].messages]
    assert roles == ["system", "user", "user"]  # a provider refuses calls without results


def test_the_fallback_request_keeps_the_tools_native() -> None:
    lm = native_lm("no sections here", '{"answer": "Fine."}')
    pred = sio.Predict(Ask, lm=lm)(question="?", tools=[add])
    assert pred.route == "json_request"
    assert pred.answer == "Fine."
    assert "tools" in lm.calls[1].params


def test_streaming_gives_the_native_calls_as_a_value() -> None:
    lm = native_lm(
        Completion(
            "[[ ## answer ## ]]\nOne moment.\n\n[[ ## completed ## ]]",
            "tool_calls",
            (openai_call("c1", "add", {"a": 1, "b": 1}),),
        )
    )
    stream = sio.Predict(Ask, lm=lm).stream(question="1+1?", tools=[add])
    events = list(stream)
    values = {e.field: e.value for e in events if isinstance(e, sio.FieldValue)}
    assert values["answer"] == "One moment."
    assert values["calls"].execute() == [2]
    assert stream.result.calls[0].id == "c1"


def test_async_calls_and_tools() -> None:
    async def slow_add(a: int, b: int = 0) -> int:
        """Add, slowly."""
        await asyncio.sleep(0)
        return a + b

    lm = native_lm(Completion("", "tool_calls", (openai_call("c1", "slow_add", {"a": 4}),)))

    async def main() -> list[Any]:
        pred = await sio.Predict(Ask, lm=lm).acall(question="4?", tools=[slow_add])
        return await pred.calls.aexecute()

    assert asyncio.run(main()) == [4]


# -- reasoning -----------------------------------------------------------------------------


def test_native_reasoning_fills_the_field_and_asks_for_an_effort() -> None:
    lm = sio.FakeLM(
        [Completion("[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]", reasoning="2+2 is 4.")],
        supports_reasoning=True,
    )
    pred = sio.Predict(Solve, lm=lm)(question="2+2?")
    assert pred.answer == 4
    assert pred.reasoning == "2+2 is 4."
    assert isinstance(pred.reasoning, sio.Reasoning)
    assert lm.calls[0].params["reasoning_effort"] == "low"
    assert "reasoning" not in lm.calls[0].messages[0]["content"]


def test_reasoning_from_think_drafts_and_none_when_hidden() -> None:
    lm = sio.FakeLM(
        [
            "<think>Two and two.</think>[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
            "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
        ],
        supports_reasoning=True,
    )
    predict = sio.Predict(Solve, lm=lm, reasoning_effort="high")
    assert predict(question="2+2?").reasoning == "Two and two."
    hidden = predict(question="2+2?")
    assert hidden.reasoning is None  # the provider kept it hidden: nothing is made up
    assert hidden.answer == 4
    assert lm.calls[0].params["reasoning_effort"] == "high"


def test_reasoning_as_a_text_section_when_the_model_has_none() -> None:
    lm = sio.FakeLM(["[[ ## reasoning ## ]]\nTwo and two.\n\n[[ ## answer ## ]]\n4"])
    pred = sio.Predict(Solve, lm=lm)(question="2+2?")
    assert pred.reasoning == "Two and two."
    assert isinstance(pred.reasoning, sio.Reasoning)
    assert "reasoning_effort" not in lm.calls[0].params
    assert "[[ ## reasoning ## ]]" in lm.calls[0].messages[0]["content"]


def test_a_predictions_reasoning_is_the_models_own_unless_an_output_has_the_name() -> None:
    lm = sio.FakeLM([Completion("[[ ## answer ## ]]\n4", reasoning="Counting.")])
    pred = sio.Predict("question -> answer: int", lm=lm)(question="2+2?")
    assert pred.reasoning == pred.lm_reasoning == "Counting."
    assert "reasoning" not in pred  # never mixed into the outputs
    cot = sio.FakeLM(
        [Completion("[[ ## reasoning ## ]]\nMine.\n\n[[ ## answer ## ]]\n4", reasoning="Its.")]
    )
    pred = sio.Predict("question -> reasoning, answer: int", lm=cot)(question="2+2?")
    assert pred.reasoning == "Mine."
    assert pred.lm_reasoning == "Its."


THINKING = {"type": "thinking", "thinking": "Rome: call the tool.", "signature": "c2lnbmVk"}


def test_reasoning_items_come_with_native_calls_and_are_replayed_before_them() -> None:
    call = openai_call("c1", "get_weather", {"city": "Rome"})
    lm = native_lm(
        Completion("", "tool_calls", (call,), reasoning_items=(THINKING,)),
        "[[ ## answer ## ]]\nSunny.\n\n[[ ## completed ## ]]",
    )
    chat = sio.Predict(Chat, lm=lm)
    first = chat(question="Weather in Rome?", tools=[get_weather], history=sio.History())
    assert first.calls.reasoning_items == (THINKING,)
    first.calls.execute()
    history = sio.History([{"question": "Weather in Rome?", "calls": first.calls}])
    chat(question="Weather in Rome?", tools=[get_weather], history=history)
    assistant = lm.calls[1].messages[2]
    assert assistant["tool_calls"] == [call]
    assert assistant["reasoning_items"] == [THINKING]
    # DSPy's dict form of a turn carries them the same way.
    turn = {"tool_calls": [{"id": "c1", "name": "get_weather", "args": {"city": "Rome"}}]}
    turn["tool_call_results"] = [{"call_id": "c1", "name": "get_weather", "value": "sunny"}]
    turn["reasoning_items"] = [THINKING]
    again = native_lm("[[ ## answer ## ]]\nSunny.\n\n[[ ## completed ## ]]")
    history = sio.History([{"question": "Weather?", "calls": turn}])
    sio.Predict(Chat, lm=again)(question="And now?", tools=[get_weather], history=history)
    messages = again.calls[0].messages
    assert [m.get("reasoning_items") for m in messages if m["role"] == "assistant"] == [[THINKING]]


def test_calls_without_reasoning_items_replay_no_such_key() -> None:
    calls = sio.ToolCalls.from_openai([openai_call("c1", "add", {"a": 1})])
    assert calls.reasoning_items == ()
    assert calls.bind([add]).reasoning_items == ()
    kept = sio.ToolCalls.from_openai([openai_call("c1", "add", {"a": 1})], [THINKING])
    assert kept.bind([add]).reasoning_items == (THINKING,)
