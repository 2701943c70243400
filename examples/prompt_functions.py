"""Prompt functions, formatting classes and a saved, named prompt, offline.

FakeLM answers in place of a provider; swap in sio.LM("openai/gpt-4o-mini") and nothing else
changes. Prompts are saved under a temporary STRUCTIO_HOME so the example leaves nothing
behind. Run: python examples/prompt_functions.py
"""

from __future__ import annotations

import os
import tempfile

import pydantic

import structio as sio


class Recipe(pydantic.BaseModel):
    title: str
    minutes: int = pydantic.Field(ge=1, description="total time")


@sio.prompt("Suggest a recipe using:\n{ingredients}\nSteps I can do:\n{skills}")
def suggest(ingredients: sio.BulletedList[str], skills: sio.NumberedList[str]) -> Recipe:
    """You are a chef who writes short, practical recipes."""
    raise NotImplementedError  # the decorator supplies the body


@sio.prompt("Write a haiku about {topic}.")
def haiku(topic: str) -> str:
    raise NotImplementedError


@sio.chatprompt(
    sio.SystemMessage("You rate dishes from 1 to 10."),
    sio.UserMessage("Rate: {dish}"),
)
def rate(dish: str) -> int:
    raise NotImplementedError


class Quiz(sio.Signature):
    """Write a quiz question about the passage."""

    passage: str = sio.InputField()
    question: str = sio.OutputField()


def main() -> None:
    lm = sio.FakeLM(
        [
            {"title": "Omelette", "minutes": 10},
            "Autumn wind rises\nleaves forget their branches\n{braces stay}",
            {"answer": 8},
        ]
    )
    sio.configure(lm=lm)

    # The exact prompt, no call: formatting classes render as lines, braces stay braces.
    print(suggest.format(["eggs", "cheese"], ["whisk", "fry"]))
    recipe = suggest(["eggs", "cheese"], ["whisk", "fry"])
    print(f"-> {recipe!r}")
    print(haiku("autumn {wind}"))
    print(f"rating: {rate('omelette')}")

    with tempfile.TemporaryDirectory() as home:
        os.environ["STRUCTIO_HOME"] = home
        quiz = sio.Predict(
            Quiz,
            name="quiz",
            demos=[{"passage": "Water boils at 100 C.", "question": "When does water boil?"}],
        )
        path = sio.save_prompt(quiz)
        loaded = sio.load_prompt("quiz")
        print(f"saved {path.name}; loaded equal: {loaded == quiz}")
        print(loaded.to_string(passage="Ice melts at 0 C."))
        del os.environ["STRUCTIO_HOME"]


if __name__ == "__main__":
    main()
