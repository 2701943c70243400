"""The ``structio`` logger: what a call did beyond its result, silent unless asked for.

structio logs retries after a provider error, re-asks, the fallback request, prompt
truncation, models the model map does not know, and callbacks that raised, to the logger
named ``"structio"``. It carries a `logging.NullHandler`, so an application that configures
no logging sees nothing (Python would otherwise print warnings to stderr through its
last-resort handler); one that does (``logging.basicConfig(level=logging.INFO)``) sees each
as one line.

`logging` itself is imported on the first record, never by ``import structio``: a call that
logs nothing never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["LOGGER_NAME", "disable_logging", "enable_logging", "logger"]

LOGGER_NAME = "structio"

_LOGGER: logging.Logger | None = None


def logger() -> logging.Logger:
    """The ``structio`` logger, with its `logging.NullHandler` (added once per process)."""
    global _LOGGER
    if _LOGGER is None:
        import logging

        found = logging.getLogger(LOGGER_NAME)
        # Another copy of structio (or a test) may have added it already; a second one
        # would do no harm (it does nothing), but one is enough.
        if not any(isinstance(h, logging.NullHandler) for h in found.handlers):
            found.addHandler(logging.NullHandler())
        _LOGGER = found
    return _LOGGER


def disable_logging() -> None:
    """Silence the ``structio`` logger, whatever the handlers (DSPy's ``disable_logging``)."""
    logger().disabled = True


def enable_logging() -> None:
    """Let the ``structio`` logger's records through again (DSPy's ``enable_logging``)."""
    logger().disabled = False
