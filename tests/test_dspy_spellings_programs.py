"""DSPy's spellings of programs, tools, saving and adapters, each as DSPy means it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import structio as dspy
from structio.example import Demo
from structio.exceptions import UsageError
from structio.testing import FakeLM


def weather(city: str) -> str:
    """Get weather information for a city."""
    return f"sunny in {city}"


def test_tool_desc_is_the_description_and_a_keyword() -> None:
    assert dspy.Tool(weather).desc == "Get weather information for a city."
    assert dspy.Tool(weather, desc="Weather.").description == "Weather."
    with pytest.raises(UsageError, match="once"):
        dspy.Tool(weather, desc="a", description="b")


@pytest.mark.parametrize(
    "functions",
    [{"weather": weather}, [weather], [dspy.Tool(weather)]],
    ids=["dict", "list-of-functions", "list-of-tools"],  # ids must not hold addresses (xdist)
)
def test_execute_takes_dspys_functions_keyword(functions: object) -> None:
    call = dspy.ToolCall(name="weather", args={"city": "Oslo"})
    assert call.execute(functions=functions) == "sunny in Oslo"
    assert asyncio.run(call.aexecute(functions=functions)) == "sunny in Oslo"
    with pytest.raises(UsageError, match="once"):
        call.execute([weather], functions=[weather])


def test_demos_have_dspys_to_dict() -> None:
    predict = dspy.Predict("question -> answer")
    predict.demos = [dspy.Example(question="1+1?", answer="2")]
    predict.demos.append({"question": "2+2?", "answer": "4"})
    assert [d.toDict() for d in predict.demos] == [
        {"question": "1+1?", "answer": "2"},
        {"question": "2+2?", "answer": "4"},
    ]
    assert isinstance(predict.demos[0], Demo)


def test_save_program_false_saves_json_and_true_is_refused(tmp_path: Path) -> None:
    predict = dspy.ChainOfThought("question -> answer")
    predict.demos = [dspy.Example(question="1+1?", reasoning="add", answer="2")]
    predict.save(tmp_path / "program.pkl", save_program=False)  # DSPy's pickle name
    assert json.loads((tmp_path / "program.pkl").read_text())["demos"]
    loaded = dspy.ChainOfThought("question -> answer")
    loaded.load(tmp_path / "program.pkl", allow_pickle=True)
    assert loaded.demos == predict.demos
    with pytest.raises(UsageError, match=r"predict\.save\(path\)"):
        predict.save(tmp_path / "dir", save_program=True)
    assert not (tmp_path / "dir").exists()


def test_prediction_passed_for_a_str_input_is_its_one_output() -> None:
    lm = FakeLM([{"reasoning": "r", "answer": "Paris"}, {"simplified_answer": "P"}])
    first = dspy.ChainOfThought("question -> answer", lm=lm)(question="Capital?")
    dspy.Predict("answer -> simplified_answer", lm=lm)(answer=first)
    assert "Paris" in lm.calls[1].prompt
    assert "Prediction(" not in lm.calls[1].prompt


class TwoStep(dspy.Module):
    def __init__(self) -> None:  # no super().__init__(), as DSPy's docs write it
        self.first = dspy.Predict("question -> answer")
        self.steps = [dspy.ChainOfThought("answer -> simplified_answer")]

    def forward(self, question: str) -> dspy.Prediction:
        return self.steps[0](answer=self.first(question=question))


def test_module_subclass_calls_forward_and_lists_predictors() -> None:
    lm = FakeLM([{"answer": "a"}, {"reasoning": "r", "simplified_answer": "s"}])
    program = TwoStep()
    assert [name for name, _ in program.named_predictors()] == ["first", "steps[0]"]
    program.set_lm(lm)
    assert program.get_lm() is lm
    assert program(question="q").simplified_answer == "s"
    assert dspy.Predict("q -> a").named_predictors()[0][0] == "self"
    assert isinstance(dspy.Predict("q -> a"), dspy.Module)
    copied = program.reset_copy()
    assert copied.first is not program.first


def test_module_acall_uses_aforward_or_forward() -> None:
    lm = FakeLM([{"answer": "a"}, {"reasoning": "r", "simplified_answer": "s"}])
    program = TwoStep()
    program.set_lm(lm)
    assert asyncio.run(program.acall(question="q")).simplified_answer == "s"
    with pytest.raises(UsageError, match="forward"):
        dspy.Module()()


def test_parallel_runs_pairs_in_order() -> None:
    lm = FakeLM(lambda messages, **_: {"answer": messages[-1]["content"][-6:-1]})
    predict = dspy.Predict("question -> answer", lm=lm)
    pairs = [(predict, dspy.Example(question=f"q{i}").with_inputs("question")) for i in range(4)]
    results = dspy.Parallel(num_threads=2)(pairs)
    assert len(results) == 4
    assert all(isinstance(r, dspy.Prediction) for r in results)


@pytest.mark.parametrize(
    "name", ["ReAct", "CodeAct", "ProgramOfThought", "Refine", "MultiChainComparison"]
)
def test_looping_modules_are_refused_naming_structios_way(name: str) -> None:
    with pytest.raises(UsageError, match=rf"structio has no {name}: .*(ToolCalls|Predict|BestOfN)"):
        getattr(dspy, name)("question -> answer", tools=[weather])


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter, dspy.JSONAdapter])
def test_use_native_function_calling_is_native_tools(adapter: type) -> None:
    assert adapter(use_native_function_calling=False).native_tools is False
    assert adapter(use_native_function_calling=True).native_tools is True
    with pytest.raises(ValueError, match="not both"):
        adapter(native_tools=True, use_native_function_calling=True)


def test_best_of_n_stops_at_the_threshold_and_samples_uncached() -> None:
    lm = FakeLM(
        [
            {"reasoning": "r", "answer": "Brussels, Belgium"},
            {"reasoning": "r", "answer": "Brussels"},
        ]
    )
    qa = dspy.ChainOfThought("question -> answer", lm=lm)

    def one_word(args: dict[str, object], pred: dspy.Prediction) -> float:
        assert args == {"question": "Capital of Belgium?"}
        return 1.0 if len(pred.answer.split()) == 1 else 0.0

    best = dspy.BestOfN(module=qa, N=3, reward_fn=one_word, threshold=1.0)
    assert best(question="Capital of Belgium?").answer == "Brussels"
    assert len(lm.calls) == 2
    assert lm.calls[0].params["temperature"] == 1.0
    assert qa.params == {}  # the attempts ran on copies


def test_best_of_n_keeps_the_best_and_counts_failures() -> None:
    def shortest(_: object, pred: dspy.Prediction) -> float:
        return -len(pred.answer)

    def predict(lm: FakeLM) -> dspy.Predict:
        return dspy.Predict("q -> answer", lm=lm, adapter=dspy.ChatAdapter(fallback=None))

    lm = FakeLM([{"answer": "a b"}, "unreadable", {"answer": "a b c"}])
    assert dspy.BestOfN(predict(lm), 3, shortest, 0)(q="x").answer == "a b"
    assert len(lm.calls) == 3
    strict = dspy.BestOfN(predict(FakeLM(["?"])), 2, shortest, 0, fail_count=0)
    with pytest.raises(dspy.ParseError):
        strict(q="x")
