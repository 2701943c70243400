"""No repr, str, history, cache key or saved file ever shows a credential: one rule for all."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio._util.secrets import is_secret, public_params
from structio.lm.cache import cache_key

SECRET = "sk-SECRET-0123456789"  # noqa: S105 - a made-up key the tests look for

CREDENTIALS: dict[str, Any] = {
    "api_key": SECRET,
    "azure_ad_token": SECRET,
    "vertex_credentials": SECRET,
    "aws_secret_access_key": SECRET,
    "client_secret": SECRET,
    "extra_headers": {"Authorization": f"Bearer {SECRET}", "X-Request-Id": "visible"},
    "headers": {"api-key": SECRET, "X-Custom-Token": SECRET, "Accept": "application/json"},
}


def shown(*objects: Any) -> str:
    return "\n".join(f"{obj!r}\n{obj!s}" for obj in objects)


def test_the_rule() -> None:
    for name in ("api_key", "API_KEY", "azure_ad_token", "aws_secret_access_key", "password"):
        assert is_secret(name), name
    # prompt_cache_key (OpenAI's) names a cache: a request parameter, sent and shown.
    for name in ("max_tokens", "temperature", "api_base", "top_k", "keywords", "prompt_cache_key"):
        assert not is_secret(name), name
    clean = public_params({**CREDENTIALS, "max_tokens": 5})
    assert clean == {
        "max_tokens": 5,
        "extra_headers": {"X-Request-Id": "visible"},
        "headers": {"Accept": "application/json"},
    }


def test_an_lm_never_shows_a_credential() -> None:
    lm = sio.LM("openai/gpt-4o-mini", temperature=0, cache=False, **CREDENTIALS)
    text = shown(lm)
    assert SECRET not in text
    assert "temperature=0" in text
    assert "X-Request-Id" in text  # what is not a secret is still shown
    assert lm.client["api_key"] == SECRET  # it is kept, only never shown


def test_objects_around_a_call_never_show_a_credential(tmp_path: Path) -> None:
    lm = sio.FakeLM(["[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"])
    predict = sio.Predict("question -> answer: int", lm=lm, **CREDENTIALS)
    with sio.context(lm=lm) as settings:
        prediction = predict(question="2+2?")
    (call,) = lm.calls
    (entry,) = lm.history
    printed = io.StringIO()
    sio.inspect_history(1, file=printed)
    assert SECRET not in shown(predict, prediction, call, entry, settings, lm, printed.getvalue())
    assert SECRET not in json.dumps(call.params) + json.dumps(entry.params)


def test_saved_files_and_cache_keys_hold_no_credential(tmp_path: Path) -> None:
    lm = sio.LM("openai/gpt-4o-mini", cache=False, **CREDENTIALS)
    path = tmp_path / "qa.json"
    sio.Predict("question -> answer", lm=lm, **CREDENTIALS).save(path)
    assert SECRET not in path.read_text(encoding="utf-8")
    messages = [{"role": "user", "content": "hi"}]
    rotated = {k: ("other" if isinstance(v, str) else v) for k, v in CREDENTIALS.items()}
    assert SECRET not in cache_key("m", messages, CREDENTIALS)
    assert cache_key("m", messages, CREDENTIALS) == cache_key("m", messages, rotated)


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
def test_each_credential_alone_is_hidden_from_an_lm_repr(name: str) -> None:
    lm = sio.LM("openai/gpt-4o-mini", cache=False, **{name: CREDENTIALS[name]})
    assert SECRET not in shown(lm)
