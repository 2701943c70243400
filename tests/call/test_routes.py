"""Routes are open: an adapter reports its own, and a fallback is a field of its own."""

from __future__ import annotations

from typing import ClassVar

import structio as sio
from structio.adapters.base import Adapter

GOOD = "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
BAD = "[[ ## answer ## ]]\nfour-ish\n\n[[ ## completed ## ]]"


class Shouting(sio.ChatAdapter):
    """A custom wire format: ChatAdapter's, under a route of its own."""

    route: ClassVar[str] = "shouting"


class StrictJSON(sio.JSONAdapter):
    route: ClassVar[str] = "strict_json"


class WithItsOwnFallback(sio.ChatAdapter):
    route: ClassVar[str] = "mine"

    def fallback_adapter(self) -> Adapter | None:
        return StrictJSON()


def test_a_custom_adapter_reports_its_own_route() -> None:
    lm = sio.FakeLM([GOOD])
    pred = sio.Predict("question -> answer: int", lm=lm, adapter=Shouting())(question="?")
    assert pred.answer == 4
    assert pred.route == "shouting"
    assert pred.meta.fallback is None


def test_each_built_in_adapter_reports_its_route_with_no_fallback() -> None:
    for adapter, reply in [
        (sio.ChatAdapter(), GOOD),
        (sio.JSONAdapter(), '{"answer": 4}'),
        (sio.XMLAdapter(), "<answer>4</answer>"),
    ]:
        pred = sio.Predict("question -> answer: int", lm=sio.FakeLM([reply]), adapter=adapter)(
            question="?"
        )
        assert (pred.route, pred.meta.fallback) == (adapter.route, None)


def test_the_same_completion_read_by_the_fallback_is_a_reparse() -> None:
    lm = sio.FakeLM(['{"answer": 4}'])
    pred = sio.Predict("question -> answer: int", lm=lm)(question="?")
    assert (pred.route, pred.meta.fallback) == ("json_reparse", "reparse")
    assert len(lm.calls) == 1


def test_a_fallback_request_names_the_fallbacks_route() -> None:
    lm = sio.FakeLM([BAD, '{"answer": 4}'])
    pred = sio.Predict("question -> answer: int", lm=lm)(question="?")
    assert (pred.route, pred.meta.fallback) == ("json_request", "request")
    lm = sio.FakeLM([BAD, '{"answer": 4}'])
    adapter = WithItsOwnFallback()
    pred = sio.Predict("question -> answer: int", lm=lm, adapter=adapter)(question="?")
    assert (pred.route, pred.meta.fallback) == ("strict_json_request", "request")


def test_a_streamed_call_reports_the_same_route() -> None:
    lm = sio.FakeLM([GOOD])
    predict = sio.Predict("question -> answer: int", lm=lm, adapter=Shouting())
    assert list(predict.stream(question="?"))[-1].route == "shouting"
