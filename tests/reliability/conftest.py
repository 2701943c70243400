"""The wire tests' LMs on the loopback server, for the reliability tests too."""

from tests.wire.conftest import make_lm, transport

__all__ = ["make_lm", "transport"]
