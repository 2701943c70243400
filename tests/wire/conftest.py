"""Fixtures for the wire tests: LMs pointed at the loopback server (`server`, tests/conftest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import structio as sio
from tests.wire.server import OpenAIServer


@pytest.fixture(params=["direct", "litellm"])
def transport(request: pytest.FixtureRequest) -> str:
    """Each wire test runs over both transports: they must behave the same."""
    return str(request.param)


@pytest.fixture
def make_lm(server: OpenAIServer, transport: str) -> Callable[..., sio.LM]:
    """An LM for the loopback server: no cache and quick backoff unless asked otherwise."""

    def make(**kwargs: Any) -> sio.LM:
        options: dict[str, Any] = {
            "api_base": server.base_url,
            "api_key": "test-key",
            "cache": False,
            "backoff": 0.01,
            "transport": transport,
        }
        options.update(kwargs)
        return sio.LM("openai/test", **options)

    return make
