"""`predictor.load(path)` fills that predictor (DSPy's spelling); `Predict.load` builds one."""

from __future__ import annotations

from pathlib import Path

import pytest

import structio as sio

QA = sio.Signature("question -> answer: int", "Answer with a number.")


def saved(tmp_path: Path, **options: object) -> Path:
    path = tmp_path / "qa.json"
    demos = [{"question": "1+1?", "answer": 2}]
    sio.Predict(QA, demos=demos, temperature=0.2, name="qa", **options).save(path)  # type: ignore[arg-type]
    return path


def test_load_on_an_instance_loads_into_it_and_returns_it(tmp_path: Path) -> None:
    path = saved(tmp_path)
    lm = sio.FakeLM([{"answer": 4}])
    predictor = sio.Predict("question -> answer: int", lm=lm)
    assert predictor.demos == []
    returned = predictor.load(path)
    assert returned is predictor
    assert predictor.demos == [{"question": "1+1?", "answer": 2}]
    assert predictor.params == {"temperature": 0.2}
    assert predictor.name == "qa"
    assert predictor.signature.instructions == "Answer with a number."
    # The file has no model: the instance keeps its own, and the demos reach it.
    assert predictor.lm is lm
    assert predictor(question="2+2?").answer == 4
    assert "1+1?" in str(lm.calls[0].messages)


def test_load_on_the_class_still_builds_a_new_predictor(tmp_path: Path) -> None:
    loaded = sio.Predict.load(saved(tmp_path))
    assert isinstance(loaded, sio.Predict)
    assert loaded.demos == [{"question": "1+1?", "answer": 2}]
    assert loaded.lm is None


def test_a_saved_model_replaces_the_instances(tmp_path: Path) -> None:
    path = saved(tmp_path, lm=sio.LM("openai/gpt-4o-mini", temperature=0))
    predictor = sio.Predict(QA, lm=sio.FakeLM([]))
    predictor.load(path)
    assert isinstance(predictor.lm, sio.LM)
    assert predictor.lm.model == "openai/gpt-4o-mini"


def test_a_file_of_other_fields_is_refused_and_the_instance_is_unchanged(tmp_path: Path) -> None:
    path = saved(tmp_path)
    other = sio.Predict("text -> summary")
    with pytest.raises(sio.ConfigurationError, match=r"'question -> answer'.*'text -> summary'"):
        other.load(path)
    assert list(other.signature.input_fields) == ["text"]


def test_loading_into_an_instance_keeps_the_file_rules(tmp_path: Path) -> None:
    path = tmp_path / "remote.json"
    sio.Predict(QA, api_base="http://elsewhere.example/v1").save(path)
    with pytest.raises(sio.ConfigurationError, match="trust_endpoint"):
        sio.Predict(QA).load(path)
    predictor = sio.Predict(QA).load(path, trust_endpoint=True)
    assert predictor.params == {"api_base": "http://elsewhere.example/v1"}
