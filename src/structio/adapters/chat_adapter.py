"""`ChatAdapter`: fields as ``[[ ## name ## ]]`` sections, DSPy's wire format."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from structio.adapters._values import format_value, type_info
from structio.adapters.base import (
    _STRUCTURE_SENTENCE,
    Adapter,
    SignatureLike,
    _NeedsJSONRequestError,
    as_signature,
)
from structio.adapters.json_adapter import JSONAdapter
from structio.exceptions import ParseError
from structio.signatures.signature import Signature

__all__ = ["ChatAdapter"]

_HEADER = re.compile(r"\[\[ ## (\w+) ## \]\]")
_COMPLETED = "[[ ## completed ## ]]"


class ChatAdapter(Adapter):
    r"""Writes each field as a ``[[ ## name ## ]]`` section and reads completions back.

    The prompts equal DSPy 3.4.1's byte for byte (except for the DSPy bugs structio fixes),
    so prompts tuned there behave the same here.

    Example:
        >>> import structio as sio
        >>> sio.ChatAdapter().parse("question -> answer: int", "[[ ## answer ## ]]\n42")
        {'answer': 42}
    """

    def __init__(self, *, fallback: Literal["json"] | None = "json") -> None:
        """Create a ChatAdapter.

        Args:
            fallback: What a call does when a completion cannot be read as sections:
                ``"json"`` (default) first reads the same completion as JSON (no new
                request) and only if that fails makes one request with `JSONAdapter`;
                ``None`` raises the `ParseError` at once. Provider errors never fall back.
        """
        if fallback not in ("json", None):
            raise ValueError(f"fallback must be 'json' or None, not {fallback!r}")
        self.fallback = fallback

    def __repr__(self) -> str:
        return "ChatAdapter()" if self.fallback == "json" else "ChatAdapter(fallback=None)"

    def format_field_structure(self, signature: type[Signature]) -> str:
        """``All interactions will be structured ...`` with one section per field."""
        inputs = self.format_input_structure(signature)
        outputs = "\n\n".join(
            f"[[ ## {name} ## ]]\n{type_info(f.annotation).placeholder(name)}"
            for name, f in signature.output_fields.items()
        )
        return "\n\n".join([_STRUCTURE_SENTENCE, inputs, outputs, _COMPLETED])

    def user_message_output_requirements(self, signature: type[Signature]) -> str:
        """``Respond with the corresponding output fields, starting with the field ...``."""
        fields = [
            f"`[[ ## {name} ## ]]`{self.format_type_requirement(f)}"
            for name, f in signature.output_fields.items()
        ]
        return (
            "Respond with the corresponding output fields, starting with the field "
            + ", then ".join(fields)
            + f", and then ending with the marker for `{_COMPLETED}`."
        )

    def format_assistant_message_content(
        self,
        signature: type[Signature],
        outputs: Mapping[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """Output sections followed by ``[[ ## completed ## ]]`` and a newline."""
        sections = []
        for name, f in signature.output_fields.items():
            if name in outputs:
                text = format_value(outputs[name], str_field=f.annotation is str)
            elif missing_field_message is not None:
                text = missing_field_message
            else:
                continue
            sections.append(f"[[ ## {name} ## ]]\n{text}")
        return "\n\n".join(sections).strip() + f"\n\n{_COMPLETED}\n"

    def parse(self, signature: SignatureLike, completion: str) -> dict[str, Any]:
        """Read ``[[ ## name ## ]]`` sections into typed outputs.

        A header must start its line (after indentation); text after it on the same line
        starts the value. The first section of an output wins; text before the first header,
        sections of unknown names and everything after ``[[ ## completed ## ]]`` are ignored.

        Raises:
            ParseError: A required output is missing, or a value does not fit its type or
                constraints.
        """
        sig = as_signature(signature)
        plan = self._plan(sig)
        values: dict[str, Any] = {}
        invalid: dict[str, tuple[str, str]] = {}
        for name, text in _split_sections(completion):
            info = plan.output_infos.get(name)
            if info is None or name in values or name in invalid:
                continue
            try:
                values[name] = info.parse_text(text)
            except ValueError as exc:
                invalid[name] = (text, str(exc))
        return self._finish(sig, completion, values, invalid)

    def _recover(self, sig: type[Signature], text: str, error: ParseError) -> dict[str, Any]:
        if self.fallback is None:
            raise error
        try:
            return JSONAdapter().parse(sig, text)
        except ParseError:
            raise _NeedsJSONRequestError(error) from error

    def _fallback_adapter(self) -> Adapter:
        return JSONAdapter()


def _split_sections(completion: str) -> list[tuple[str, str]]:
    # Text before the first header goes to a section with an empty name, which is no field.
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in completion.split("\n"):
        stripped = line.strip()
        match = _HEADER.match(stripped)
        if match:
            rest = stripped[match.end() :].strip()
            sections.append((match.group(1), [rest] if rest else []))
        else:
            sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip()) for name, lines in sections]
