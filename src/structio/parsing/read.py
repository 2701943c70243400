"""Reading a value of a declared type from the text a model wrote.

`read_text` takes a section's text, `read_json_value` a value decoded from JSON; both
validate with the type model's validator and fall back to the lenient readings only where
exactly one reading exists.
"""

from __future__ import annotations

import decimal
import enum
import json
import re
import typing
from collections.abc import Mapping
from typing import Any, Literal

from structio._util.data import jsonable
from structio._util.scan import json_region, strip_fence
from structio.exceptions import ParseError
from structio.parsing.decode import decode_text_whole
from structio.parsing.lenient import (
    NO_READING,
    bool_reading,
    final_label,
    label_forms,
    list_items,
    names_only,
    number_reading,
    without_remark,
)
from structio.parsing.locate import Found
from structio.signatures.signature import Signature
from structio.typemodel.info import TypeInfo, core_type, type_info

__all__ = [
    "NONE_WORDS",
    "fill_omitted_outputs",
    "finish_outputs",
    "output_infos",
    "read_json_value",
    "read_outputs",
    "read_text",
]


# The one rule for "no value" written as text: in a section or a label line, an optional
# output whose whole text is one of these has no value (``None``). A JSON string is always
# the string it holds (``{"a": "None"}`` gives ``"None"``); JSON ``null`` is ``None``.
NONE_WORDS = frozenset(("None", "null", "NULL", "Null"))


def read_text(info: TypeInfo, text: str, *, from_json: bool = False) -> Any:
    """Turn a section's text into a value of ``info``'s type, or raise ValueError saying why.

    Args:
        info: The type model of the output.
        text: The text written for it.
        from_json: The text is a JSON string (kept as it is for an ``Optional[str]``, where
            a section's ``None`` means no value; see `NONE_WORDS`).
    """
    if info.is_str:
        # A str subclass (Reasoning) or constraints need the validator; plain text does not.
        return info.validate(text) if info.constraints or info.annotation is not str else text
    stripped = text.strip()
    if info.enum is not None:
        return _read_enum(info.enum, stripped)
    if info.literal is not None:
        if stripped in info.literal:
            return info.validate(stripped)
        stripped = _unwrap_literal(stripped)
        if stripped in info.literal:
            return info.validate(stripped)
    if info.str_or_none:
        if not from_json and stripped in NONE_WORDS:
            return None
        return info.validate(text)
    if not stripped:
        if info.optional:
            return None  # an empty section of an optional field: no value was given
        raise ValueError(f"expected {info.name}, found an empty value")
    candidate, whole = decode_text_whole(stripped)
    if isinstance(candidate, _DATA) and _is_sequence(info):
        # Data the text states is read as data, or refused: never split again as text
        # (`[1, 2]` is no `['[1', '2]']`), and never taken from inside prose. JSON that
        # was the whole text is stated whole: a second pass would cost a long list's time.
        if not (whole or _stated_whole(stripped)):
            raise ValueError(
                f"expected {info.name}: the text holds a list or object inside other text "
                "(or more than one); a list is read only from a list the text is, whole"
            )
        return info.validate(candidate)
    try:
        return info.validate(candidate)
    except ValueError as exc:
        lenient = _lenient(info, stripped)
        if lenient is NO_READING:
            raise
        try:
            return info.validate(lenient)
        except ValueError:
            # The text as written says what is wrong (item 1's qty), not a loose reading
            # of it that fails too (its pieces taken for items).
            raise exc from None


_DATA = (list, tuple, set, frozenset, dict)
_SEQUENCES = (list, set, frozenset, tuple)


def _is_sequence(info: TypeInfo) -> bool:
    return typing.get_origin(core_type(info.annotation)) in _SEQUENCES


def _stated_whole(text: str) -> bool:
    """Whether decoded data was the whole text (a fence aside), not a bracket inside prose.

    ``hmm [that] is it`` and ``[a] and [b]`` hold a list, but are not one.
    """
    body = strip_fence(text).strip()
    region = json_region(body)
    return region is None or region[0] == body


def read_json_value(info: TypeInfo, value: Any, *, from_json: bool = True) -> Any:
    """Turn a value decoded from JSON into a value of ``info``'s type, or raise ValueError.

    With ``from_json=False`` a string value is a section's text (see `read_text`).
    """
    if isinstance(value, str):
        return read_text(info, value, from_json=from_json)
    if info.is_str:
        if isinstance(value, (dict, list)):
            value = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, (int, float)):  # bool included: JSON true -> "True"
            value = str(value)
    return info.validate(value)


def _lenient(info: TypeInfo, text: str) -> Any:
    """The one reading of loosely written text for this type, or `NO_READING`.

    A value with a short remark after it on its line (`without_remark`) is read as the
    value alone; yes/no text is read with its remark by `bool_reading`, which refuses a
    remark that contradicts or hedges the answer.
    """
    core = core_type(info.annotation)
    choices = _choices(core)
    if choices is not None:
        return _choice_reading(text, choices)
    reading = _lenient_core(core, text)
    if reading is NO_READING and core is not bool:
        head = without_remark(text, number=core in _NUMBER_TYPES)
        if head is not NO_READING:
            reading = _lenient_core(core, head)
    return reading


_NUMBER_TYPES = (int, float, decimal.Decimal)


def _lenient_core(core: Any, text: str) -> Any:
    if core is bool:
        return bool_reading(text)
    if core in _NUMBER_TYPES:
        return number_reading(text)
    if typing.get_origin(core) in _SEQUENCES:
        return list_items(text, marked_only=_holds_text(core))
    return NO_READING


def _holds_text(core: Any) -> bool:
    """Whether a sequence type's items may be any text (``list[str]``, bare ``list``).

    Prose validates as such items, so only a list the text marks as one is read: a
    refusal written on two lines, or with a comma, is no list of two items.
    """
    args = [a for a in typing.get_args(core) if a is not Ellipsis]
    return not args or any(core_type(a) in (str, Any, object) for a in args)


def _choice_reading(text: str, choices: list[tuple[Any, list[Any]]]) -> Any:
    """The one choice (enum member, Literal value) loosely written text names, or none.

    The label itself however decorated; a number among numeric choices with the words that
    name it (``Level 2``); either with a short remark after it; or the one choice that
    prose ends on, emphasized (`final_label`).
    """
    numeric = all(_is_number(value) for value, _ in choices)
    for candidate in (text, without_remark(text, number=numeric)):
        if candidate is NO_READING:
            continue
        label = _match_label(candidate, choices)
        if label is NO_READING and numeric:
            number = number_reading(_LEADING_WORDS.sub("", candidate.strip(), count=1))
            if number is not NO_READING:
                label = _match_label(number, choices)
        if label is not NO_READING and (candidate is text or names_only(text, choices, label)):
            return label  # a remark that names another choice leaves no one reading
    return final_label(text, choices)


# Words before a number that name what it counts (`Level 2`): not part of the value.
_LEADING_WORDS = re.compile(r"^[*_`]*[A-Za-z][A-Za-z ]{0,29}\s(?=[*_`]*[-+]?\d)")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _choices(core: Any) -> list[tuple[Any, list[Any]]] | None:
    """Each value of an enum or Literal type with the names it may be written as."""
    if isinstance(core, type) and issubclass(core, enum.Enum):
        return [(m, [m.value, m.name]) for m in core]
    if typing.get_origin(core) is Literal:
        return [(v, [v]) for v in typing.get_args(core)]
    return None


def _read_enum(enum_cls: type[enum.Enum], text: str) -> Any:
    for member in enum_cls:
        if member.value == text or str(member.value) == text:
            return member
    for member in enum_cls:
        if member.name == text:
            return member
    member = _choice_reading(text, _choices(enum_cls) or [])
    if member is not NO_READING:
        return member
    allowed = "; ".join(str(m.value) for m in enum_cls)
    raise ValueError(f"{text!r} is not a value or name of {enum_cls.__name__} (one of: {allowed})")


def _match_label(text: str, choices: list[tuple[Any, list[Any]]]) -> Any:
    """The one choice a loosely written label names: exact first, then ignoring case."""
    for form in label_forms(text):
        exact = [value for value, names in choices if any(str(n) == form for n in names)]
        if len(exact) == 1:
            return exact[0]
        folded = [
            value
            for value, names in choices
            if any(str(n).casefold() == form.casefold() for n in names)
        ]
        if len(folded) == 1:
            return folded[0]
    return NO_READING


def _unwrap_literal(text: str) -> str:
    for opener in ("Literal[", "str["):
        if text.startswith(opener) and text.endswith("]"):
            text = text[len(opener) : -1].strip()
            break
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text


def output_infos(signature: type[Signature]) -> dict[str, TypeInfo]:
    """The type model of each output, with its constraints (computed once per signature)."""
    cache = signature.__structio_cache__
    infos: dict[str, TypeInfo] | None = cache.get("output_infos")
    if infos is None:
        infos = cache["output_infos"] = {
            name: type_info(f.annotation, tuple(f.constraints.items()))
            for name, f in signature.output_fields.items()
        }
    return infos


_NOTHING_FOUND = (
    "found no outputs: no [[ ## field ## ]] sections, JSON object or `Field: value` lines "
    "naming them"
)


def read_outputs(
    signature: type[Signature], completion: str, found: Found | None, *, adapter: str
) -> dict[str, Any]:
    """Every output's typed value from where a reader `found` them, or `ParseError`.

    Omitted optional outputs are filled from their defaults or ``None``; a required output
    that is missing, cut off, invalid or given two different values (`Found.conflicts`) is
    reported, with every such field, in one error that names ``adapter``. An optional
    output given two values is reported too: its value is not known to be absent.
    """
    if found is None:
        return finish_outputs(
            signature, completion, {}, {}, adapter=adapter, problem=_NOTHING_FOUND
        )
    infos = signature.__structio_cache__.get("output_infos") or output_infos(signature)
    values: dict[str, Any] = {}
    invalid: dict[str, tuple[str, str]] = {}
    for name in found.cut_off:
        invalid[name] = (
            _shown(found.texts.get(name, "")),
            "the completion is cut off here; the value may be incomplete",
        )
    if found.conflicts:  # two different values written for one output: no one reading
        invalid.update(found.conflicts)
    from_json = found.how.startswith("JSON")
    for name, raw in found.texts.items():
        if name in found.cut_off or raw is None:  # JSON null: the output was not given
            continue
        try:
            values[name] = read_json_value(infos[name], raw, from_json=from_json)
        except ValueError as exc:
            invalid[name] = (_shown(raw), str(exc))
    return finish_outputs(signature, completion, values, invalid, adapter=adapter)


def finish_outputs(
    signature: type[Signature],
    completion: str,
    values: Mapping[str, Any],
    invalid: Mapping[str, tuple[str, str]],
    *,
    adapter: str,
    problem: str | None = None,
) -> dict[str, Any]:
    """Fill defaults and ``None`` for omitted optional outputs, or raise `ParseError`."""
    result, missing = fill_omitted_outputs(signature, values, skip=invalid)
    if missing or invalid or problem:
        if not completion.strip():
            problem = "the completion is empty"
        raise ParseError(
            adapter=adapter,
            signature=signature,
            completion=completion,
            parsed=values,
            missing=missing,
            invalid=invalid,
            problem=problem,
        )
    return result


def fill_omitted_outputs(
    signature: type[Signature],
    values: Mapping[str, Any],
    skip: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Outputs in signature order, omitted ones filled from defaults or ``None``.

    Returns the filled values and the names of required outputs that are still missing;
    names in ``skip`` (outputs already known to be invalid) are neither filled nor missing.
    """
    result: dict[str, Any] = {}
    missing: list[str] = []
    for name, field in signature.output_fields.items():
        if name in values:
            result[name] = values[name]
        elif skip and name in skip:
            continue
        elif field.has_default:
            result[name] = field.get_default()
        elif field.admits_none:
            result[name] = None
        else:
            missing.append(name)
    return result, missing


def _shown(raw: Any) -> str:
    """A found value as the text an error quotes."""
    return raw if isinstance(raw, str) else json.dumps(jsonable(raw), ensure_ascii=False)
