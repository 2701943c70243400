"""Prompt functions: exact prompts without a call, typed answers with one, errors named."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import pydantic
import pytest

import structio as sio
from structio.rendering.formatting import BulletedList, NumberedDict


@sio.prompt("Write a {style} poem about {topic}.")
def poem(topic: str, style: str = "short") -> str:
    """You are a poet."""
    raise NotImplementedError


def test_format_fills_the_template_without_a_call() -> None:
    assert poem.format("the sea") == "Write a short poem about the sea."
    assert poem.format("rain", "long") == "Write a long poem about rain."
    assert poem.format(style="sad", topic="rain") == "Write a sad poem about rain."
    assert poem.__name__ == "poem"
    assert poem.__doc__ == "You are a poet."


def test_braces_in_values_are_never_read_as_template() -> None:
    assert poem.format("{style} {0} {topic!r} {{x}}") == (
        "Write a short poem about {style} {0} {topic!r} {{x}}."
    )


def test_values_render_as_in_the_adapters() -> None:
    @sio.prompt("Buy:\n{items}\nPlan:\n{plan}\nData: {data}\nPrice: {price:.2f}\n{user.name}")
    def shop(
        items: BulletedList[str], plan: NumberedDict[str, str], data: Any, price: float, user: Any
    ) -> str:
        raise NotImplementedError

    class User:
        name = "Ann"

    text = shop.format(["milk", "eggs"], {"mon": "bake"}, {"k": [1, None]}, 2.5, User())
    assert text == (
        'Buy:\n- milk\n- eggs\nPlan:\n1. mon: bake\nData: {"k": [1, null]}\nPrice: 2.50\nAnn'
    )


def test_placeholders_without_parameters_fail_at_decoration() -> None:
    with pytest.raises(sio.SignatureError, match=r"placeholder \{nobody\} has no matching"):

        @sio.prompt("Hi {nobody}")
        def greet(name: str) -> str:
            raise NotImplementedError

    with pytest.raises(sio.SignatureError, match=r"placeholder \{0\} must name a parameter"):

        @sio.prompt("Hi {0}")
        def greet2(name: str) -> str:
            raise NotImplementedError

    with pytest.raises(sio.SignatureError, match="invalid template"):

        @sio.prompt("Hi {name")
        def greet3(name: str) -> str:
            raise NotImplementedError

    with pytest.raises(sio.SignatureError, match=r"\*args and \*\*kwargs"):

        @sio.prompt("Hi {name}")
        def greet4(name: str, **more: Any) -> str:
            raise NotImplementedError


def test_missing_or_unknown_arguments_fail_at_call_time() -> None:
    with pytest.raises(sio.FormatError, match="missing a required argument: 'topic'"):
        poem.format()
    with pytest.raises(sio.FormatError, match="unexpected keyword argument 'colour'"):
        poem.format("x", colour="red")
    with pytest.raises(sio.FormatError, match="missing a required argument: 'topic'"):
        poem()


def test_a_str_return_is_the_completion() -> None:
    lm = sio.FakeLM(["  Waves, and more waves.  "])
    with sio.context(lm=lm):
        assert poem("the sea") == "  Waves, and more waves.  "
    (call,) = lm.calls
    assert call.messages == [
        {"role": "system", "content": "You are a poet."},
        {"role": "user", "content": "Write a short poem about the sea."},
    ]
    assert poem.messages("the sea") == call.messages


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(description="full name")
    age: int = pydantic.Field(ge=0)


class Point(NamedTuple):
    x: int
    y: int


def test_typed_returns_are_parsed_by_the_adapter() -> None:
    lm = sio.FakeLM([{"name": "Ann Lee", "age": 31}, {"x": 1, "y": 2}, {"answer": 8}])

    @sio.prompt("Invent a person from {country}.", lm=lm)
    def person(country: str) -> Person:
        raise NotImplementedError

    @sio.prompt("A point near {x}.", lm=lm)
    def point(x: int) -> Point:
        raise NotImplementedError

    @sio.prompt("How many legs has a {animal}?", lm=lm)
    def legs(animal: str) -> int:
        raise NotImplementedError

    assert person("Peru") == Person(name="Ann Lee", age=31)
    assert point(0) == Point(1, 2)
    assert legs("spider") == 8
    user = lm.calls[0].messages[-1]["content"]
    assert user.startswith("[[ ## prompt ## ]]\nInvent a person from Peru.\n\nRespond with")
    assert "1. `name` (str): full name" in lm.calls[0].messages[0]["content"]
    assert person.messages("Peru") == lm.calls[0].messages


def test_a_model_that_rejects_the_values_is_a_parse_error() -> None:
    @sio.prompt("Invent a person.", lm=sio.FakeLM([{"name": "A", "age": -1}]))
    def person() -> Person:
        raise NotImplementedError

    with pytest.raises(sio.ParseError, match="not a valid Person"):
        person()


def test_the_json_adapter_and_async_calls() -> None:
    lm = sio.FakeLM(['{"answer": ["a", "b"]}'])

    @sio.prompt("List two letters.", lm=lm, adapter=sio.JSONAdapter(), temperature=0)
    def letters() -> list[str]:
        raise NotImplementedError

    assert asyncio.run(letters.acall()) == ["a", "b"]
    assert lm.calls[0].params["temperature"] == 0
    assert '"answer"' in lm.calls[0].messages[0]["content"]


def test_no_lm_is_a_configuration_error() -> None:
    with pytest.raises(sio.ConfigurationError, match="no LM to call for poem"):
        poem("x")


@sio.chatprompt(
    sio.SystemMessage("You translate to {language}."),
    sio.UserMessage("Translate: {text}"),
    sio.AssistantMessage("(translation of {text})"),
    sio.UserMessage("And once more: {text}"),
)
def translate(text: str, language: str = "French") -> str:
    raise NotImplementedError


def test_chatprompt_format_is_the_exact_messages() -> None:
    assert translate.format("hi {there}") == [
        {"role": "system", "content": "You translate to French."},
        {"role": "user", "content": "Translate: hi {there}"},
        {"role": "assistant", "content": "(translation of hi {there})"},
        {"role": "user", "content": "And once more: hi {there}"},
    ]


def test_chatprompt_calls() -> None:
    lm = sio.FakeLM(["salut", "[[ ## answer ## ]]\n3"])
    with sio.context(lm=lm):
        assert translate("hi") == "salut"

        @sio.chatprompt(sio.SystemMessage("Count words."), sio.UserMessage("{text}"))
        def count(text: str) -> int:
            raise NotImplementedError

        assert count("a b c") == 3
    assert lm.calls[0].messages == translate.format("hi")
    system, user = lm.calls[1].messages
    assert system["content"].endswith("your objective is: \n        Count words.")
    assert user["content"].startswith("[[ ## prompt ## ]]\na b c\n\nRespond with")


def test_chatprompt_errors() -> None:
    with pytest.raises(sio.SignatureError, match="at least one message"):
        sio.chatprompt()
    with pytest.raises(sio.SignatureError, match="must be SystemMessage"):
        sio.chatprompt("hello")  # type: ignore[arg-type]
    with pytest.raises(sio.SignatureError, match="must end with a UserMessage"):

        @sio.chatprompt(sio.UserMessage("{x}"), sio.AssistantMessage("ok"))
        def typed(x: str) -> int:
            raise NotImplementedError

    with pytest.raises(sio.SignatureError, match=r"placeholder \{y\}"):

        @sio.chatprompt(sio.UserMessage("{y}"))
        def untyped(x: str) -> str:
            raise NotImplementedError


def test_chatprompt_async() -> None:
    lm = sio.FakeLM(["[[ ## answer ## ]]\n2"])

    @sio.chatprompt(sio.UserMessage("Count: {text}"), lm=lm)
    def count(text: str) -> int:
        raise NotImplementedError

    assert asyncio.run(count.acall("a b")) == 2


def test_an_image_argument_becomes_a_content_part_in_both_kinds() -> None:
    png = (
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+"
        "M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    lm = sio.FakeLM(["A pixel.", "A pixel.", "[[ ## answer ## ]]\n1"])

    @sio.prompt("Describe: {image}", lm=lm)
    def describe(image: sio.Image) -> str: ...

    @sio.chatprompt(sio.SystemMessage("You see."), sio.UserMessage("Look: {image}"), lm=lm)
    def look(image: sio.Image) -> str: ...

    @sio.prompt("Count: {image}", lm=lm)
    def count(image: sio.Image) -> int: ...

    assert describe(sio.Image(png)) == "A pixel."
    assert look(sio.Image(png)) == "A pixel."
    assert count(sio.Image(png)) == 1
    image_part = {"type": "image_url", "image_url": {"url": png}}
    assert lm.calls[0].messages[-1]["content"] == [
        {"type": "text", "text": "Describe: "},
        image_part,
    ]
    assert lm.calls[1].messages[0] == {"role": "system", "content": "You see."}
    assert lm.calls[1].messages[1]["content"][1] == image_part
    assert lm.calls[2].messages[-1]["content"][1] == image_part


@pytest.mark.parametrize("decorator", [sio.prompt, sio.chatprompt])
def test_a_model_string_or_adapter_class_is_refused_at_decoration(decorator: Any) -> None:
    template: Any = "Say {x}" if decorator is sio.prompt else sio.UserMessage("Say {x}")
    with pytest.raises(sio.ConfigurationError, match=r"pass lm=structio.LM\('openai/gpt-4o'\)"):

        @decorator(template, lm="openai/gpt-4o")
        def say(x: str) -> str: ...

    with pytest.raises(sio.ConfigurationError, match=r"pass an instance, JSONAdapter\(\)"):

        @decorator(template, adapter=sio.JSONAdapter)
        def say_json(x: str) -> str: ...
