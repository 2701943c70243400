"""One wording, everywhere, for a name that is not an input, output or field of a signature."""

from __future__ import annotations

import pytest

import structio as sio
from structio import finetune


class QA(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()


def test_every_place_says_it_the_same_way() -> None:
    adapter = sio.ChatAdapter()
    with pytest.raises(sio.FormatError) as format_error:
        adapter.format(QA, inputs={"questio": "q"})
    assert str(format_error.value) == (
        "`questio` is not an input of QA (did you mean `question`?). "
        "Its inputs are: `question` (question -> answer)"
    )
    with pytest.raises(sio.FormatError) as output_error:
        adapter.format_finetune_data(QA, [], {"question": "q"}, {"answr": "a"})
    assert str(output_error.value) == (
        "`answr` is not an output of QA (did you mean `answer`?). "
        "Its outputs are: `answer` (question -> answer)"
    )
    with pytest.raises(sio.FormatError, match=r"`answer` is an output of QA, not an input\."):
        sio.Predict(QA).to_string(answer="a")
    with pytest.raises(sio.SignatureError, match=r"`answr` is not a field of QA \(did you mean"):
        QA.delete("answr")
    with pytest.raises(sio.FormatError, match=r"`answr` is not a field of QA \(did you mean"):
        sio.Predict(QA, demos=[{"question": "q", "answr": "a"}])
    ((_, problem),) = finetune.read_examples([{"question": "q", "answr": "a"}], QA)
    assert isinstance(problem, finetune.Problem)
    assert "`answr` is not a field of QA (did you mean `answer`?)" in problem.message
