"""DSPy's `Module` methods on a program: parameters, sub-modules, mapping, batch, Parallel."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pytest

import structio as sio
from structio.testing import FakeLM


class Inner(sio.Module):
    def __init__(self) -> None:
        self.qa = sio.Predict("question -> answer")

    def forward(self, question: str) -> sio.Prediction:
        return self.qa(question=question)


class Outer(sio.Module):
    def __init__(self) -> None:
        self.inner = Inner()
        self.steps = [sio.Predict("text -> label"), {"judge": sio.ChainOfThought("a -> ok: bool")}]
        self.pair = (sio.Predict("x -> y"),)

    def forward(self, question: str) -> sio.Prediction:
        return self.inner(question=question)


def test_parameters_are_the_predictors() -> None:
    program = Outer()
    names = ["inner.qa", "steps[0]", "steps[1]['judge']", "pair[0]"]
    assert [name for name, _ in program.named_parameters()] == names
    assert program.named_parameters() == program.named_predictors()
    assert program.parameters() == program.predictors()


def test_named_sub_modules_go_breadth_first() -> None:
    program = Outer()
    found = dict(program.named_sub_modules())
    assert list(found) == [
        "self",
        "self.inner",
        "self.steps[0]",
        "self.steps[1]['judge']",
        "self.pair[0]",
        "self.inner.qa",
    ]
    assert found["self.inner.qa"] is program.inner.qa
    only_inner = [name for name, _ in program.named_sub_modules(type_=Inner)]
    assert only_inner == ["self.inner"]


def test_map_named_predictors_replaces_each_in_its_place() -> None:
    program = Outer()
    before = program.predictors()
    assert program.map_named_predictors(lambda p: p.deepcopy()) is program
    after = program.predictors()
    assert len(after) == len(before) == 4
    assert all(a is not b and a == b for a, b in zip(after, before, strict=True))
    assert isinstance(program.pair, tuple)
    assert program.steps[1]["judge"] is after[2]


def test_batch_runs_the_program_on_each_example() -> None:
    def reply(messages: list[dict[str, str]]) -> str:
        question = re.search(r"\[\[ ## question ## \]\]\n(\w+)", messages[-1]["content"])
        assert question is not None
        return f"[[ ## answer ## ]]\n{question[1]}"

    lm = FakeLM(reply)
    examples = [sio.Example(question=f"q{i}", answer="x").with_inputs("question") for i in range(5)]
    with sio.context(lm=lm):
        results = Inner().batch(examples, num_threads=2)
    assert [r.answer for r in results] == [f"q{i}" for i in range(5)]


def test_batch_returns_failed_examples_with_their_errors() -> None:
    def reply(messages: list[dict[str, str]]) -> str:
        if "bad" in messages[-1]["content"]:
            raise sio.ServerError("down")
        return "[[ ## answer ## ]]\nok"

    examples = [sio.Example(question=q).with_inputs("question") for q in ("a", "bad1", "b", "bad2")]
    with sio.context(lm=FakeLM(reply)):
        results, failed, errors = Inner().batch(
            examples, num_threads=2, max_errors=5, return_failed_examples=True
        )
        assert [r and r.answer for r in results] == ["ok", None, "ok", None]
        assert failed == [examples[1], examples[3]]
        assert all(isinstance(e, sio.ServerError) for e in errors)
        with pytest.raises(sio.ServerError):
            Inner().batch(examples, num_threads=1)  # no error tolerated by default
    pairs = [(Inner(), example) for example in examples[:1]]
    with sio.context(lm=FakeLM(reply)):
        assert sio.Parallel().forward(pairs)[0].answer == "ok"


def test_inspect_history_prints_the_last_calls() -> None:
    program = Inner()
    with sio.context(lm=FakeLM(["[[ ## answer ## ]]\nParis"])):
        program(question="Capital of France?")
    out = io.StringIO()
    with redirect_stdout(out):
        assert program.inspect_history(1) is None
    assert "Capital of France?" in out.getvalue()
    assert "Paris" in out.getvalue()
