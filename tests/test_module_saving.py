"""`Module.save` / `load` / `dump_state` / `load_state`: a program's prompts, as DSPy's state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import structio as sio
from structio.exceptions import ConfigurationError, UsageError
from structio.testing import FakeLM


class Judge(sio.Signature):
    """Say whether the answer is right."""

    question: str = sio.InputField()
    answer: str = sio.InputField()
    ok: bool = sio.OutputField()


class Pipeline(sio.Module):
    def __init__(self) -> None:
        self.answer = sio.ChainOfThought("question -> answer")
        self.judges = [sio.Predict(Judge), sio.Predict(Judge)]

    def forward(self, question: str) -> sio.Prediction:
        answer = self.answer(question=question).answer
        return self.judges[0](question=question, answer=answer)


def taught() -> Pipeline:
    program = Pipeline()
    program.answer.demos = [sio.Example(question="1+1?", reasoning="add", answer="2")]
    program.judges[1].signature = Judge.with_instructions("Be strict.")
    program.judges[0].update_config(temperature=0.2)
    return program


def test_save_then_load_gives_each_predictor_its_prompt(tmp_path: Path) -> None:
    program = taught()
    program.save(tmp_path / "program.json")
    data = json.loads((tmp_path / "program.json").read_text())
    assert data["structio_program"] == 1
    assert list(data["predictors"]) == ["answer", "judges[0]", "judges[1]"]
    fresh = Pipeline()
    assert fresh.load(tmp_path / "program.json") is fresh
    for (name, loaded), (_, saved) in zip(
        fresh.named_predictors(), program.named_predictors(), strict=True
    ):
        assert loaded == saved, name
    assert fresh.judges[1].signature.instructions == "Be strict."
    assert fresh.judges[0].params == {"temperature": 0.2}
    # The loaded program runs with the loaded prompts.
    lm = FakeLM(["[[ ## reasoning ## ]]\nadd\n[[ ## answer ## ]]\n4", "[[ ## ok ## ]]\nTrue"])
    with sio.context(lm=lm):
        assert fresh(question="2+2?").ok is True
    assert "1+1?" in json.dumps(lm.history[0]["messages"])


def test_dump_state_round_trips_through_load_state() -> None:
    program = taught()
    state = program.dump_state()
    assert state == {name: p.to_dict() for name, p in program.named_predictors()}
    fresh = Pipeline()
    assert fresh.load_state(state) is fresh
    assert fresh.answer.demos == program.answer.demos


def test_a_file_of_another_program_changes_nothing(tmp_path: Path) -> None:
    program = taught()
    program.save(tmp_path / "program.json")

    class Other(sio.Module):
        def __init__(self) -> None:
            self.answer = sio.ChainOfThought("question -> answer")
            self.extra = sio.Predict("text -> label")

    other = Other()
    before = other.dump_state()
    with pytest.raises(ConfigurationError) as error:
        other.load(tmp_path / "program.json")
    message = str(error.value)
    assert "missing: extra" in message
    assert "not in this program: judges[0], judges[1]" in message
    assert other.dump_state() == before


def test_a_predictor_that_cannot_load_leaves_every_predictor_as_it_was(tmp_path: Path) -> None:
    program = taught()
    state = program.dump_state()
    state["judges[1]"] = sio.Predict("text -> label").to_dict()  # other fields
    fresh = Pipeline()
    before = fresh.dump_state()
    with pytest.raises(ConfigurationError, match=r"predictor 'judges\[1\]' holds a prompt for"):
        fresh.load_state(state)
    assert fresh.dump_state() == before  # `answer`, read first, was not changed either


def test_a_prompt_file_loads_into_a_program_of_one_predictor(tmp_path: Path) -> None:
    predict = sio.ChainOfThought("question -> answer")
    predict.demos = [sio.Example(question="q", reasoning="r", answer="a")]
    predict.save(tmp_path / "prompt.json")

    class One(sio.Module):
        def __init__(self) -> None:
            self.step = sio.ChainOfThought("question -> answer")

    one = One().load(tmp_path / "prompt.json")
    assert one.step.demos == predict.demos
    with pytest.raises(ConfigurationError, match="one saved prompt, and this program has 3"):
        Pipeline().load(tmp_path / "prompt.json")


def test_a_program_file_given_to_predict_load_says_what_it_is(tmp_path: Path) -> None:
    taught().save(tmp_path / "program.json")
    with pytest.raises(ConfigurationError, match=r"is a saved program.*program\.load\(path\)"):
        sio.Predict.load(tmp_path / "program.json")


def test_dspys_keywords_and_refusals(tmp_path: Path) -> None:
    program = taught()
    with pytest.raises(UsageError, match="never a pickled program"):
        program.save(tmp_path / "dir", save_program=True)
    program.save(tmp_path / "program.pkl")  # DSPy's pickle name: JSON all the same
    fresh = Pipeline().load(tmp_path / "program.pkl", allow_pickle=True)
    assert fresh.answer.demos == program.answer.demos
    (tmp_path / "junk.json").write_text("[1, 2]")
    with pytest.raises(ConfigurationError, match="is not a saved structio program"):
        Pipeline().load(tmp_path / "junk.json")
