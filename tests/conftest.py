"""Test-suite guards: no internet, no shared cache, no leaked settings or API keys."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis's "input generation is slow" check times the draws on the wall clock: on a
# shared, loaded machine a stalled draw fails a test that found nothing. Nothing in this
# suite asserts on wall-clock time, so neither does this.
settings.register_profile("structio", suppress_health_check=[HealthCheck.too_slow])
# In CI the examples are the same on every run (derandomized): a run that lands is the run
# a contributor can repeat with `CI=true`. Random exploration is for runs here, where a
# failure is a bug to fix (each one found so far got a test of its own), not a lost landing.
settings.register_profile(
    "structio-ci",
    parent=settings.get_profile("structio"),
    derandomize=True,
    print_blob=True,
)
settings.load_profile("structio-ci" if os.environ.get("CI") else "structio")

# litellm must read its price map from the package, never fetch it.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


class InternetAccessError(RuntimeError):
    """A test tried to reach a host other than this machine."""


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if isinstance(address, tuple) and address[0] not in _LOCAL_HOSTS:
        raise InternetAccessError(
            f"a test tried to connect to {address!r}; tests stay on 127.0.0.1"
        )
    return _real_connect(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host not in _LOCAL_HOSTS and host is not None:
        raise InternetAccessError(f"a test tried to resolve {host!r}; tests stay on 127.0.0.1")
    return _real_getaddrinfo(host, *args, **kwargs)


# Installed at import, before any test or library opens a connection.
socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Each test gets its own cache directory, no provider keys and default settings."""
    cache_dir = tmp_path / "structio-cache"
    monkeypatch.setenv("STRUCTIO_CACHE_DIR", str(cache_dir))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    # litellm points TIKTOKEN_CACHE_DIR at its own tokenizer files, for the rest of the
    # process, when a call first imports its token counter (a streamed call does): put it
    # back, or what a later test's tokenizer (or subprocess) finds depends on the order.
    tiktoken_cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    yield cache_dir
    if tiktoken_cache is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = tiktoken_cache
    import structio
    from structio import settings
    from structio.lm import cache

    structio.configure(lm=None, adapter=None, callbacks=None)
    settings._global = settings.Settings()  # DSPy's keys too (track_usage, num_threads...)
    cache._CONFIGURED.clear()  # configure_cache's choice
    for opened in cache._DEFAULT.values():
        opened.close()
    cache._DEFAULT.clear()


@pytest.fixture
def exporter() -> Iterator[Any]:
    """An OpenTelemetry in-memory span exporter (the SDK is imported only by tests using it)."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    yield memory
    memory.clear()


@pytest.fixture
def server() -> Iterator[Any]:
    """The loopback OpenAI-compatible server (`tests.wire.server.OpenAIServer`), running."""
    from tests.wire.server import OpenAIServer

    srv = OpenAIServer().start()
    yield srv
    srv.stop()
