"""`LM`'s history entries: what a call's entry shows of its settings, and what it hides."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import structio as sio
from structio.lm.base import BaseLM

NAMES = st.sampled_from(
    ["temperature", "n", "api_key", "x_token", "api_base", "extra_headers", "cache", "stop"]
)
VALUES = st.one_of(
    st.text(min_size=0, max_size=12),
    st.integers(),
    st.builds(lambda key: {"Authorization": f"Bearer {key}", "X-Team": "t"}, st.text(max_size=9)),
)


@settings(max_examples=60, deadline=None)
@given(
    own=st.dictionaries(NAMES, VALUES, max_size=3), call=st.dictionaries(NAMES, VALUES, max_size=3)
)
def test_the_kept_client_part_gives_what_the_whole_merge_gives(
    own: dict[str, Any], call: dict[str, Any]
) -> None:
    lm = sio.LM(
        "openai/m",
        api_base="https://user:pass-word@127.0.0.1:9/v1?key=secret-q",
        api_key="sk-secret-1",
        extra_headers={"X-Api-Key": "hdr-secret"},
        cache=False,
    )
    lm.params.update(own)  # a dict the caller may change, client names included
    for _ in range(2):  # the second time from what was kept
        assert lm._history_params(call) == BaseLM._history_params(lm, call)


def test_an_lm_given_other_client_settings_shows_and_hides_those() -> None:
    lm = sio.LM("openai/m", api_base="http://127.0.0.1:9/v1", api_key="sk-first", cache=False)
    assert lm._history_params({})[1] == ["sk-first"]
    lm.client = lm.client.updated({"api_key": "sk-second"})
    shown, secrets = lm._history_params({"temperature": 0.5})
    assert secrets == ["sk-second"]
    assert shown == {"api_base": "http://127.0.0.1:9/v1", "temperature": 0.5}
