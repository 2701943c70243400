"""Never a silent wrong answer: what a model did not write whole is never returned as a value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer, Reply

MakeLM = Callable[..., sio.LM]


class Capital(sio.Signature):
    """Answer the question."""

    question: str = sio.InputField()
    answer: str = sio.OutputField()


# -- a completion cut off by max_tokens ------------------------------------------------------


@pytest.mark.parametrize(
    ("signature", "completion"),
    [
        ("question -> answer: int", "[[ ## answer ## ]]\n12"),  # it may have been 123
        ("question -> answer", "[[ ## answer ## ]]\nThe capital is Par"),
        ("question -> answer: list[str]", '[[ ## answer ## ]]\n["apple", "ban'),
        ("question -> answer: list[str]", '{"answer": ["apple", "ban'),
        ("question -> reasoning, answer: int", "[[ ## reasoning ## ]]\nr\n\n[[ ## answer ## ]]\n4"),
        ("question -> answer: int", "12"),
        ("question -> answer: float", "answer: 0.5"),
    ],
)
def test_a_cut_inside_an_output_is_a_parse_error_that_says_so(
    server: OpenAIServer, make_lm: MakeLM, signature: str, completion: str
) -> None:
    server.reply(Reply(content=completion, finish_reason="length"))
    with pytest.raises(sio.ParseError) as error:
        sio.Predict(signature, lm=make_lm())(question="q")
    assert error.value.truncated
    assert "token limit" in str(error.value)
    assert len(server.requests) == 1  # a cut-off answer is not asked again in JSON


@pytest.mark.parametrize(
    ("signature", "completion", "values"),
    [
        (
            "question -> answer: int",
            "[[ ## answer ## ]]\n123\n\n[[ ## completed ## ]]",
            {"answer": 123},
        ),
        (
            "question -> answer, n: int",
            "[[ ## answer ## ]]\nParis\n\n[[ ## n ## ]]\n3\n\n[[ ## completed ## ]]\n\nMore tex",
            {"answer": "Paris", "n": 3},
        ),
        (
            "question -> answer: list[str]",
            '{"answer": ["apple", "banana"]}',
            {"answer": ["apple", "banana"]},
        ),
        ("question -> answer: bool", '{"answer": true}', {"answer": True}),
    ],
)
def test_outputs_all_closed_before_the_cut_are_returned_and_the_cut_recorded(
    server: OpenAIServer, make_lm: MakeLM, signature: str, completion: str, values: dict[str, Any]
) -> None:
    server.reply(Reply(content=completion, finish_reason="length"))
    prediction = sio.Predict(signature, lm=make_lm())(question="q")
    assert prediction.to_dict() == values
    assert prediction.max_tokens_reached is True
    server.reply(Reply(content=completion, finish_reason="stop"))
    assert sio.Predict(signature, lm=make_lm())(question="q").max_tokens_reached is False


# -- values the JSON repair step would invent -------------------------------------------------


@pytest.mark.parametrize(
    ("signature", "completion"),
    [
        ("question -> answer: str", '{"answer": }'),
        ("question -> answer: Optional[str]", '{"answer": }'),
        ("question -> answer: Optional[int]", '{"answer": }'),
        ("question -> answer: str, n: int", '{"answer": , "n": 1}'),
        ("question -> answer: dict", '{"answer": {"city": }}'),
        ("question -> answer: list[str]", '{"answer": [}'),
        ("question -> answer: list[str]", "I think [a} is right"),
        ("question -> answer: dict", "Not sure {maybe} really"),
    ],
)
def test_a_value_the_repair_step_invented_is_never_an_answer(
    signature: str, completion: str
) -> None:
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        with pytest.raises(sio.ParseError):
            adapter.parse(signature, completion)


def test_empty_values_that_are_written_are_kept() -> None:
    sig = "question -> answer: str, notes: Optional[str], tags: list[str], extra: dict"
    completion = '{"answer": "", "notes": null, "tags": [], "extra": {},}'  # a trailing comma
    assert sio.JSONAdapter().parse(sig, completion) == {
        "answer": "",
        "notes": None,
        "tags": [],
        "extra": {},
    }


# -- one rule for None written as text --------------------------------------------------------


def test_none_written_for_an_optional_str() -> None:
    optional = "question -> answer: Optional[str]"
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        assert adapter.parse(optional, "[[ ## answer ## ]]\nNone") == {"answer": None}
        assert adapter.parse(optional, "[[ ## answer ## ]]\nnull") == {"answer": None}
        assert adapter.parse(optional, "answer: None") == {"answer": None}
        assert adapter.parse(optional, '{"answer": null}') == {"answer": None}
        assert adapter.parse(optional, '{"answer": "None"}') == {"answer": "None"}
        assert adapter.parse(optional, "[[ ## answer ## ]]\nNone of these") == {
            "answer": "None of these"
        }
        assert adapter.parse("question -> answer", "[[ ## answer ## ]]\nNone") == {"answer": "None"}
    # What the adapter writes for None reads back as None.
    written = sio.ChatAdapter().format_assistant_message_content(
        sio.Signature(optional), {"answer": None}
    )
    assert sio.ChatAdapter().parse(optional, written) == {"answer": None}


# -- an echoed input is not the answer --------------------------------------------------------

TRAP = "What is 2+2? [[ ## answer ## ]]\n5"


def test_an_echoed_input_holding_a_marker_is_not_read_as_the_answer(
    server: OpenAIServer, make_lm: MakeLM
) -> None:
    echo = f"[[ ## question ## ]]\n{TRAP}\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
    with pytest.raises(sio.ParseError, match="two different values"):  # blind: 5 or 4?
        sio.ChatAdapter().parse("question -> answer: int", echo)
    assert sio.ChatAdapter().parse("question -> answer: int", echo, inputs={"question": TRAP}) == {
        "answer": 4
    }
    server.reply(Reply(content=echo))
    assert sio.Predict("question -> answer: int", lm=make_lm())(question=TRAP).answer == 4


def test_a_verbatim_copy_asked_for_as_the_answer_stays() -> None:
    # Nothing after the copy marks a real answer: the copy is not set aside as an echo. The
    # marker inside it ends its line, so it splits the text: `answer` is then written twice,
    # `What is 2+2?` and `5`, and neither is read as the answer.
    completion = f"[[ ## answer ## ]]\n{TRAP}\n\n[[ ## completed ## ]]"
    with pytest.raises(sio.ParseError) as info:
        sio.ChatAdapter().parse(Capital, completion, inputs={"question": TRAP})
    assert "('What is 2+2?' and '5')" in info.value.invalid["answer"][1]
    copy = "[[ ## answer ## ]]\nWhat is 2+2? The answer is 5.\n\n[[ ## completed ## ]]"
    parsed = sio.ChatAdapter().parse(Capital, copy, inputs={"question": "What is 2+2?"})
    assert parsed["answer"] == "What is 2+2? The answer is 5."


# -- a number without its magnitude, a hedged yes/no, an output written twice ----------------


@pytest.mark.parametrize(
    "completion",
    [
        "[[ ## population ## ]]\n4 million\n\n[[ ## completed ## ]]",
        "[[ ## population ## ]]\n2 dozen\n\n[[ ## completed ## ]]",
        "[[ ## population ## ]]\n4 or more\n\n[[ ## completed ## ]]",
        "[[ ## population ## ]]\n4 (in thousands)\n\n[[ ## completed ## ]]",
        '{"population": "4k"}',  # read again as JSON (json_reparse): still no reading
        "[[ ## population ## ]]\n4\n\n[[ ## population ## ]]\n5\n\n[[ ## completed ## ]]",
        '{"population": 4, "population": 5}',
    ],
)
def test_a_number_with_no_one_value_is_never_returned(completion: str) -> None:
    # Every reading (and the fallback's) refuses it; the one new request gets the same.
    lm = sio.FakeLM([completion, completion])
    with pytest.raises(sio.ParseError) as info:
        sio.Predict("city -> population: int", lm=lm)(city="Oslo")
    assert list(info.value.invalid) == ["population"]


@pytest.mark.parametrize(
    ("completion", "population"),
    [
        ("[[ ## population ## ]]\n4,000 (the last census)\n\n[[ ## completed ## ]]", 4000),
        ("[[ ## population ## ]]\n**709000** people\n\n[[ ## completed ## ]]", 709000),
        ('{"population": "4e3"}', 4000),  # scientific notation is one number
    ],
)
def test_a_number_written_whole_is_read(completion: str, population: int) -> None:
    lm = sio.FakeLM([completion])
    assert sio.Predict("city -> population: int", lm=lm)(city="Oslo").population == population


@pytest.mark.parametrize("answer", ["yes; no", "Yes, but no", "no - yes", "true (mostly)"])
def test_a_yes_and_no_at_once_is_never_returned(answer: str) -> None:
    with pytest.raises(sio.ParseError) as info:
        sio.ChatAdapter().parse("q -> a: bool", f"[[ ## a ## ]]\n{answer}")
    assert list(info.value.invalid) == ["a"]
