"""`structio.ray.PredictBatches` on batches as Ray hands them, without starting Ray."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pydantic
import pytest

import structio as sio
from structio.ray import PredictBatches, predict_dataset

# NumPy and pandas come with Ray Data (structio[ray], which CI installs), not with [dev].
np = pytest.importorskip(
    "numpy", reason="structio[ray] is not installed: EXTRAS=ray bash scripts/setup"
)
pd = pytest.importorskip(
    "pandas", reason="structio[ray] is not installed: EXTRAS=ray bash scripts/setup"
)


class Ticket(sio.Signature):
    """Rate how urgent a support ticket is."""

    text: str = sio.InputField()
    team: str = sio.InputField(default="support")
    urgency: int = sio.OutputField(ge=1, le=5)


class Tags(pydantic.BaseModel):
    names: list[str]


class Tagged(sio.Signature):
    """Tag a ticket."""

    text: str = sio.InputField()
    tags: Tags = sio.OutputField()
    scores: list[int] = sio.OutputField()


def reply(messages: list[dict[str, Any]]) -> Any:
    """Urgency from the ticket's number; ticket 3 gets an answer out of range."""
    found = re.search(r"ticket (\d+)", messages[-1]["content"])
    assert found is not None
    i = int(found.group(1))
    return {"urgency": 9 if i == 3 else i % 5 + 1}


def fake_predict(signature: type[sio.Signature] = Ticket) -> sio.Predict:
    return sio.Predict(signature, lm=sio.FakeLM(reply), adapter=sio.ChatAdapter(fallback=None))


def test_a_pandas_batch_keeps_every_row_and_column_with_errors_as_a_column() -> None:
    batch = pd.DataFrame(
        {"id": [10, 11, 12, 13, 14], "text": [f"ticket {i}" for i in range(5)], "n": range(5)}
    )
    batch.loc[1, "text"] = None  # a missing required input: that row fails alone

    out = PredictBatches(fake_predict(), max_concurrency=2)(batch)

    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["id", "text", "n", "urgency", "error"]
    assert out["id"].tolist() == [10, 11, 12, 13, 14]
    assert out["n"].tolist() == [0, 1, 2, 3, 4]
    assert out["urgency"].tolist() == [1, None, 3, None, 5]
    errors = out["error"].tolist()
    assert [errors[0], errors[2], errors[4]] == [None, None, None]
    assert errors[1].startswith("FormatError: ")
    assert "text" in errors[1]
    assert errors[3].startswith("ParseError: ")
    assert "urgency" in errors[3]
    assert list(batch.columns) == ["id", "text", "n"]  # the batch itself is left as it was


def test_a_numpy_batch_gives_a_numpy_batch_with_python_values_sent() -> None:
    lm = sio.FakeLM(reply)
    batch = {
        "id": np.array(["a", "b", "c"]),
        "text": np.array(["ticket 0", "ticket 1", "ticket 2"], dtype=object),
        "team": np.array(["billing", None, "bugs"], dtype=object),
    }

    out = PredictBatches(sio.Predict(Ticket, lm=lm), max_concurrency=3)(batch)

    assert set(out) == {"id", "text", "team", "urgency", "error"}
    assert out["id"] is batch["id"]  # the input columns are passed on untouched
    assert all(isinstance(out[name], np.ndarray) for name in ("urgency", "error"))
    assert out["urgency"].tolist() == [1, 2, 3]
    assert out["error"].tolist() == [None, None, None]
    users = sorted(call.messages[-1]["content"] for call in lm.calls)
    # An empty cell is left out, so the input's default applies.
    assert "billing" in users[0]
    assert "support" in users[1]
    assert "bugs" in users[2]


def test_structured_outputs_are_json_data_one_value_per_cell() -> None:
    lm = sio.FakeLM([{"tags": Tags(names=["a", "b"]), "scores": [1, 2]}])
    batch = {"text": np.array(["ticket 0"], dtype=object)}

    out = PredictBatches(sio.Predict(Tagged, lm=lm))(batch)

    assert (out["tags"].shape, out["scores"].shape) == ((1,), (1,))
    assert out["tags"][0] == {"names": ["a", "b"]}
    assert out["scores"][0] == [1, 2]


def test_an_empty_batch_gives_empty_result_columns() -> None:
    out = PredictBatches(fake_predict())(pd.DataFrame({"text": pd.Series([], dtype=object)}))
    assert list(out.columns) == ["text", "urgency", "error"]
    assert len(out) == 0


def test_a_column_the_results_would_replace_is_refused_unless_prefixed() -> None:
    batch = pd.DataFrame({"text": ["ticket 1"], "urgency": [5]})
    with pytest.raises(sio.ConfigurationError, match=r"already has column\(s\) \['urgency'\]"):
        PredictBatches(fake_predict())(batch)

    out = PredictBatches(fake_predict(), output_prefix="pred_")(batch)

    assert out.to_dict("records") == [
        {"text": "ticket 1", "urgency": 5, "pred_urgency": 2, "error": None}
    ]
    with pytest.raises(sio.ConfigurationError, match="error_column"):
        PredictBatches(fake_predict(), error_column="urgency")


def test_the_predict_is_built_from_saved_data_or_a_function() -> None:
    saved = fake_predict().to_dict()  # a FakeLM is not saved: the LM comes as a call option
    from_data = PredictBatches(saved, lm=sio.FakeLM(reply))
    from_function = PredictBatches(fake_predict)

    for batches in (from_data, from_function):
        assert batches.predict.signature.to_dict() == Ticket.to_dict()
        out = batches({"text": np.array(["ticket 4"], dtype=object)})
        assert out["urgency"].tolist() == [5]


def test_what_cannot_run_on_a_worker_is_refused_at_once() -> None:
    with pytest.raises(sio.ConfigurationError, match="needs its own LM"):
        PredictBatches(sio.Predict(Ticket))
    with pytest.raises(sio.ConfigurationError, match="returned str, not a Predict"):
        PredictBatches(lambda: "nope")  # type: ignore[arg-type, return-value]
    with pytest.raises(sio.ConfigurationError, match="not int"):
        PredictBatches(3)  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match="max_concurrency"):
        PredictBatches(fake_predict(), max_concurrency=0)
    with pytest.raises(sio.ConfigurationError, match="pandas DataFrame or a dict"):
        PredictBatches(fake_predict())([{"text": "ticket 1"}])


def test_predict_dataset_checks_its_options_before_ray_runs() -> None:
    with pytest.raises(sio.ConfigurationError, match="workers"):
        predict_dataset(None, fake_predict, workers=0)  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match="batch_format"):
        predict_dataset(None, fake_predict, batch_format="pyarrow")  # type: ignore[arg-type]


def test_neither_structio_nor_structio_ray_imports_ray() -> None:
    code = (
        "import sys, structio, structio.ray\n"
        "print(sorted(m for m in ('ray', 'pandas', 'pyarrow') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
