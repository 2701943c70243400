"""Properties of parsing: never another exception, never a value the text does not hold."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import structio as sio
from tests.adapters.test_round_trips import Everything, outputs, section_text
from tests.corpus import CASES, CUSTOM_TYPES, SPECS

ADAPTERS: dict[str, sio.Adapter] = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter()}
SIGNATURES = {name: sio.Signature(spec, custom_types=CUSTOM_TYPES) for name, spec in SPECS.items()}
COMPLETIONS = [case.completion for cases in CASES.values() for case in cases]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parse_or_refuse(
    adapter: sio.Adapter, signature: type[sio.Signature], text: str
) -> dict[str, Any] | None:
    """The parsed values, or None for a ParseError; any other exception fails the test."""
    try:
        return adapter.parse(signature, text)
    except sio.ParseError:
        return None


@st.composite
def mangled(draw: st.DrawFn) -> str:
    """A corpus completion with a slice removed, a slice duplicated or noise inserted."""
    text = draw(st.sampled_from(COMPLETIONS))
    if not text:
        return draw(st.text())
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, len(text)))
    how = draw(st.sampled_from(["cut", "drop", "repeat", "noise"]))
    if how == "cut":
        return text[:i]
    if how == "drop":
        return text[:i] + text[j:]
    if how == "repeat":
        return text[:j] + text[i:j] + text[j:]
    return text[:i] + draw(st.text(alphabet="[]{}#*`\"':,\n <>/think", max_size=12)) + text[i:]


@SETTINGS
@given(
    st.sampled_from(sorted(ADAPTERS)), st.sampled_from(sorted(SIGNATURES)), mangled() | st.text()
)
def test_any_text_gives_typed_values_or_a_parse_error(adapter: str, sig: str, text: str) -> None:
    signature = SIGNATURES[sig]
    parsed = parse_or_refuse(ADAPTERS[adapter], signature, text)
    if parsed is not None:
        assert list(parsed) == list(signature.output_fields)


@SETTINGS
@given(outputs(section_text(), st.none() | section_text()), st.data())
def test_a_cut_off_json_answer_is_never_completed(
    values: dict[str, Any], data: st.DataObject
) -> None:
    adapter = ADAPTERS["json"]
    text = adapter.format_assistant_message_content(Everything, values)
    cut = data.draw(st.integers(0, len(text) - 1), label="cut")
    parsed = parse_or_refuse(adapter, Everything, text[:cut])
    assert parsed is None or parsed == values, f"read {parsed!r} from {text[:cut]!r}"


@SETTINGS
@given(outputs(section_text(), section_text()))
def test_every_prefix_of_a_small_json_answer(values: dict[str, Any]) -> None:
    adapter = ADAPTERS["json"]
    small = {k: values[k] for k in ("count", "tags", "flag")}
    signature = sio.Signature("q -> count: int, tags: list[str], flag: bool")
    text = adapter.format_assistant_message_content(signature, small)
    for cut in range(len(text)):
        parsed = parse_or_refuse(adapter, signature, text[:cut])
        assert parsed is None or parsed == small, f"read {parsed!r} from {text[:cut]!r}"
