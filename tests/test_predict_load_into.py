"""`predictor.load(path)` fills that predictor (DSPy's spelling); `Predict.load` builds one."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pydantic
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


def test_the_instances_model_wins_over_the_files(tmp_path: Path) -> None:
    path = saved(tmp_path, lm=sio.LM("openai/gpt-4o-mini", temperature=0))
    mine = sio.FakeLM([])
    predictor = sio.Predict(QA, lm=mine)
    predictor.load(path)
    assert predictor.lm is mine
    assert predictor.demos == [{"question": "1+1?", "answer": 2}]


def test_an_instance_without_a_model_takes_the_files(tmp_path: Path) -> None:
    path = saved(tmp_path, lm=sio.LM("openai/gpt-4o-mini", temperature=0))
    predictor = sio.Predict(QA).load(path)
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


def with_endpoint(tmp_path: Path) -> Path:
    path = tmp_path / "withlm.json"
    lm = sio.LM("openai/gpt-4o-mini", api_base="http://elsewhere.example/v1")
    sio.Predict(QA, lm=lm, demos=[{"question": "1+1?", "answer": 2}]).save(path)
    return path


def test_the_endpoint_refusal_advice_runs_as_written(tmp_path: Path) -> None:
    path = with_endpoint(tmp_path)
    with pytest.raises(
        sio.ConfigurationError, match=r"give the model yourself \(Predict.load\(path, lm=my_lm\)"
    ):
        sio.Predict.load(path)
    mine = sio.FakeLM([{"answer": 4}])
    loaded = sio.Predict.load(path, lm=mine)  # the advice, on the class
    assert loaded.lm is mine
    assert loaded(question="2+2?").answer == 4
    assert loaded.demos == [{"question": "1+1?", "answer": 2}]
    into = sio.Predict(QA).load(path, lm=mine)  # and on an instance
    assert into.lm is mine


def test_loading_into_an_instance_with_a_model_keeps_it_without_refusing(tmp_path: Path) -> None:
    path = with_endpoint(tmp_path)
    mine = sio.FakeLM([{"answer": 4}])
    predictor = sio.Predict("question -> answer: int", lm=mine).load(path)  # DSPy's way
    assert predictor.lm is mine
    other = sio.FakeLM([])
    assert sio.Predict(QA, lm=mine).load(path, lm=other).lm is other  # lm= wins over both


def test_an_endpoint_in_the_files_parameters_is_not_used_with_an_lm_given(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "params.json"
    sio.Predict(QA, api_base="http://elsewhere.example/v1", temperature=0.5).save(path)
    with pytest.raises(
        sio.ConfigurationError, match=r"give the model yourself \(Predict.load\(path, lm=my_lm\)"
    ):
        sio.Predict.load(path)
    with caplog.at_level(logging.WARNING, logger="structio"):
        loaded = sio.Predict.load(path, lm=sio.FakeLM([]))
    assert loaded.params == {"temperature": 0.5}
    assert "api_base='http://elsewhere.example/v1' is not used" in caplog.text
    trusted = sio.Predict.load(path, lm=sio.FakeLM([]), trust_endpoint=True)
    assert trusted.params["api_base"] == "http://elsewhere.example/v1"


def test_load_refuses_a_model_string(tmp_path: Path) -> None:
    path = saved(tmp_path)
    with pytest.raises(sio.ConfigurationError, match=r"pass lm=structio\.LM\('openai/x'\)"):
        sio.Predict.load(path, lm="openai/x")  # type: ignore[arg-type]
    predictor = sio.Predict(QA)
    with pytest.raises(sio.ConfigurationError, match="not the string"):
        predictor.load(path, lm="openai/x")  # type: ignore[arg-type]
    assert predictor.demos == []  # refused before anything was loaded


# A class of the script that saved a file: its module is __main__ (here, pytest's).
ScriptPerson = pydantic.create_model("Person", __module__="__main__", name=(str, ...))


class Extract(sio.Signature):
    """Extract the person."""

    text: str = sio.InputField()
    person: ScriptPerson = sio.OutputField()  # type: ignore[valid-type]


def saved_from_a_script(tmp_path: Path) -> Path:
    path = tmp_path / "extract.json"
    sio.Predict(Extract, demos=[{"text": "Ann here", "person": {"name": "Ann"}}]).save(path)
    data = json.loads(path.read_text())
    assert data["signature"]["fields"][1]["type"] == "__main__:Person"
    data["signature"]["module"] = "__main__"  # as a script writes it
    path.write_text(json.dumps(data))
    return path


def test_types_of_the_saving_script_load_into_a_predictor_built_with_the_signature(
    tmp_path: Path,
) -> None:
    path = saved_from_a_script(tmp_path)
    with pytest.raises(sio.SignatureError) as info:
        sio.Predict.load(path)
    message = str(info.value)
    assert "'__main__:Person' is not importable" in message
    assert "defined in the script that saved the file" in message
    assert "structio.Predict(Extract).load(path)" in message  # the advice, which works:
    predictor = sio.Predict(Extract).load(path)
    assert predictor.demos == [{"text": "Ann here", "person": ScriptPerson(name="Ann")}]
    assert predictor.signature.output_fields["person"].annotation is ScriptPerson


def test_the_advice_for_a_file_of_other_fields_fits_the_file(tmp_path: Path) -> None:
    other = sio.Predict("text -> summary")
    with pytest.raises(sio.ConfigurationError, match=r"structio\.Predict\.load\(path\)"):
        other.load(saved(tmp_path))
    with pytest.raises(sio.ConfigurationError) as info:
        other.load(saved_from_a_script(tmp_path))
    message = str(info.value)
    assert "structio.Predict.load(path)" not in message  # it would fail for this file
    assert "__main__:Person" in message
    assert "structio.Predict(Extract).load(path)" in message
