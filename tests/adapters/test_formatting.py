"""Adapter.format beyond the golden files: demos, history, inputs, defaults and errors."""

from __future__ import annotations

import copy
from typing import Any, Literal

import pytest

import structio as sio

ADAPTERS = [sio.ChatAdapter(), sio.JSONAdapter()]
INCOMPLETE = "This is an example of the task, though some input or output fields are not supplied."


class Review(sio.Signature):
    """Classify the review."""

    review: str = sio.InputField()
    product: str = sio.InputField()
    sentiment: Literal["positive", "negative"] = sio.OutputField()
    rationale: str = sio.OutputField()


class Chat(sio.Signature):
    """Answer."""

    question: str = sio.InputField()
    history: sio.History = sio.InputField()
    answer: str = sio.OutputField()


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_messages_without_demos() -> None:
    messages = sio.ChatAdapter().format(Review, inputs={"review": "ok", "product": "mug"})
    assert roles(messages) == ["system", "user"]
    assert messages[1]["content"].startswith(
        "[[ ## review ## ]]\nok\n\n[[ ## product ## ]]\nmug\n\n"
    )


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_demo_kinds_and_order(adapter: sio.Adapter) -> None:
    demos = [
        {"review": "great", "product": "a", "sentiment": "positive", "rationale": "praise"},
        {"review": "bad", "sentiment": "negative"},  # incomplete: has an input and an output
        {"review": "only inputs", "product": "b"},  # dropped
        {"sentiment": "positive", "rationale": "only outputs"},  # dropped
        {"review": "meh", "product": "c", "sentiment": "negative", "rationale": None},  # incomplete
    ]
    messages = adapter.format(Review, demos, {"review": "x", "product": "y"})
    assert roles(messages) == ["system"] + ["user", "assistant"] * 3 + ["user"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0] == f"{INCOMPLETE}\n\n[[ ## review ## ]]\nbad"
    assert users[1] == f"{INCOMPLETE}\n\n[[ ## review ## ]]\nmeh\n\n[[ ## product ## ]]\nc"
    assert users[2] == "[[ ## review ## ]]\ngreat\n\n[[ ## product ## ]]\na"
    assert "Respond with" in users[3]
    assert "Respond with" not in "".join(users[:3])
    assistants = [m["content"] for m in messages if m["role"] == "assistant"]
    assert "Not supplied for this particular example." in assistants[0]
    if isinstance(adapter, sio.ChatAdapter):
        assert assistants[1] == (
            "[[ ## sentiment ## ]]\nnegative\n\n"
            "[[ ## rationale ## ]]\nNone\n\n"
            "[[ ## completed ## ]]\n"
        )
    else:
        assert assistants[1] == '{\n  "sentiment": "negative",\n  "rationale": null\n}'


def test_demo_keys_outside_the_signature_are_ignored() -> None:
    demo = {"review": "r", "product": "p", "sentiment": "positive", "rationale": "x", "id": 7}
    messages = sio.ChatAdapter().format(Review, [demo], {"review": "x", "product": "y"})
    assert "id" not in messages[1]["content"]
    assert "7" not in messages[2]["content"]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_format_does_not_mutate_its_arguments(adapter: sio.Adapter) -> None:
    demos = [{"review": "r", "product": "p", "sentiment": "positive", "rationale": "x"}]
    inputs = {"question": "q?", "history": {"messages": [{"question": "a", "answer": "b"}]}}
    before = copy.deepcopy((demos, inputs))
    adapter.format(Review, demos, {"review": "x", "product": "y"})
    adapter.format(Chat, [], inputs)
    assert (demos, inputs) == before


@pytest.mark.parametrize(
    "history",
    [
        sio.History(messages=[{"question": "q1", "answer": "a1"}, {"question": "q2"}]),
        {"messages": [{"question": "q1", "answer": "a1"}, {"question": "q2"}]},
        [{"question": "q1", "answer": "a1"}, {"question": "q2"}],
    ],
    ids=["History", "dict", "list"],
)
def test_history_forms(history: Any) -> None:
    messages = sio.ChatAdapter().format(Chat, inputs={"question": "q3", "history": history})
    assert roles(messages) == ["system", "user", "assistant", "user", "user"]
    assert messages[1]["content"].startswith("[[ ## question ## ]]\nq1\n\nRespond with")
    assert messages[2]["content"] == "[[ ## answer ## ]]\na1\n\n[[ ## completed ## ]]\n"
    assert messages[3]["content"].startswith("[[ ## question ## ]]\nq2\n\nRespond with")
    assert messages[4]["content"].startswith("[[ ## question ## ]]\nq3")


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_history_turn_with_only_outputs(adapter: sio.Adapter) -> None:
    history = sio.History([{"answer": "hello"}, {"question": "q", "answer": "a", "mood": "x"}])
    messages = adapter.format(Chat, inputs={"question": "now", "history": history})
    assert roles(messages) == ["system", "assistant", "user", "assistant", "user"]
    assert "None" not in "".join(m["content"] for m in messages[1:])
    assert "mood" not in "".join(m["content"] for m in messages)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_history_is_never_described_in_the_system_message(adapter: sio.Adapter) -> None:
    system = adapter.format(Chat, inputs={"question": "q"})[0]["content"]
    structure = system.split("In adhering")[0]
    assert "history" not in structure
    assert "1. `question` (str):\nYour output fields are:" in system


def test_history_input_may_be_omitted() -> None:
    messages = sio.ChatAdapter().format(Chat, inputs={"question": "q"})
    assert roles(messages) == ["system", "user"]


def test_demo_without_history_is_complete() -> None:
    demo = {"question": "2+2?", "answer": "4"}
    messages = sio.ChatAdapter().format(Chat, [demo], {"question": "q"})
    assert messages[1]["content"] == "[[ ## question ## ]]\n2+2?"


def test_input_defaults_are_filled_and_optional_inputs_omitted() -> None:
    sig = sio.Signature("question, tone: str = 'neutral', hint: str | None -> answer")
    user = sio.ChatAdapter().format(sig, inputs={"question": "q"})[-1]["content"]
    assert "[[ ## tone ## ]]\nneutral" in user
    assert "hint" not in user.split("Respond with")[0]


def test_none_input_renders_as_none() -> None:
    sig = sio.Signature("question, hint: str | None -> answer")
    user = sio.ChatAdapter().format(sig, inputs={"question": "q", "hint": None})[-1]["content"]
    assert "[[ ## hint ## ]]\nNone" in user


def test_string_spec_instead_of_a_class() -> None:
    by_spec = sio.ChatAdapter().format("question -> answer: int", inputs={"question": "q"})
    by_class = sio.ChatAdapter().format(
        sio.Signature("question -> answer: int"), inputs={"question": "q"}
    )
    assert by_spec == by_class


def test_list_input_for_an_untyped_field_is_a_numbered_list() -> None:
    user = sio.ChatAdapter().format(
        "context, question -> answer", inputs={"context": ["a", "b"], "question": "q"}
    )
    assert "[[ ## context ## ]]\n[1] «a»\n[2] «b»" in user[-1]["content"]


def test_zero_inputs_gives_four_newlines_in_the_structure() -> None:
    class NoInputs(sio.Signature):
        """Say hi."""

        greeting: str = sio.OutputField()

    system = sio.ChatAdapter().format(NoInputs)[0]["content"]
    assert "filled in.\n\n\n\n[[ ## greeting ## ]]" in system


def test_system_message_is_built_once_per_signature() -> None:
    sig = sio.Signature("q -> a: int")
    first = sio.ChatAdapter().format(sig, inputs={"q": "x"})[0]["content"]
    second = sio.ChatAdapter().format(sig, inputs={"q": "y"})[0]["content"]
    assert first is second  # the cached string itself


# -- errors ---------------------------------------------------------------------------------


def test_missing_required_input() -> None:
    with pytest.raises(sio.FormatError) as info:
        sio.ChatAdapter().format(Review, inputs={"review": "x"})
    message = str(info.value)
    assert "missing required input(s) `product`" in message
    assert "`review`, `product`" in message
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, sio.UsageError)


def test_unknown_input_name_suggests_the_close_match() -> None:
    with pytest.raises(sio.FormatError) as info:
        sio.JSONAdapter().format(Review, inputs={"reveiw": "x", "product": "p"})
    message = str(info.value)
    assert "`reveiw` is not an input of Review" in message
    assert "did you mean `review`?" in message
    assert "Its inputs are: `review`, `product`" in message


def test_output_name_passed_as_input() -> None:
    with pytest.raises(sio.FormatError, match="`sentiment` is an output of Review, not an input"):
        sio.ChatAdapter().format(
            Review, inputs={"review": "x", "product": "p", "sentiment": "positive"}
        )


def test_inputs_and_demos_must_be_dicts() -> None:
    with pytest.raises(sio.FormatError, match="inputs must be a dict"):
        sio.ChatAdapter().format(Review, inputs=["x"])  # type: ignore[arg-type]
    with pytest.raises(sio.FormatError, match="demo 0 must be a dict"):
        sio.ChatAdapter().format(Review, ["x"], {"review": "x", "product": "p"})  # type: ignore[list-item]


def test_bad_history_value() -> None:
    with pytest.raises(sio.FormatError, match="input `history` of Chat"):
        sio.ChatAdapter().format(Chat, inputs={"question": "q", "history": "hello"})


def test_not_a_signature() -> None:
    with pytest.raises(TypeError, match="Signature class or a string spec"):
        sio.ChatAdapter().format(42, inputs={})  # type: ignore[arg-type]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: type(a).__name__)
def test_finetune_data_errors(adapter: sio.Adapter) -> None:
    inputs = {"review": "x", "product": "p"}
    with pytest.raises(sio.FormatError, match="`mood` is not an output of Review"):
        adapter.format_finetune_data(
            Review, [], inputs, {"sentiment": "positive", "rationale": "r", "mood": 1}
        )
    with pytest.raises(sio.FormatError, match="missing output\\(s\\) `rationale`"):
        adapter.format_finetune_data(Review, [], inputs, {"sentiment": "positive"})
    with pytest.raises(sio.FormatError, match="outputs must be a dict"):
        adapter.format_finetune_data(Review, [], inputs, ["positive"])  # type: ignore[arg-type]


def test_finetune_data_fills_optional_outputs() -> None:
    sig = sio.Signature("q -> a, note: str | None")
    record = sio.ChatAdapter().format_finetune_data(sig, [], {"q": "x"}, {"a": "y"})
    assert record["messages"][-1]["content"] == (
        "[[ ## a ## ]]\ny\n\n[[ ## note ## ]]\nNone\n\n[[ ## completed ## ]]\n"
    )
