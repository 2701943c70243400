"""Signatures in a module with ``from __future__ import annotations`` (string annotations)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

import structio as sio


class Address(BaseModel):
    city: str


class Extract(sio.Signature):
    """Extract the address."""

    text: str = sio.InputField()
    address: Address = sio.OutputField()
    kind: Literal["home", "work"] = sio.OutputField()
    lines: list[str] | None = sio.OutputField()


def test_module_level_string_annotations_resolve() -> None:
    assert Extract.output_fields["address"].annotation is Address
    assert Extract.output_fields["kind"].annotation == Literal["home", "work"]
    assert Extract.output_fields["lines"].annotation == (list[str] | None)


def test_classes_local_to_a_function_resolve() -> None:
    class Local(BaseModel):
        n: int

    class UsesLocal(sio.Signature):
        q: str = sio.InputField()
        a: Local = sio.OutputField()

    assert UsesLocal.output_fields["a"].annotation is Local
    parsed = sio.JSONAdapter().parse(UsesLocal, '{"a": {"n": 3}}')
    assert parsed == {"a": Local(n=3)}


def test_unresolvable_string_annotation_is_a_signature_error() -> None:
    with pytest.raises(sio.SignatureError, match=r"annotation 'Missing' of field `a` in Broken"):

        class Broken(sio.Signature):
            a: Missing = sio.OutputField()  # type: ignore[name-defined]  # noqa: F821
