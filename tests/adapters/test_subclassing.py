"""Subclassing ChatAdapter and JSONAdapter the way users do: hooks, super(), options, saving."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.adapters.base import hook
from structio.signatures.signature import Signature


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()


class Shouting(sio.ChatAdapter):
    """Extends the user message with super(): the documented way."""

    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        base = super().format_user_message_content(
            signature, inputs, prefix=prefix, main_request=main_request
        )
        return base.upper()


class Bare(sio.ChatAdapter):
    """Replaces the user message without super()."""

    def format_user_message_content(
        self,
        signature: type[Signature],
        inputs: Mapping[str, Any],
        *,
        prefix: str = "",
        main_request: bool = False,
    ) -> str:
        return " | ".join(f"{k}={v}" for k, v in inputs.items() if k in signature.input_fields)


class Styled(sio.ChatAdapter):
    """An adapter with an option that changes the system message."""

    def __init__(self, style: str = "plain", *, fallback: Any = "json") -> None:
        super().__init__(fallback=fallback)
        self.style = style

    def format_task_description(self, signature: type[Signature]) -> str:
        base = super().format_task_description(signature)
        return base + ("\nBe terse." if self.style == "terse" else "")


class Tagged(sio.JSONAdapter):
    """A JSONAdapter whose reminder names a tag list (an unhashable option)."""

    def __init__(self, tags: list[str] | None = None) -> None:
        self.tags = list(tags or [])

    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        base = super().user_message_output_requirements(signature)
        return base + (f" Tags: {', '.join(self.tags)}." if self.tags else "")


def system(adapter: sio.Adapter) -> str:
    content: str = adapter.format(QA, inputs={"question": "2+2?"})[0]["content"]
    return content


def user(adapter: sio.Adapter, **inputs: Any) -> str:
    content: str = adapter.format(QA, inputs=inputs or {"question": "2+2?"})[-1]["content"]
    return content


def test_an_override_that_calls_super_extends_the_default() -> None:
    plain = user(sio.ChatAdapter())
    assert user(Shouting()) == plain.upper()
    # Demos and history go through the override too, and nothing recurses.
    messages = Shouting().format(
        QA, demos=[{"question": "1+1?", "answer": 2}], inputs={"question": "x"}
    )
    assert messages[1]["content"] == "[[ ## QUESTION ## ]]\n1+1?"


def test_an_override_without_super_replaces_the_default() -> None:
    assert user(Bare(), question="2+2?") == "question=2+2?"


def test_instances_with_different_options_never_share_a_prompt() -> None:
    plain, terse = Styled(), Styled("terse")
    assert system(terse).endswith("Be terse.")
    assert not system(plain).endswith("Be terse.")
    assert system(Styled("terse")) == system(terse)  # equal options: the same prompt
    assert system(sio.ChatAdapter()) == system(plain)  # the base adapter is unaffected
    # Changing an option on a live instance changes its prompt at once.
    plain.style = "terse"
    assert system(plain).endswith("Be terse.")


def test_an_unhashable_option_still_works() -> None:
    assert user(Tagged(["a", "b"])).endswith("Tags: a, b.")
    assert not user(Tagged()).endswith(".Tags")
    assert user(Tagged(["c"])).endswith("Tags: c.")


def test_hooks_are_marked_and_listed() -> None:
    names = sio.ChatAdapter.hooks()
    for name in (
        "format_user_message_content",
        "format_task_description",
        "format_assistant_message_content",
        "user_message_output_requirements",
        "locate",
        "request_params",
    ):
        assert name in names
    assert "format" not in names  # the public API is not a hook

    class Custom(sio.ChatAdapter):
        @hook
        def extra(self) -> str:
            return "x"

    assert "extra" in Custom.hooks()


def test_a_custom_adapter_is_used_for_a_whole_call_and_writes_fake_replies() -> None:
    lm = sio.FakeLM([{"answer": 4}])
    pred = sio.Predict(QA, lm=lm, adapter=Styled("terse"))(question="2+2?")
    assert pred.answer == 4
    assert pred.route == "chat"
    assert lm.calls[0].messages[0]["content"].endswith("Be terse.")


def test_adapters_save_and_load_with_their_options() -> None:
    data = Styled("terse", fallback=None).to_dict()
    assert data == {
        "type": "tests.adapters.test_subclassing:Styled",
        "fallback": None,
        "style": "terse",
    }
    loaded = sio.Adapter.from_dict(json.loads(json.dumps(data)))
    assert isinstance(loaded, Styled)
    assert loaded == Styled("terse", fallback=None)
    assert loaded != Styled("plain", fallback=None)
    assert sio.Adapter.from_dict({"type": "JSONAdapter"}) == sio.JSONAdapter()
    assert sio.ChatAdapter(fallback=None).to_dict() == {"type": "ChatAdapter", "fallback": None}


def test_a_predict_with_a_custom_adapter_saves_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "qa.json"
    sio.Predict(QA, adapter=Tagged(["x"])).save(path)
    loaded = sio.Predict.load(path)
    assert isinstance(loaded.adapter, Tagged)
    assert loaded.adapter.tags == ["x"]
    assert loaded.format(question="q") == sio.Predict(QA, adapter=Tagged(["x"])).format(
        question="q"
    )


def test_adapters_that_cannot_be_saved_or_loaded_say_why() -> None:
    class Local(sio.ChatAdapter):
        pass

    with pytest.raises(sio.ConfigurationError, match="defined inside a function"):
        Local().to_dict()
    with pytest.raises(sio.ConfigurationError, match="not importable"):
        sio.Adapter.from_dict({"type": "nowhere.at_all:Adapter"}, allowed_modules=["nowhere"])
    with pytest.raises(sio.ConfigurationError, match="not an Adapter class"):
        sio.Adapter.from_dict({"type": "pathlib:Path"})
    with pytest.raises(sio.ConfigurationError, match="options"):
        sio.Adapter.from_dict({"type": "ChatAdapter", "colour": "red"})
    with pytest.raises(sio.ConfigurationError, match="'type'"):
        sio.Adapter.from_dict({"fallback": None})


def test_adapters_call_no_model() -> None:
    # The call layer calls models; an adapter is a wire format only.
    for klass in (sio.Adapter, sio.ChatAdapter, sio.JSONAdapter):
        assert all("__call__" not in vars(base) for base in klass.__mro__[:-1])
        assert not hasattr(klass, "acall")
