"""A saved file sets only harmless request settings; where, as whom and how long need trust.

A prompt file is data anyone may edit. It must not send the next request (signed with the
caller's credentials, carrying the caller's prompt) to its own host, as its own account, to
be stored by the provider, or with no end to its retries and time: every setting beyond an
allowed list (`FILE_SETTINGS`), or out of its bounds, is refused unless the caller passes
``trust_endpoint=True``. An endpoint URL's user, password and query values are secrets.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio._util.secrets import (
    FILE_SETTINGS,
    REDACTED,
    check_file_settings,
    public_params,
    public_url,
    secret_values,
)
from structio.lm.client import is_client_setting

EVIL = "https://attacker.example"
URL_KEY = "urlkey-SECRET-4242"  # a made-up key carried in an address


def saved_lm(**settings: Any) -> dict[str, Any]:
    data = sio.LM("openai/gpt-4o-mini").to_dict()
    for name, value in settings.items():
        if name in data and name not in ("params", "client"):
            data[name] = value
        else:
            data["params" if not is_client_setting(name) else "client"][name] = value
    return data


REFUSED: list[dict[str, Any]] = [
    {"aws_bedrock_runtime_endpoint": EVIL},  # the example: a signed request sent away
    {"api_base": EVIL},
    {"api_key": "sk-attacker-0000"},  # the attacker's account reads every prompt
    {"extra_body": {"store": True}},  # kept by the provider
    {"metadata": {"x": "y"}},
    {"store": True},
    {"aws_region_name": "eu-west-1"},
    {"vertex_project": "other"},
    {"extra_headers": {"X-Forward": "me"}},
    {"thinking": {"type": "enabled", "budget_tokens": 10**9}},
    {"num_retries": 1_000_000},
    {"timeout": 1e9},
    {"timeout": None},  # no time limit at all
    {"backoff": 1e9},
    {"max_backoff": 1e9},
    {"n": 1000},
    {"max_tokens": 0},
    {"max_tokens": 10**12},
    {"temperature": -1},
    {"stop": {"x": 1}},
]


@pytest.mark.parametrize("settings", REFUSED, ids=lambda s: next(iter(s)))
def test_a_saved_lm_setting_beyond_the_allowed_list_is_refused(settings: dict[str, Any]) -> None:
    data = saved_lm(**settings)
    name = next(iter(settings))
    with pytest.raises(sio.ConfigurationError) as info:
        sio.LM.from_dict(json.loads(json.dumps(data)))
    message = str(info.value)
    assert f"sets {name}=" in message
    assert "trust_endpoint=True" in message
    assert "sk-attacker-0000" not in message  # a credential is named, never shown
    lm = sio.LM.from_dict(data, trust_endpoint=True)  # trusted: taken as written
    assert {**lm.params, **lm.client, **vars(lm)}[name] == settings[name]


# `backoff` and `max_backoff` are an LM's own options, never request parameters of a prompt.
PROMPT_REFUSED = [s for s in REFUSED if not s.keys() & {"backoff", "max_backoff"}]


@pytest.mark.parametrize("settings", PROMPT_REFUSED, ids=lambda s: next(iter(s)))
def test_a_saved_prompt_setting_beyond_the_allowed_list_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]
) -> None:
    path = tmp_path / "p.json"
    sio.Predict("q -> a", lm=sio.LM("openai/gpt-4o-mini")).save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["params"].update(settings)
    path.write_text(json.dumps(data), encoding="utf-8")
    name = next(iter(settings))
    with pytest.raises(sio.ConfigurationError, match=f"sets {name}="):
        sio.Predict.load(path)
    with pytest.raises(sio.ConfigurationError, match=f"sets {name}="):
        sio.Predict.from_dict(data)
    monkeypatch.setenv("STRUCTIO_HOME", str(tmp_path))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match=f"sets {name}="):
        sio.load_prompt("p")
    assert sio.Predict.load(path, trust_endpoint=True).params[name] == settings[name]


def test_with_an_lm_given_a_files_client_settings_are_dropped_and_the_rest_checked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "p.json"
    sio.Predict("q -> a").save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["params"] = {"api_base": EVIL, "api_key": "sk-attacker-0000"}
    path.write_text(json.dumps(data), encoding="utf-8")
    mine = sio.LM("openai/gpt-4o-mini")
    with caplog.at_level(logging.WARNING, logger="structio"):
        loaded = sio.Predict.load(path, lm=mine)
    assert loaded.params == {}
    assert "api_base" in caplog.text
    assert "sk-attacker-0000" not in caplog.text
    for refused in ({"num_retries": 10**6}, {"aws_bedrock_runtime_endpoint": EVIL}):
        data["params"] = refused
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(sio.ConfigurationError, match=next(iter(refused))):
            sio.Predict.load(path, lm=mine)


def test_a_files_reasks_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    sio.Predict("q -> a", max_retries=2).save(path)
    assert sio.Predict.load(path).options.max_retries == 2
    data = json.loads(path.read_text(encoding="utf-8"))
    data["max_retries"] = 10**6
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match="max_retries=1000000"):
        sio.Predict.load(path)
    assert sio.Predict.load(path, trust_endpoint=True).options.max_retries == 10**6


def test_what_structio_saves_loads_without_trust() -> None:
    lm = sio.LM(
        "openai/gpt-4o-mini", temperature=0.2, max_tokens=500, seed=1, stop=["\n"],
        num_retries=5, timeout=300, context_window=8000, top_p=0.9,
        response_format={"type": "json_object"}, reasoning_effort="low",
    )  # fmt: skip
    again = sio.LM.from_dict(json.loads(json.dumps(lm.to_dict())))
    assert again.params == lm.params
    assert (again.num_retries, again.timeout) == (5, 300)


def test_every_allowed_setting_has_a_check_that_refuses_a_wrong_type() -> None:
    for name in FILE_SETTINGS:
        with pytest.raises(sio.ConfigurationError, match=f"sets {name}="):
            check_file_settings({name: object()}, what="the file", trusted=False)


# -- secrets in URLs ---------------------------------------------------------------------

URLS = [
    f"https://host.example/v1?key={URL_KEY}",
    f"https://user:{URL_KEY}@host.example/v1",
    f"https://{URL_KEY}@host.example/v1",
    f"https://host.example/v1?a=1&api-key={URL_KEY}",
]


@pytest.mark.parametrize("url", URLS)
def test_a_key_in_an_endpoint_url_is_a_secret(url: str, tmp_path: Path) -> None:
    assert URL_KEY in secret_values({"api_base": url})
    assert URL_KEY not in str(public_params({"api_base": url}))
    assert "host.example/v1" in public_url(url)
    assert REDACTED in public_url(url)
    lm = sio.LM("openai/gpt-4o-mini", api_base=url)
    assert URL_KEY not in repr(lm)
    assert URL_KEY not in json.dumps(lm.to_dict())
    path = tmp_path / "p.json"
    sio.Predict("q -> a", lm=lm).save(path)
    assert URL_KEY not in path.read_text(encoding="utf-8")
    assert lm.client["api_base"] == url  # still sent as given


def test_a_url_without_credentials_is_kept_as_it_is() -> None:
    assert public_url("https://host.example:8443/v1") == "https://host.example:8443/v1"
    assert secret_values({"api_base": "http://localhost:8000/v1"}) == []
