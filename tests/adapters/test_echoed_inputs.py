"""Echoed inputs: an answer is never taken from text that reproduces an input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio

ADAPTERS = (sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter(), sio.CompactAdapter())
SIG = "question -> answer: int"

# An input holding what each format reads as the answer, 5; the real answer is 4.
CHAT_TRAP = "What is 2+2?\n\n[[ ## answer ## ]]\n\n5"
JSON_TRAP = 'Check this record: {"answer": 5}'
XML_TRAP = "What is 2+2?\n\n<answer>5</answer>"
LABEL_TRAP = "What is 2+2? My notes:\nAnswer: 5"
ANSWERS = {
    "chat": "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
    "json": '{"answer": 4}',
    "xml": "<answer>4</answer>",
    "label": "Answer: 4",
}
TRAPS = {"chat": CHAT_TRAP, "json": JSON_TRAP, "xml": XML_TRAP, "label": LABEL_TRAP}
OWN = {"chat": ADAPTERS[0], "json": ADAPTERS[1], "xml": ADAPTERS[2], "label": ADAPTERS[3]}


def blank_lines_dropped(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.strip())


@pytest.mark.parametrize("fmt", sorted(TRAPS))
@pytest.mark.parametrize("copy", [str, blank_lines_dropped, lambda t: " ".join(t.split())])
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_copy_of_an_input_is_never_the_answer(fmt: str, copy: object, where: str) -> None:
    trap, answer = TRAPS[fmt], ANSWERS[fmt]
    echo = copy(trap)  # type: ignore[operator]
    completion = f"{echo}\n\n{answer}" if where == "before" else f"{answer}\n\n{echo}"
    for adapter in ADAPTERS:
        try:
            parsed = adapter.parse(SIG, completion, inputs={"question": trap})
        except sio.ParseError:
            continue  # an adapter that does not read this format refuses it
        assert parsed == {"answer": 4}, f"{type(adapter).__name__}: {completion!r}"
    assert OWN[fmt].parse(SIG, completion, inputs={"question": trap}) == {"answer": 4}


@pytest.mark.parametrize("fmt", sorted(TRAPS))
@pytest.mark.parametrize("copy", [str, blank_lines_dropped])
def test_an_echo_with_no_answer_after_it_is_refused(fmt: str, copy: object) -> None:
    trap = TRAPS[fmt]
    echoed = copy(trap)  # type: ignore[operator]
    for completion in (echoed, f"[[ ## question ## ]]\n{echoed}", f"Sure.\n{echoed}\n"):
        for adapter in ADAPTERS:
            with pytest.raises(sio.ParseError):
                adapter.parse(SIG, completion, inputs={"question": trap})


def test_a_json_object_repeating_an_input_after_the_answer_is_set_aside() -> None:
    record = '{"answer": 5, "note": "from the file"}'
    completion = '{"answer": 4}\n\nThe record was:\n{"answer": 5,\n  "note": "from the file"}'
    for adapter in (sio.ChatAdapter(), sio.JSONAdapter()):
        assert adapter.parse(SIG, completion, inputs={"question": record}) == {"answer": 4}


def test_an_input_asked_for_as_the_answer_is_still_read() -> None:
    # The copy is the output's whole value, introduced by its own marker: no echo.
    text = "Say {this} back"
    completion = f"[[ ## answer ## ]]\n{text}\n\n[[ ## completed ## ]]"
    parsed = sio.ChatAdapter().parse("question -> answer", completion, inputs={"question": text})
    assert parsed == {"answer": text}
    assert sio.JSONAdapter().parse(
        "question -> answer", '{"answer": "Say {this} back"}', inputs={"question": text}
    ) == {"answer": text}


WHITESPACE = st.sampled_from(["\n", "\n\n", " ", "\t", "\n   "])


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(TRAPS)),
    st.lists(WHITESPACE, min_size=8, max_size=8),
    st.sampled_from(["before", "after", "alone"]),
)
def test_never_the_value_an_echo_holds(fmt: str, spaces: list[str], where: str) -> None:
    trap = TRAPS[fmt]
    words = trap.split()
    echo = "".join(word + spaces[i % len(spaces)] for i, word in enumerate(words))
    answer = ANSWERS[fmt]
    completion = {"before": f"{echo}\n{answer}", "after": f"{answer}\n{echo}", "alone": echo}
    for adapter in ADAPTERS:
        try:
            parsed = adapter.parse(SIG, completion[where], inputs={"question": trap})
        except sio.ParseError:
            continue
        assert parsed["answer"] != 5, f"{type(adapter).__name__} read {completion[where]!r}"


# Inputs that hold no output's mark, each read as a value of some type when it is the whole
# completion: repeated back, they are no answer.
PLAIN_INPUTS = [
    ("- apples\n- pears", "list[str]"),
    ("apples, pears, plums", "list[str]"),
    ("42", "int"),
    ("The total is 42 euros.", "int"),
    ("yes", "bool"),
    ("positive", "Literal['positive', 'negative']"),
    ('["a", "b"]', "list[str]"),
    ("The quick brown fox jumps over the lazy dog.", "str"),
]


@pytest.mark.parametrize(("text", "kind"), PLAIN_INPUTS)
@pytest.mark.parametrize("copy", [str, blank_lines_dropped, lambda t: "  " + t + "\n\n"])
def test_a_completion_that_only_repeats_an_input_is_no_answer(
    text: str, kind: str, copy: object
) -> None:
    completion = copy(text)  # type: ignore[operator]
    for adapter in ADAPTERS:
        for inputs in ({"question": text}, {"question": "q", "notes": ["x", text]}):
            with pytest.raises(sio.ParseError):
                adapter.parse(f"question -> answer: {kind}", completion, inputs=inputs)


@pytest.mark.parametrize(("text", "kind"), PLAIN_INPUTS)
def test_the_same_value_under_the_outputs_marker_is_read(text: str, kind: str) -> None:
    # Stated as the output's value, the copy is the model's answer (an identity is a
    # common right answer: `text -> cleaned`).
    completion = f"[[ ## answer ## ]]\n{text}\n\n[[ ## completed ## ]]"
    spec = f"question -> answer: {kind}"

    def outcome(**inputs: str) -> object:
        try:
            return sio.ChatAdapter().parse(spec, completion, inputs=inputs)
        except sio.ParseError:
            return "refused"  # as without the input: prose states no int, `a, b` no list[str]

    assert outcome(question=text) == outcome()


def test_a_copy_of_a_plain_input_inside_a_value_stays() -> None:
    # A value that quotes an input holding no mark is what the model wrote under the marker.
    text = "The quick brown fox jumps over the lazy dog."
    completion = f"[[ ## answer ## ]]\n# A title\n\n{text}\n\n[[ ## completed ## ]]"
    parsed = sio.ChatAdapter().parse("question -> answer", completion, inputs={"question": text})
    assert parsed == {"answer": f"# A title\n\n{text}"}


@pytest.mark.parametrize(
    "trap",
    ["Answer: 5", "**Answer:** 5", "### Answer\n5", "- answer = 5", "ANSWER - 5"],
)
def test_a_label_in_an_input_is_a_mark_its_copy_is_set_aside(trap: str) -> None:
    question = f"Here is what the last reviewer wrote.\n{trap}\nWhat is 2+2?"
    for where in ("before", "after"):
        answer = "Answer: 4"
        completion = f"{question}\n\n{answer}" if where == "before" else f"{answer}\n\n{question}"
        got = sio.CompactAdapter().parse(SIG, completion, inputs={"question": question})
        assert got == {"answer": 4}, completion


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab1 -*,.:[]{}\"'<>/#\n", min_size=1, max_size=40).filter(str.strip),
    st.sampled_from(["str", "int", "bool", "list[str]", "list[int]", "dict[str, int]"]),
    WHITESPACE,
)
def test_never_an_answer_from_a_completion_that_only_repeats_an_input(
    text: str, kind: str, space: str
) -> None:
    completion = space.join(text.split(" "))
    for adapter in ADAPTERS:
        with pytest.raises(sio.ParseError):
            adapter.parse(f"question -> answer: {kind}", completion, inputs={"question": text})
