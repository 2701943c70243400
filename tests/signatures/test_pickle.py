"""Signatures and fields survive pickle and cloudpickle: by reference, or rebuilt equal."""

from __future__ import annotations

import datetime
import json
import keyword
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar, Literal

import cloudpickle
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.predict.inputs import CALL_OPTIONS
from structio.predict.prediction import UNNAMEABLE_OUTPUTS
from structio.signatures import signature as signature_module

PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]


class Patient(pydantic.BaseModel):
    name: str
    born: datetime.date | None = None


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField(desc="The customer's words")
    patient: Patient | None = sio.InputField(default=None)
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(desc="1 (low) to 5 (high)", ge=1, le=5)


def round_trip(module: Any, value: Any) -> Any:
    return module.loads(module.dumps(value))


def system_message(sig: type[sio.Signature]) -> str:
    return sio.ChatAdapter().format_system_message(sig)


def assert_same_signature(again: type[sio.Signature], sig: type[sio.Signature]) -> None:
    assert again == sig
    assert again.__name__ == sig.__name__
    assert again.__module__ == sig.__module__
    assert again.instructions == sig.instructions
    assert again.__sig_explicit__ == sig.__sig_explicit__
    assert list(again.input_fields) == list(sig.input_fields)
    assert list(again.output_fields) == list(sig.output_fields)
    for name, field in sig.fields.items():
        copied = again.fields[name]
        assert copied.annotation == field.annotation
        assert (copied.prefix, copied.type_given) == (field.prefix, field.type_given)
    assert system_message(again) == system_message(sig)


@pytest.mark.parametrize("module", PICKLERS)
def test_a_class_defined_in_a_module_pickles_by_reference(module: Any) -> None:
    assert round_trip(module, Triage) is Triage
    assert len(module.dumps(Triage)) < 200  # a name, not the fields


@pytest.mark.parametrize("module", PICKLERS)
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: sio.Signature("context: list[str], question -> answer: int"), id="spec"
        ),
        pytest.param(lambda: sio.Signature("q -> a", "Answer in one word."), id="spec+doc"),
        pytest.param(
            lambda: sio.make_signature(
                {
                    "patient": (Patient, sio.InputField(desc="who")),
                    "ward": (int, sio.InputField(default=3, ge=1)),
                    "notes": (list[str], sio.OutputField(default_factory=list, prefix="N:")),
                    "level": ("Literal['low', 'high']", sio.OutputField()),
                },
                "Triage the patient.",
                name="Ward",
            ),
            id="make_signature",
        ),
        pytest.param(lambda: Triage.append("reason", sio.OutputField()), id="derived"),
        pytest.param(lambda: Triage.with_instructions("Be brief."), id="new-instructions"),
        pytest.param(lambda: sio.Signature.from_dict(Triage.to_dict()), id="from_dict"),
    ],
)
def test_signatures_made_at_run_time_are_rebuilt_equal(module: Any, make: Any) -> None:
    sig = make()
    again = round_trip(module, sig)
    assert_same_signature(again, sig)


def test_a_rebuilt_signature_is_built_once_per_process() -> None:
    sig = sio.Signature("q -> a: int")
    blob = pickle.dumps(sig)
    first = pickle.loads(blob)  # noqa: S301 - the test's own bytes
    assert first is not sig  # built anew here...
    again = pickle.loads(blob)  # noqa: S301
    assert again is first  # ...once: the next unpickle is that class again
    assert round_trip(pickle, first) is first  # and shipped on, it keeps its identity
    # Equal signatures made apart stay apart, names and all.
    other = sio.Signature("q -> a: int").with_instructions(sig.instructions)
    assert other == sig
    assert round_trip(pickle, other) is not first


def test_the_prompt_memo_stays_behind() -> None:
    sig = sio.Signature("q -> a: int")
    sio.ChatAdapter().format(sig, inputs={"q": "hi"})
    assert sig.__structio_cache__  # the adapter's plan is memoised on the class
    again = round_trip(pickle, sig)
    assert dict(again.__structio_cache__) == {}
    assert round_trip(cloudpickle, sig.__structio_cache__) == {}
    # Rebuilt on first use over there, the same prompt.
    assert sio.ChatAdapter().format(again, inputs={"q": "hi"}) == sio.ChatAdapter().format(
        sig, inputs={"q": "hi"}
    )


def make_local_signature() -> type[sio.Signature]:
    class Local(sio.Signature):
        """Summarise the text."""

        limit: ClassVar[int] = 3
        text: str = sio.InputField()
        summary: str = sio.OutputField(desc="at most three sentences")

    return Local


@pytest.mark.parametrize("module", PICKLERS)
def test_a_class_defined_in_a_function(module: Any) -> None:
    sig = make_local_signature()
    again = round_trip(module, sig)
    assert_same_signature(again, sig)
    assert again.__qualname__ == sig.__qualname__
    assert again.limit == 3
    assert again.__doc__ == sig.__doc__


def test_cloudpickle_ships_a_signature_with_methods_defined_in_a_function() -> None:
    def make() -> type[sio.Signature]:
        class WithMethod(sio.Signature):
            """Answer."""

            question: str = sio.InputField()
            answer: str = sio.OutputField()

            @classmethod
            def shout(cls) -> str:
                return cls.__name__.upper()

        return WithMethod

    sig = make()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(sig)  # its method is a local function: pickle cannot name it
    again = round_trip(cloudpickle, sig)
    assert again == sig
    assert again.shout() == "WITHMETHOD"


@pytest.mark.parametrize("module", PICKLERS)
def test_fields_pickle_and_stay_immutable(module: Any) -> None:
    unbound = sio.OutputField(desc="score", ge=0, le=10, default=5)
    again = round_trip(module, unbound)
    assert again == unbound
    assert repr(again) == repr(unbound)
    assert dict(again.constraints) == {"ge": 0, "le": 10}
    with pytest.raises(AttributeError, match="immutable"):
        again.desc = "x"
    bound = Triage.fields["patient"]
    copied = round_trip(module, bound)
    assert copied == bound
    assert copied.admits_none
    assert not copied.required
    assert copied.default is None
    assert round_trip(module, Triage.fields["urgency"]).default is sio.signatures.MISSING


def test_cloudpickle_ships_a_default_factory_that_pickle_cannot() -> None:
    sig = sio.make_signature(
        {
            "q": (str, sio.InputField()),
            "tags": (list[str], sio.OutputField(default_factory=lambda: ["x"])),
        }
    )
    again = round_trip(cloudpickle, sig)
    assert again.fields["tags"].get_default() == ["x"]
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(sig)


def test_copying_a_signature_keeps_it() -> None:
    import copy

    sig = sio.Signature("q -> a")
    assert copy.copy(sig) is sig
    assert copy.deepcopy(sig) is sig
    wrapped = signature_module.portable(sig)
    assert signature_module.from_portable(copy.deepcopy(wrapped)) is sig
    assert signature_module.from_portable(sig) is sig


# -- random specs -----------------------------------------------------------------------------

# Names a signature takes, less those `Predict` refuses (an input named like a call option,
# `lm`; an output named `keys`): hypothesis finds them.
REFUSED_BY_PREDICT = frozenset(CALL_OPTIONS) | UNNAMEABLE_OUTPUTS
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: (
        not keyword.iskeyword(name)
        and not keyword.issoftkeyword(name)
        and name not in REFUSED_BY_PREDICT
    )
)
TYPE_TEXTS = [
    "",
    ": int",
    ": list[str]",
    ": dict[str, int]",
    ": Literal['a', 'b c']",
    ": int | None",
    ": float",
    ": bool",
    ": tuple[int, ...]",
    ": Optional[list[int]]",
]


@st.composite
def specs(draw: st.DrawFn) -> tuple[str, str | None]:
    names = draw(st.lists(NAMES, min_size=2, max_size=6, unique=True))
    cut = draw(st.integers(1, len(names) - 1))
    parts = [name + draw(st.sampled_from(TYPE_TEXTS)) for name in names]
    spec = f"{', '.join(parts[:cut])} -> {', '.join(parts[cut:])}"
    instructions = draw(st.none() | st.text(min_size=1, max_size=30).filter(str.strip))
    return spec, instructions


@given(specs(), st.sampled_from(["pickle", "cloudpickle"]))
@settings(max_examples=150, deadline=None)
def test_random_specs_round_trip(drawn: tuple[str, str | None], which: str) -> None:
    spec, instructions = drawn
    module: Any = pickle if which == "pickle" else cloudpickle
    sig = sio.Signature(spec, instructions)
    again = round_trip(module, sig)
    assert_same_signature(again, sig)
    predict = sio.Predict(spec) if instructions is None else sio.Predict(sig)
    copied = round_trip(module, predict)
    assert copied == predict
    assert copied.signature == predict.signature


# -- in another process -----------------------------------------------------------------------

LOADER = """
import json, pickle, sys

import structio as sio

with open(sys.argv[1], "rb") as handle:
    loaded = pickle.load(handle)
# A Predict stands for its signature.
signatures = [item.signature if isinstance(item, sio.Predict) else item for item in loaded]
adapter = sio.ChatAdapter()
print(json.dumps([
    {"data": sig.to_dict(), "name": sig.__name__, "system": adapter.format_system_message(sig)}
    for sig in signatures
]))
"""

MAIN_SCRIPT = """
import sys

import cloudpickle

import structio as sio


class Review(sio.Signature):
    \"\"\"Rate the review.\"\"\"

    text: str = sio.InputField()
    stars: int = sio.OutputField(ge=1, le=5)


spec = sio.Signature("q -> a: list[int]", "Count.")
with open(sys.argv[1], "wb") as handle:
    cloudpickle.dump([Review, spec, sio.Predict(Review)], handle)
"""


def described(signatures: list[type[sio.Signature]]) -> list[dict[str, Any]]:
    return [
        {"data": s.to_dict(), "name": s.__name__, "system": system_message(s)} for s in signatures
    ]


def load_elsewhere(path: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", LOADER, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("module", PICKLERS)
def test_signatures_unpickled_in_a_new_process(module: Any, tmp_path: Path) -> None:
    signatures = [
        sio.Signature("context: list[str], question -> answer: int", "Answer."),
        sio.make_signature({"x": (int, sio.InputField(ge=0)), "y": (str, sio.OutputField())}),
        Triage.delete("patient"),
        make_local_signature(),
    ]
    path = tmp_path / "signatures.pkl"
    path.write_bytes(module.dumps(signatures))
    assert load_elsewhere(path) == described(signatures)


def test_a_signature_of_a_scripts_main_module_travels_with_cloudpickle(tmp_path: Path) -> None:
    # What a Ray driver does: classes of its __main__ go by value to workers that lack them.
    path = tmp_path / "main.pkl"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MAIN_SCRIPT), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = load_elsewhere(path)
    assert [item["name"] for item in loaded] == ["Review", "StringSignature", "Review"]
    assert loaded[0]["data"]["instructions"] == "Rate the review."
    assert loaded[0] == loaded[2]
    assert loaded[1]["data"]["fields"][1]["type"] == "list[int]"
    assert "less than or equal to: 5" in loaded[0]["system"]


def test_equal_signatures_keep_their_names_in_a_predict(tmp_path: Path) -> None:
    # cloudpickle alone ships a class it cannot import by its own means, which tell classes
    # apart by ==: equal signatures named apart would arrive as one. A Predict sends its
    # signature the way structio pickles it, so each keeps its name (the JSON schema's).
    first = sio.make_signature("q -> a", name="First")
    second = sio.make_signature("q -> a", name="Second")
    assert first == second
    path = tmp_path / "predicts.pkl"
    path.write_bytes(cloudpickle.dumps([sio.Predict(first), sio.Predict(second)]))
    assert [item["name"] for item in load_elsewhere(path)] == ["First", "Second"]
