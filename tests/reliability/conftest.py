"""The loopback OpenAI-compatible server of the wire tests, for the reliability tests too."""

from tests.wire.conftest import make_lm, server, transport

__all__ = ["make_lm", "server", "transport"]
