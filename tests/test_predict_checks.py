"""What a Predict holds is checked whenever it is set: demos, the LM, the adapter, the outputs."""

from __future__ import annotations

import asyncio
import copy
import pickle

import pytest

import structio as sio

QA = sio.Signature("question -> answer: int")


def predictor() -> sio.Predict:
    return sio.Predict(QA, lm=sio.FakeLM([{"answer": 3}] * 3))


# -- demos ------------------------------------------------------------------------------------


def test_assigned_demos_are_checked_as_the_constructors() -> None:
    qa = predictor()
    with pytest.raises(sio.FormatError, match=r"demo 0: `qestion` is not a field.*`question`"):
        qa.demos = [{"qestion": "1+1", "answer": 2}]
    assert qa.demos == []  # the failed assignment left the demos as they were
    qa.demos = [{"question": "1+1", "answer": "2"}]
    assert qa.demos == [{"question": "1+1", "answer": 2}]  # converted to the field's type
    with pytest.raises(sio.FormatError, match="demo 0: field `answer`"):
        qa.demos = [{"question": "1+1", "answer": "two"}]
    with pytest.raises(sio.FormatError, match="demos must be a list of dicts"):
        qa.demos = {"question": "1+1"}  # type: ignore[assignment]


def test_demos_added_to_the_list_are_checked_where_they_are_added() -> None:
    qa = predictor()
    qa.demos.append({"question": "1+1", "answer": 2})
    with pytest.raises(sio.FormatError, match=r"demo 1: `qestion` is not a field"):
        qa.demos.append({"qestion": "2+2", "answer": 4})
    with pytest.raises(sio.FormatError, match=r"demo 2: `answr` is not a field"):
        qa.demos.extend([{"question": "2+2", "answer": 4}, {"answr": 5}])
    with pytest.raises(sio.FormatError, match=r"demo 0 must be a dict"):
        qa.demos.insert(0, "2+2=4")
    with pytest.raises(sio.FormatError, match=r"demo 0: field `answer`"):
        qa.demos[0] = {"answer": "many"}
    with pytest.raises(sio.FormatError, match=r"demo 1: `qestion`"):
        qa.demos += [{"qestion": "x"}]
    assert qa.demos == [{"question": "1+1", "answer": 2}]  # nothing bad went in
    qa.demos.insert(0, {"question": "3+3", "answer": "6"})
    qa.demos[-1] = {"question": "1+1", "answer": "2"}
    qa.demos[1:] = [{"question": "4+4", "answer": 8}]
    qa.demos += [sio.Example(question="5+5", answer=10)]
    assert [d["answer"] for d in qa.demos] == [6, 8, 10]
    qa(question="x")
    assert "4+4" in str(qa.lm.calls[0].messages)  # type: ignore[union-attr]


def test_an_assigned_misspelled_demo_never_reaches_a_call_silently() -> None:
    qa = predictor()
    with pytest.raises(sio.FormatError):
        qa.demos = [{"qestion": "1+1", "answer": 2}]
    qa.demos = [{"question": "1+1", "answer": 2}]
    qa(question="x")
    assert "1+1" in str(qa.lm.calls[0].messages)  # type: ignore[union-attr]


def test_demos_survive_pickling_and_copies_and_stay_checked() -> None:
    qa = predictor()
    qa.demos = [{"question": "1+1", "answer": 2}]
    unpickled = pickle.loads(pickle.dumps(qa))  # noqa: S301 - our own bytes
    for other in (unpickled, copy.deepcopy(qa), copy.copy(qa)):
        assert other.demos == [{"question": "1+1", "answer": 2}]
        with pytest.raises(sio.FormatError, match="`qestion`"):
            other.demos.append({"qestion": "x"})
    assert type(copy.copy(qa.demos)) is list  # a copy of the list alone is a plain list
    assert type(pickle.loads(pickle.dumps(qa.demos))) is list  # noqa: S301 - our own bytes


def test_a_predict_pickled_before_demos_were_checked_still_loads() -> None:
    qa = predictor()
    state = qa.__getstate__()
    old = {("demos" if k == "_demos" else "lm" if k == "_lm" else k): v for k, v in state.items()}
    restored = sio.Predict.__new__(sio.Predict)
    restored.__setstate__(old)
    assert restored.demos == []
    assert restored.lm is qa.lm
    with pytest.raises(sio.FormatError):
        restored.demos.append({"qestion": "x"})


# -- the LM and the adapter -------------------------------------------------------------------


def test_a_model_string_as_the_lm_is_refused_everywhere_with_the_fix() -> None:
    fix = r"not the string 'openai/gpt-4o-mini': pass lm=structio\.LM\('openai/gpt-4o-mini'\)"
    with pytest.raises(sio.ConfigurationError, match=fix):
        sio.Predict("q -> a", lm="openai/gpt-4o-mini")  # type: ignore[arg-type]
    qa = predictor()
    lm = qa.lm
    with pytest.raises(sio.ConfigurationError, match=fix):
        qa.lm = "openai/gpt-4o-mini"  # type: ignore[assignment]
    assert qa.lm is lm
    with pytest.raises(sio.ConfigurationError, match=fix):
        qa(question="x", lm="openai/gpt-4o-mini")  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match=fix):
        asyncio.run(qa.acall(question="x", lm="openai/gpt-4o-mini"))  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match=fix):
        qa.stream(question="x", lm="openai/gpt-4o-mini")  # type: ignore[arg-type]
    assert not lm.calls  # type: ignore[union-attr]  # no request was made


def test_an_adapter_that_is_not_an_adapter_instance_is_refused() -> None:
    with pytest.raises(sio.ConfigurationError, match="not the string 'json'"):
        sio.Predict("q -> a", adapter="json")  # type: ignore[arg-type]
    qa = predictor()
    with pytest.raises(sio.ConfigurationError, match="not the string 'json'"):
        qa.adapter = "json"  # type: ignore[assignment]
    assert qa.adapter is None
    with pytest.raises(sio.ConfigurationError, match=r"the class JSONAdapter: .*JSONAdapter\(\)"):
        qa(question="x", adapter=sio.JSONAdapter)  # type: ignore[arg-type]
    qa.adapter = sio.JSONAdapter()
    assert qa(question="x").answer == 3


# -- outputs ------------------------------------------------------------------------------------


class Base(sio.Signature):
    """Shared inputs; subclasses add outputs."""

    question: str = sio.InputField()


class WithAnswer(Base):
    """Answer."""

    answer: str = sio.OutputField()


def test_a_signature_without_outputs_is_refused_when_a_module_is_built() -> None:
    # Declaring one is fine: it is a base class.
    assert list(WithAnswer.output_fields) == ["answer"]
    lm = sio.FakeLM(["x"])
    for module in (sio.Predict, sio.ChainOfThought):
        with pytest.raises(sio.SignatureError, match="Base has no output fields") as info:
            module(Base, lm=lm)
        assert module.__name__ in str(info.value)
    assert not lm.calls


def test_dspy_set_lm_and_get_lm() -> None:
    predict = sio.Predict("question -> answer")
    assert predict.get_lm() is None
    lm = sio.FakeLM([{"answer": "4"}])
    predict.set_lm(lm)
    assert predict.get_lm() is lm
    assert predict(question="2+2?").answer == "4"
    with pytest.raises(sio.ConfigurationError, match="not the string"):
        predict.set_lm("openai/gpt-4o-mini")  # type: ignore[arg-type]


def test_dspy_module_methods_of_a_predictor() -> None:
    predict = sio.Predict("question -> answer")
    assert predict.named_parameters() == [("self", predict)]
    assert predict.parameters() == [predict]
    assert list(predict.named_sub_modules()) == [("self", predict)]
    with pytest.raises(sio.UsageError, match="maps the predictors of a program"):
        predict.map_named_predictors(lambda p: p)
    with pytest.raises(AttributeError, match="'Predict' object has no attribute 'nonsense'"):
        _ = predict.nonsense  # type: ignore[attr-defined]
    assert not hasattr(predict, "__deepcopy__")  # copy and pickle see plain misses
