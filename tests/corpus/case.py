"""One corpus case: a completion, and the values it holds or the fields it fails on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    """A completion for signature ``sig`` (a key of `SPECS`).

    ``expected`` holds the values an honest reader gets (JSON-compatible); ``error`` lists the
    fields a `ParseError` must name (missing or invalid) when there is no honest value.
    """

    id: str
    sig: str
    completion: str
    expected: dict[str, Any] | None = None
    error: list[str] | None = None

    def __post_init__(self) -> None:
        if (self.expected is None) == (self.error is None):
            raise ValueError(f"case {self.id}: give expected values or the failing fields")

    @property
    def must_fail(self) -> bool:
        return self.error is not None
