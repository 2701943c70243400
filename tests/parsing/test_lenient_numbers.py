"""Numbers whose next characters change them: never read as the digits they start with."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.parsing.decode import decode_json
from structio.parsing.lenient import NO_READING, number_reading, without_remark

ADAPTERS = (sio.ChatAdapter(), sio.JSONAdapter(), sio.XMLAdapter())

# The four (DSPy refuses each), then more of the kind: Unicode number forms (vulgar
# fractions, superscripts, subscripts, Roman numerals, circled digits) and powers in words
# or symbols; scales stay refused too.
CHANGED = [
    *("76½", "10²", "2⁵", "5 squared"),
    *("76 ½", "3¾", "7⅞", "10³", "10⁻³", "2₂", "5Ⅻ", "4 ①", "12 m²"),
    *("5 cubed", "5 to the power 2", "5 to the power of 2", "2 raised to 3", "5^2", "5**2"),
    *("5 million", "3 thousand", "2k", "5e", "5 sq", "5 (squared)", "5 - squared", "5 (½)"),
    *("5 (²)", "5 (^2)", "5 (**2)"),
]


@pytest.mark.parametrize("text", CHANGED)
def test_a_number_followed_by_what_changes_it_has_no_reading(text: str) -> None:
    head = without_remark(text, number=True)
    assert number_reading(text) is NO_READING
    assert head is NO_READING or number_reading(head) is NO_READING


@pytest.mark.parametrize("text", CHANGED)
@pytest.mark.parametrize("kind", ["int", "float"])
def test_every_adapter_refuses_it_in_every_form(text: str, kind: str) -> None:
    forms = [f"[[ ## a ## ]]\n{text}", f"a: {text}", f"<a>{text}</a>", text]
    forms += [f'{{"a": "{text}"}}', f'{{"a": {text}}}']  # a JSON string, and damaged JSON
    for adapter in ADAPTERS:
        for completion in forms:
            with pytest.raises(sio.ParseError):
                adapter.parse(f"q -> a: {kind}", completion)


@pytest.mark.parametrize("text", ['{"a": 5 million}', '{"a": 76½}', '{"a": 5e}', '{"a": 12:30}'])
def test_json_repair_never_keeps_the_digits_a_number_starts_with(text: str) -> None:
    with pytest.raises(ValueError, match=r"runs on|not JSON"):
        decode_json(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 5 // the count\n}', {"a": 5}),  # a comment after it changes nothing
        ('{"a": 4 "b": 5}', {"a": 4, "b": 5}),  # the next key, its comma missing
        ('{"a": 1,}', {"a": 1}),
        ("[1, 2.5, -3,]", [1, 2.5, -3]),
    ],
)
def test_json_repair_still_reads_a_whole_number(text: str, value: object) -> None:
    assert decode_json(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e3", 1000), ("**42**", 42), ("30 items", 30), ("$1,234", 1234), ("Answer: 7.", 7)],
)
def test_a_number_written_whole_is_still_read(text: str, value: int) -> None:
    # `1e3` is scientific notation: one number, 1000, written whole.
    assert sio.ChatAdapter().parse("q -> a: int", f"[[ ## a ## ]]\n{text}") == {"a": value}


NUMBER_FORMS = [
    chr(c)
    for c in range(0x80, 0x3000)
    if unicodedata.category(chr(c)) in ("No", "Nl") or unicodedata.numeric(chr(c), None)
]
POWER_WORDS = ["squared", "cubed", "to the power 3", "raised to 3", "^3", "**3", "million", "k"]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(["", " "]),
    st.sampled_from(NUMBER_FORMS) | st.sampled_from(POWER_WORDS),
    st.sampled_from(["int", "float"]),
)
def test_never_the_bare_number_when_a_form_or_power_follows(
    number: int, space: str, after: str, kind: str
) -> None:
    text = f"{number}{space}{after}"
    for adapter in ADAPTERS:
        for completion in (f"[[ ## a ## ]]\n{text}", f'{{"a": {text}}}', f"<a>{text}</a>"):
            try:
                parsed = adapter.parse(f"q -> a: {kind}", completion)
            except sio.ParseError:
                continue
            assert parsed["a"] != number, f"{type(adapter).__name__} read {completion!r}"
