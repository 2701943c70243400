"""The error tree: drawn in the module docstring, rooted at StructioError, builtin-compatible."""

from __future__ import annotations

import builtins
import re

import pytest

import structio
from structio import exceptions


def drawn_tree() -> dict[str, tuple[str | None, str | None]]:
    """From the docstring drawing: class name -> (drawn parent, builtin in parentheses)."""
    tree: dict[str, tuple[str | None, str | None]] = {}
    stack: list[tuple[int, str]] = []  # (column, name) of the current branch
    for line in (exceptions.__doc__ or "").splitlines():
        match = re.search(r"(\w+Error|Retry)\b(?:\s+\((\w+)\))?", line)
        if not match or not re.fullmatch(r"[\s│├└─]*", line[: match.start()]):
            continue
        column = match.start()
        while stack and stack[-1][0] >= column:
            stack.pop()
        tree[match.group(1)] = (stack[-1][1] if stack else None, match.group(2))
        stack.append((column, match.group(1)))
    return tree


def test_docstring_draws_every_error_class() -> None:
    classes = {
        name
        for name, value in vars(exceptions).items()
        if isinstance(value, type) and issubclass(value, Exception)
    }
    assert set(drawn_tree()) == classes


@pytest.mark.parametrize("name", sorted(drawn_tree()))
def test_drawing_matches_the_classes(name: str) -> None:
    parent, builtin = drawn_tree()[name]
    cls = getattr(exceptions, name)
    if parent is None:
        assert cls is exceptions.StructioError
    else:
        assert parent in [base.__name__ for base in cls.__bases__]
    if builtin:
        assert issubclass(cls, getattr(builtins, builtin))


def test_builtin_compatibility() -> None:
    assert issubclass(structio.SignatureError, TypeError)
    assert issubclass(structio.FormatError, ValueError)
    assert issubclass(structio.ParseError, ValueError)
    assert issubclass(structio.SignatureError, structio.UsageError)
    assert issubclass(structio.FormatError, structio.UsageError)
    assert not issubclass(structio.ParseError, structio.UsageError)


def test_every_class_says_when_it_is_raised() -> None:
    for name in drawn_tree():
        doc = getattr(exceptions, name).__doc__ or ""
        assert "raise" in doc.lower() or name == "StructioError", name
