"""The direct transport's endpoint: where a request goes, and what its address carries."""

from __future__ import annotations

import pytest

from structio.lm import _http


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("https://host/v1?key=abcdef", "https://host/v1/chat/completions?key=abcdef"),
        ("https://host/v1/?key=abcdef&x=1", "https://host/v1/chat/completions?key=abcdef&x=1"),
        ("https://host/v1#part", "https://host/v1/chat/completions"),  # never sent
        ("https://us:pw@host/v1", "https://us:pw@host/v1/chat/completions"),
    ],
)
def test_the_path_goes_before_the_query_of_the_api_base(base: str, url: str) -> None:
    assert _http.endpoint("openai/m", {"api_base": base}).url == url


def test_an_azure_version_joins_the_query_of_the_api_base() -> None:
    point = _http.endpoint(
        "azure/dep",
        {"api_base": "https://h.example/?sig=abcdef", "api_key": "k", "api_version": "2024-10-21"},
    )
    assert point.url == (
        "https://h.example/openai/deployments/dep/chat/completions?sig=abcdef&"
        "api-version=2024-10-21"
    )


def test_the_credentials_of_the_address_are_known_to_hide_them() -> None:
    point = _http.endpoint("openai/m", {"api_base": "https://user1:pass1@host/v1?key=k3y-value"})
    assert {"user1", "pass1", "user1:pass1", "k3y-value"} <= set(point.secrets)
    assert point.base == "https://user1:pass1@host/v1?key=k3y-value"
    assert _http.joined(point.base, "/files") == "https://user1:pass1@host/v1/files?key=k3y-value"
    assert _http.endpoint("openai/m", {"api_base": "http://127.0.0.1:1/v1"}).secrets == ()


THINKING = {"type": "thinking", "thinking": "t", "signature": "sig"}
REPLAYED = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "tool_calls": [], "reasoning_items": [THINKING]},
]


def test_reasoning_items_are_never_sent_on_chat_completions() -> None:
    point = _http.endpoint("openai/m", {"api_key": "k"})
    body = _http.request_body(point, REPLAYED, {})
    assert body["messages"][1] == {"role": "assistant", "content": None, "tool_calls": []}
    assert "reasoning_items" in REPLAYED[1]  # the caller's messages are left as they were


def test_litellm_gets_anthropics_thinking_blocks_and_nothing_else() -> None:
    from structio.lm._litellm import completion_args

    args = completion_args("anthropic/claude-sonnet-4-5", REPLAYED, {}, 10.0)
    assert args["messages"][1]["thinking_blocks"] == [THINKING]
    assert "reasoning_items" not in args["messages"][1]
    other = [{**REPLAYED[1], "reasoning_items": [{"type": "reasoning", "id": "rs_1"}]}]
    assert completion_args("openai/o3", other, {}, 10.0)["messages"] == [
        {"role": "assistant", "content": None, "tool_calls": []}
    ]


def test_litellm_never_sends_the_prompt_cache_setting() -> None:
    from structio.lm._litellm import completion_args

    args = completion_args(
        "anthropic/claude-sonnet-4-5", REPLAYED, {}, 10.0, {"prompt_cache": True}
    )
    assert "prompt_cache" not in args


def test_an_lms_endpoint_is_made_once_and_again_when_the_environment_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structio.exceptions import AuthenticationError
    from structio.lm.client import ClientSettings

    settings = ClientSettings({"extra_headers": {"X-Team": "a"}})
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "key-one")
    first = _http.endpoint("openai/m", settings)
    assert first.headers["Authorization"] == "Bearer key-one"
    assert _http.endpoint("openai/m", settings) is first  # nothing it reads has changed
    monkeypatch.setenv("OPENAI_API_KEY", "key-two")
    assert _http.endpoint("openai/m", settings).headers["Authorization"] == "Bearer key-two"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v2")
    assert _http.endpoint("openai/m", settings).url == "http://127.0.0.1:9/v2/chat/completions"
    # Equal settings in another object, and another model, are endpoints of their own.
    other = ClientSettings({"extra_headers": {"X-Team": "b"}})
    assert _http.endpoint("openai/m", other).headers["X-Team"] == "b"
    assert _http.endpoint("openai/n", settings).model == "n"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(AuthenticationError, match="no API key"):
        _http.endpoint("openai/m", settings)


def test_an_azure_endpoint_reads_its_version_from_the_environment_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structio.lm.client import ClientSettings

    settings = ClientSettings({"api_base": "https://h.example", "api_key": "k"})
    monkeypatch.setenv("AZURE_API_VERSION", "2024-01-01")
    assert _http.endpoint("azure/dep", settings).url.endswith("api-version=2024-01-01")
    monkeypatch.setenv("AZURE_API_VERSION", "2025-02-02")
    assert _http.endpoint("azure/dep", settings).url.endswith("api-version=2025-02-02")
