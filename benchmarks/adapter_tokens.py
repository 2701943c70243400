"""Prompt tokens of each adapter on a nested extraction signature, and parse success.

The signature extracts an invoice: three levels of pydantic models (Invoice -> Party ->
Address, Invoice -> LineItem), lists, optionals, a Literal and an Enum, field constraints
(ge, le, gt, min_length, max_length) and descriptions on fields and models, with one model
used twice. For each adapter the prompt of one call (system + user message, no demos) is
counted in o200k_base tokens with structio's tokenizer (`rendering.tokens.count_chat`,
contents only); ToolOutputAdapter's tool definition, which providers count as prompt
too, is counted beside it as JSON text. DSPy 3.4.1's adapters (BAMLAdapter among them)
format the same signature, built from the same models, when DSPy is installed.

Then the parse corpus (tests/corpus, the completions answering a JSONAdapter prompt): how
many each JSON-reading adapter recovers, as `parse_corpus.py` counts them.

Run: python benchmarks/adapter_tokens.py
     (with DSPy: LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH=src /path/to/venv-with-dspy/bin/python
      benchmarks/adapter_tokens.py)
"""

from __future__ import annotations

import datetime
import enum
import json
import logging
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python
from tests.corpus import CASES, CUSTOM_TYPES, SPECS, Case

import structio as sio
from structio.adapters.compact_adapter import CompactAdapter
from structio.adapters.tool_output import ToolOutputAdapter
from structio.lm.profile import ModelProfile
from structio.rendering.tokens import count_chat, get_tokenizer

TARGET = 0.55  # CompactAdapter's prompt at most this share of JSONAdapter's


class Country(enum.Enum):
    """ISO 3166 country code."""

    US = "US"
    UK = "UK"
    FR = "FR"
    DE = "DE"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number, as printed")
    city: str
    postal_code: str | None = Field(None, max_length=10, description="If printed")
    country: Country


class Party(BaseModel):
    """A company or person named on the invoice."""

    name: str = Field(min_length=1, max_length=200)
    tax_id: str | None = Field(None, description="VAT or tax number")
    address: Address
    email: str | None = None


class LineItem(BaseModel):
    description: str = Field(min_length=1, max_length=200)
    quantity: float = Field(gt=0)
    unit_price: float = Field(ge=0, description="Price per unit before tax")
    tax_rate: float = Field(0, ge=0, le=1, description="Tax rate as a fraction, 0.2 for 20%")
    category: Literal["goods", "services", "shipping", "other"]


class Invoice(BaseModel):
    number: str = Field(description="The invoice number exactly as printed")
    issue_date: datetime.date
    due_date: datetime.date | None = None
    currency: Literal["USD", "EUR", "GBP"]
    seller: Party
    buyer: Party
    items: list[LineItem] = Field(min_length=1)
    total: float = Field(ge=0, description="The amount due, tax included")
    paid: bool


class BuyerAddress(Address):
    """A postal address."""


class Buyer(Party):
    """A company or person named on the invoice."""

    address: BuyerAddress


# The same invoice with no model used twice: DSPy's BAMLAdapter takes a model met twice
# anywhere in a type for a recursive one and refuses it, so it can format this form only.
# (No docstring: a model's docstring is part of the prompt.)
class InvoiceOnce(Invoice):
    buyer: Buyer


DOC = "Extract the invoice's details from the document. Leave out what it does not state."
VARIANTS = {"A": Invoice, "B": InvoiceOnce}  # A: Party used twice; B: every model once


def fields(invoice: type[BaseModel]) -> dict[str, tuple[Any, str, dict[str, Any]]]:
    """The outputs: (type, description, constraints) by name."""
    return {
        "invoice": (invoice, "Everything the document states about the invoice", {}),
        "confidence": (float, "How sure you are of the extraction", {"ge": 0, "le": 1}),
        "warnings": (list[str], "Anything unreadable or inconsistent", {}),
    }


DOCUMENT = """ACME GmbH, Hauptstr. 5, 10115 Berlin, DE - VAT DE123456789
INVOICE No. 2024-0117          Date: 2024-03-05        Due: 2024-04-04
Bill to: Blue Door Ltd, 12 King St, London EC2V 8AS, UK
2 x Widget A @ 19.50 EUR (VAT 19%)
1 x Installation service @ 120.00 EUR (VAT 19%)
Shipping 9.90 EUR
TOTAL DUE: 198.70 EUR"""
INPUTS = {"document": DOCUMENT}
INPUT_DESC = "The invoice text, OCR'd"


class StrictModel:
    """A model like gpt-4o: strict schemas, JSON mode, function calling."""

    profile = ModelProfile(json_schema=True, json_object=True, tools=True)


def structio_signature(invoice: type[BaseModel]) -> type[sio.Signature]:
    spec: dict[str, Any] = {"document": (str, sio.InputField(desc=INPUT_DESC))}
    for name, (annotation, desc, constraints) in fields(invoice).items():
        spec[name] = (annotation, sio.OutputField(desc=desc, **constraints))
    return sio.make_signature(spec, DOC, name="ExtractInvoice")


def structio_prompts(invoice: type[BaseModel]) -> dict[str, tuple[list[dict[str, Any]], str]]:
    """Each adapter's messages for one call, and the tools its request carries (as JSON)."""
    sig = structio_signature(invoice)
    tool = ToolOutputAdapter()
    tools = tool.request_params(sig, {}, StrictModel())["tools"]
    return {
        "ChatAdapter": (sio.ChatAdapter().format(sig, inputs=INPUTS), ""),
        "JSONAdapter": (sio.JSONAdapter().format(sig, inputs=INPUTS), ""),
        "XMLAdapter": (sio.XMLAdapter().format(sig, inputs=INPUTS), ""),
        "CompactAdapter": (CompactAdapter().format(sig, inputs=INPUTS), ""),
        "ToolOutputAdapter": (tool.format(sig, inputs=INPUTS), json.dumps(tools)),
    }


def dspy_prompts(invoice: type[BaseModel]) -> dict[str, list[dict[str, Any]] | str] | None:
    """DSPy 3.4.1's messages per adapter (the error, where it cannot format the signature)."""
    try:
        import dspy
        from dspy.adapters.baml_adapter import BAMLAdapter
    except ImportError:
        return None
    logging.getLogger("dspy").setLevel(logging.CRITICAL)
    spec: dict[str, Any] = {"document": (str, dspy.InputField(desc=INPUT_DESC))}
    for name, (annotation, desc, constraints) in fields(invoice).items():
        spec[name] = (annotation, dspy.OutputField(desc=desc, **constraints))
    sig = dspy.Signature(spec, DOC)
    found: dict[str, list[dict[str, Any]] | str] = {}
    for name, adapter in (
        ("ChatAdapter", dspy.ChatAdapter()),
        ("JSONAdapter", dspy.JSONAdapter()),
        ("XMLAdapter", dspy.XMLAdapter()),
        ("BAMLAdapter", BAMLAdapter()),
    ):
        try:
            found[name] = adapter.format(sig, demos=[], inputs=INPUTS)
        except Exception as exc:  # DSPy's own failure is a result here
            found[name] = f"fails: {exc}"
    return found


def outcome(adapter: Any, sigs: dict[str, Any], case: Case) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = to_jsonable_python(adapter.parse(sigs[case.sig], case.completion))
    except Exception:  # any failure to produce values counts as a refusal here
        return "refused" if case.must_fail else "rejected"
    if case.must_fail:
        return "hallucinated"
    return "recovered" if values == case.expected else "wrong"


def main() -> None:
    tokenizer = get_tokenizer("o200k_base")
    ours = {key: structio_prompts(invoice) for key, invoice in VARIANTS.items()}
    theirs = {key: dspy_prompts(invoice) for key, invoice in VARIANTS.items()}
    counts = {
        key: {name: count_chat(messages, tokenizer) for name, (messages, _) in prompts.items()}
        for key, prompts in ours.items()
    }
    print("## Prompt tokens (system + user messages, o200k_base)\n")
    print("A: the invoice signature (one model used twice); B: every model used once.\n")
    print("| adapter | A | ÷ JSONAdapter | B | ÷ JSONAdapter |")
    print("|---|---:|---:|---:|---:|")
    for name in ours["A"]:
        cells = []
        for key in VARIANTS:
            count = counts[key][name]
            cells += [f"{count:,}", f"{count / counts[key]['JSONAdapter']:.2f}"]
        print(f"| structio {name} | {' | '.join(cells)} |")
    cells = []
    for key in VARIANTS:  # providers count the tool definition as prompt too
        count = counts[key]["ToolOutputAdapter"] + tokenizer.count(
            ours[key]["ToolOutputAdapter"][1]
        )
        cells += [f"{count:,}", f"{count / counts[key]['JSONAdapter']:.2f}"]
    print(f"| structio ToolOutputAdapter + its tool (JSON) | {' | '.join(cells)} |")
    formatted = {key: found for key, found in theirs.items() if found is not None}
    if len(formatted) < len(VARIANTS):
        print("| DSPy 3.4.1 | not installed | — | not installed | — |")
    else:
        for name in formatted["A"]:
            cells = []
            for key in VARIANTS:
                messages = formatted[key][name]
                if isinstance(messages, str):
                    cells += ["fails", "—"]
                    continue
                count = count_chat(messages, tokenizer)
                cells += [f"{count:,}", f"{count / counts[key]['JSONAdapter']:.2f}"]
            print(f"| DSPy 3.4.1 {name} | {' | '.join(cells)} |")
        for key in VARIANTS:
            for name, failure in formatted[key].items():
                if isinstance(failure, str):
                    print(f"\nDSPy's {name} on {key}: {failure}")
    shares = [counts[key]["CompactAdapter"] / counts[key]["JSONAdapter"] for key in VARIANTS]
    verdict = "met" if max(shares) <= TARGET else "NOT met"
    print(
        "\nCompactAdapter / JSONAdapter = "
        + ", ".join(f"{key} {share:.2f}" for key, share in zip(VARIANTS, shares, strict=True))
        + f" (target <= {TARGET}): {verdict}\n"
    )

    print("## Parse corpus: the completions answering a JSONAdapter prompt\n")
    sigs = {k: sio.Signature(v, custom_types=CUSTOM_TYPES) for k, v in SPECS.items()}
    kinds = ["recovered", "rejected", "wrong", "refused", "hallucinated"]
    print("| adapter | cases | " + " | ".join(kinds) + " |")
    print("|---|---:|" + "---:|" * len(kinds))
    cases = CASES["json"]
    scores: dict[str, int] = {}
    readers: list[tuple[str, Any, dict[str, Any]]] = [
        (type(adapter).__name__, adapter, sigs)
        for adapter in (sio.JSONAdapter(), CompactAdapter(), ToolOutputAdapter())
    ]
    try:
        import dspy
        from dspy.adapters.baml_adapter import BAMLAdapter
    except ImportError:
        readers.append(("DSPy 3.4.1 BAMLAdapter", None, {}))
    else:
        theirs = {k: dspy.Signature(v, custom_types=CUSTOM_TYPES) for k, v in SPECS.items()}
        readers.append(("DSPy 3.4.1 BAMLAdapter", BAMLAdapter(), theirs))
    for name, adapter, signatures in readers:
        if adapter is None:
            print(f"| {name} | not installed |" + " — |" * len(kinds))
            continue
        tally = Counter(outcome(adapter, signatures, case) for case in cases)
        scores[name] = tally["recovered"] + tally["refused"]
        cells = " | ".join(str(tally[k]) for k in kinds)
        print(f"| {name} | {len(cases)} | {cells} |")
    correct = "met" if scores["CompactAdapter"] >= scores["JSONAdapter"] else "NOT met"
    print(
        f"\nCorrect (recovered + refused): CompactAdapter {scores['CompactAdapter']} of "
        f"{len(cases)}, JSONAdapter {scores['JSONAdapter']} (target: no fewer): {correct}"
    )

    print("\n## CompactAdapter's system message (A)\n")
    print(ours["A"]["CompactAdapter"][0][0]["content"])


if __name__ == "__main__":
    main()
