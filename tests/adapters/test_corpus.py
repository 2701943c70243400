"""The parsing corpus: every realistic completion is read right, every dishonest one refused."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_core import to_jsonable_python

import structio as sio
from tests.corpus import CASES, CUSTOM_TYPES, SPECS, Case

SIGNATURES = {name: sio.Signature(spec, custom_types=CUSTOM_TYPES) for name, spec in SPECS.items()}
ADAPTERS: dict[str, sio.Adapter] = {"chat": sio.ChatAdapter(), "json": sio.JSONAdapter()}
ALL = [(fmt, case) for fmt, cases in CASES.items() for case in cases]


def test_corpus_size_and_balance() -> None:
    assert len(ALL) >= 150
    assert len({case.id for _, case in ALL}) == len(ALL)
    failing = sum(case.must_fail for _, case in ALL)
    assert failing / len(ALL) >= 0.15
    for fmt in CASES:
        assert sum(case.must_fail for case in CASES[fmt]) >= 10


@pytest.mark.parametrize(("fmt", "case"), ALL, ids=[case.id for _, case in ALL])
def test_corpus_case(fmt: str, case: Case) -> None:
    signature = SIGNATURES[case.sig]
    adapter = ADAPTERS[fmt]
    if case.error is None:
        parsed: Any = to_jsonable_python(adapter.parse(signature, case.completion))
        assert parsed == case.expected
        return
    with pytest.raises(sio.ParseError) as info:
        adapter.parse(signature, case.completion)
    named = set(info.value.missing) | set(info.value.invalid)
    assert named == set(case.error), str(info.value)
    assert info.value.parsed.keys().isdisjoint(case.error)
