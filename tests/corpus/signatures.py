"""Signatures of the parsing corpus, as string specs (so DSPy can build the same ones)."""

from __future__ import annotations

import enum

from pydantic import BaseModel


class Person(BaseModel):
    name: str
    age: int


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


CUSTOM_TYPES = {"Person": Person, "Color": Color}

SPECS: dict[str, str] = {
    "qa": "question -> answer: int",
    "reason": "question -> reasoning, answer: int",
    "triage": "ticket -> category: Literal['billing', 'bug', 'other'], urgency: int, needs_human: bool",
    "needs": "ticket -> needs_human: bool, reason_text",
    "extract": "note -> names: list[str], count: int",
    "tags": "text -> tags: list[str]",
    "person": "text -> person: Person",
    "people": "text -> people: list[Person]",
    "summary": "text -> summary",
    "address": "text -> zip_code, city",
    "optional": "text -> maybe: Optional[int], note: Optional[str]",
    "color": "text -> color: Color",
    "price": "text -> price: float",
    "flag": "text -> flag: bool",
    "score": "review -> score: float, label: Literal['pos', 'neg']",
    "level": "text -> level: Literal[1, 2, 3]",
    "counts": "text -> counts: dict[str, int]",
}
