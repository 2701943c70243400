"""structio versions of the signatures in tests/golden/dspy-3.4.1 (their `signature_source`)."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, Field

import structio as sio


class ContextQA(sio.Signature):
    """Answer the question using only the given context.
    Keep the answer short."""

    context: list[str] = sio.InputField(desc="retrieved passages")
    question: str = sio.InputField()
    answer: str = sio.OutputField(desc="often between 1 and 5 words")


StringQA = sio.Signature("context, question -> answer")
CoTQA = ContextQA.prepend("reasoning", sio.OutputField(desc="${reasoning}"), type_=str)


class Urgency(enum.Enum):
    LOW = "low"
    HIGH = "high"


class TicketTriage(sio.Signature):
    """Classify the support ticket.

    Be conservative: prefer `other` when unsure."""

    ticket: str = sio.InputField(desc="raw ticket text")
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: Urgency = sio.OutputField()
    needs_human: bool = sio.OutputField()
    confidence: float = sio.OutputField(ge=0.0, le=1.0, desc="probability in [0, 1]")
    priority: int = sio.OutputField(ge=1, le=5)


class Address(BaseModel):
    """A postal address."""

    city: str
    country: Literal["US", "CA"] = Field(description="ISO country code")


class Patient(BaseModel):
    name: str = Field(description="Full name")
    age: int | None = None
    address: Address | None = None


class Clinic(BaseModel):
    clinic_name: str
    city: str


class ExtractPatients(sio.Signature):
    """Extract every patient mentioned in the note."""

    note: str = sio.InputField()
    clinic: Clinic = sio.InputField(desc="where the note was written")
    patients: list[Patient] = sio.OutputField()
    primary: Patient = sio.OutputField(desc="the main patient")
    notes: str | None = sio.OutputField()


class ChatTurn(sio.Signature):
    """Answer the user's latest question, using the conversation so far."""

    question: str = sio.InputField()
    history: sio.History = sio.InputField()
    answer: str = sio.OutputField()


class Sentiment(sio.Signature):
    """Classify sentiment of a product review."""

    review: str = sio.InputField()
    product: str = sio.InputField()
    sentiment: Literal["positive", "negative", "neutral"] = sio.OutputField()
    rationale: str = sio.OutputField()


Reason = sio.Signature("question -> reasoning, answer: int")

BY_FILE = {
    "golden_qa_context.json": {"ContextQA": ContextQA, "StringQA": StringQA, "CoTQA": CoTQA},
    "golden_classify_literal.json": {None: TicketTriage},
    "golden_extract_pydantic.json": {None: ExtractPatients},
    "golden_history.json": {None: ChatTurn},
    "golden_demos.json": {None: Sentiment},
    "golden_parse.json": {None: Reason},
}
