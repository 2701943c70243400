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
