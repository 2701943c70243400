"""`structio.testing`: the test doubles live above the call layer, and `lm` below adapters."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import structio as sio
import structio.lm
from structio.lm.base import reset_origin, set_origin
from structio.testing import DEFAULT_RECORD, FakeCall, FakeLM

LM_PACKAGE = Path(structio.lm.__file__).parent
# What the model layer may import of structio: leaf utilities, the errors, itself.
ALLOWED = ("structio._util", "structio.exceptions", "structio.lm")


def test_fake_lm_is_public_from_structio_and_testing_only() -> None:
    assert sio.FakeLM is FakeLM
    assert FakeCall.__module__ == "structio.testing"
    assert DEFAULT_RECORD == 1000
    assert not hasattr(structio.lm, "FakeLM")
    with pytest.raises(ModuleNotFoundError):
        __import__("structio.lm.fake")


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted(LM_PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_the_model_layer_imports_nothing_above_utilities_and_errors(path: Path) -> None:
    upward = sorted(
        name
        for name in imported_modules(path)
        if name.startswith("structio")
        and not any(name == a or name.startswith(a + ".") for a in ALLOWED)
    )
    assert upward == [], f"{path.name} imports {upward}"


class Answer(sio.Signature):
    """Answer."""

    question: str = sio.InputField()
    answer: int = sio.OutputField()


def test_a_dict_reply_is_written_in_the_format_of_the_request() -> None:
    lm = FakeLM([{"answer": 4}, {"answer": 5}])
    assert sio.Predict(Answer, lm=lm, adapter=sio.JSONAdapter())(question="2+2?").answer == 4
    assert lm.calls[-1].params.get("response_format") is None  # a text-only model
    assert '"answer": 4' not in lm.calls[-1].prompt  # the request, not the reply
    pred = sio.Predict(Answer, lm=lm, adapter=sio.XMLAdapter())(question="2+3?")
    assert (pred.answer, pred.route) == (5, "xml")


def test_an_origin_that_is_no_adapter_is_not_read() -> None:
    lm = FakeLM([{"answer": 4}])
    token = set_origin(object(), int)
    try:
        text = lm([{"role": "user", "content": "?"}]).text
    finally:
        reset_origin(token)
    # Written by the default adapter (ChatAdapter), as with no origin at all.
    assert text.startswith("[[ ## answer ## ]]\n4")
