"""Signatures as plain data: types written as text, user classes as ``module:QualName``.

A type is written the way it reads in Python (``list[str]``, ``dict[str, int] | None``,
``Literal['a', 'b']``, ``Any``), except that a class which is not a builtin is written as
``module:QualName`` (``myapp.models:Patient``, ``datetime:date``), so that loading it is an
import and never an ``eval``. Importing runs a module's code, so a load imports only the
modules an `ImportPolicy` allows, and checks before it imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from structio._util.data import jsonable
from structio._util.refs import ImportPolicy, import_ref, is_module_name
from structio.exceptions import SignatureError
from structio.signatures._spec import resolve_type
from structio.signatures.field import MISSING, InputField, OutputField, SignatureField
from structio.typemodel.text import type_to_text

__all__ = [
    "dspy_state",
    "saved_module",
    "signature_from_dict",
    "signature_to_dict",
    "type_from_text",
    "type_to_text",
    "with_dspy_state",
]

_CLASS_REF = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)"""
)


def type_from_text(
    text: str,
    *,
    where: str = "type",
    policy: ImportPolicy | None = None,
    signature: str = "MySignature",
) -> Any:
    """Read a type written by `type_to_text`, importing ``module:QualName`` classes.

    Args:
        text: The type as text.
        where: What the type belongs to, for messages (``field `x` of QA``).
        policy: Which modules may be imported; by default `ImportPolicy()`: structio and
            the standard modules of plain types only.
        signature: The name of the signature the type belongs to, for the advice on a
            class of a script (``__main__``).

    Raises:
        SignatureError: The text is not a type, names a module the policy does not allow
            (nothing is imported then), or a class cannot be imported; the message names it.
    """
    allowed = policy if policy is not None else ImportPolicy()
    classes: dict[str, Any] = {}

    def substitute(match: re.Match[str]) -> str:
        if match.group(1) is None:  # a quoted string inside Literal[...]
            return match.group(0)
        alias = f"__structio_class_{len(classes)}"
        classes[alias] = _import_class(match.group(1), match.group(2), where, allowed, signature)
        return alias

    return resolve_type(_CLASS_REF.sub(substitute, text), custom_types=classes, where=where)


def _import_class(
    module_name: str, qualname: str, where: str, policy: ImportPolicy, signature: str
) -> Any:
    ref = f"{module_name}:{qualname}"
    # Checked before any import: importing is what runs a module's code.
    refused = policy.refusal(module_name)
    if refused is not None:
        raise SignatureError(
            f"cannot load {where}: the file names type {ref!r}: {refused}"
            f"{_script_hint(module_name, qualname, signature)}"
        )
    try:
        found = import_ref(ref, policy=policy)
    except ImportError as exc:
        if not module_name.startswith("structio."):
            raise SignatureError(
                f"cannot load {where}: type {exc}{_script_hint(module_name, qualname, signature)}"
            ) from None
        # A structio class saved under a module it has since moved from: its public name
        # is the one that lasts.
        try:
            found = import_ref(f"structio:{qualname}", policy=policy)
        except ImportError:
            raise SignatureError(f"cannot load {where}: type {exc}") from None
    if not isinstance(found, type):
        # type_to_text writes classes only; anything else (a function...) is not a type.
        raise SignatureError(f"cannot load {where}: {ref!r} is not a class")
    return found


def _script_hint(module_name: str, qualname: str, signature: str) -> str:
    """What to do about a class of the script that saved the file (nothing for others)."""
    if module_name != "__main__":
        return ""
    return (
        f"; {qualname} was defined in the script that saved the file (`__main__`), which no "
        f"other program can import: define {qualname} in a module that both programs import "
        "(e.g. models.py) and save again, or load the file into a predictor built with the "
        f"signature, which takes the types from it: structio.Predict({signature}).load(path)"
    )


def signature_to_dict(sig: Any) -> dict[str, Any]:
    """The signature as plain data (see `Signature.to_dict`)."""
    fields: list[dict[str, Any]] = []
    for name, field in sig.fields.items():
        where = f"field `{name}` of {sig.__name__}"
        item: dict[str, Any] = {
            "name": name,
            "kind": field.kind,
            "type": type_to_text(field.annotation, where=where),
        }
        if field.desc is not None:
            item["desc"] = field.desc
        if field.prefix is not None:
            item["prefix"] = field.prefix
        if field.constraints:
            item["constraints"] = dict(field.constraints)
        if field.default_factory is not None:
            raise SignatureError(
                f"cannot save {where}: a default_factory is code; give a default= value"
            )
        if field.default is not MISSING:
            item["default"] = jsonable(field.default)
        fields.append(item)
    data: dict[str, Any] = {
        "name": sig.__name__,
        "instructions": sig.instructions if sig.__sig_explicit__ else None,
        "fields": fields,
    }
    # Where the signature was defined: a load allows its types from there, once the
    # loading program has imported that module itself (see `ImportPolicy`).
    if is_module_name(sig.__module__):
        data["module"] = sig.__module__
    return data


def saved_module(data: Mapping[str, Any]) -> str | None:
    """The module a saved signature says it was defined in (older files do not say).

    Raises:
        SignatureError: The ``module`` entry is there but is not a module name.
    """
    module = data.get("module") if isinstance(data, Mapping) else None
    if module is not None and not is_module_name(module):
        raise SignatureError(
            f"a saved signature's 'module' is a dotted module name, not {module!r}"
        )
    return module


def signature_from_dict(
    data: Mapping[str, Any],
    *,
    allowed_modules: Iterable[str] | None = None,
    trust_types: bool = False,
    types: Mapping[str, Any] | None = None,
) -> tuple[str, str | None, dict[str, tuple[Any, SignatureField]], str | None]:
    """Read `signature_to_dict`'s data: the name, the instructions, the fields and the module.

    `Signature.from_dict` builds the class from them; the arguments are its own. The
    module is the one the data says the signature was defined in, or None.

    Raises:
        SignatureError: The data is malformed, names a module that is not allowed, or a
            type cannot be imported.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("fields"), list):
        raise SignatureError("a saved signature is a dict with a list of 'fields'")
    module = saved_module(data)
    try:
        policy = ImportPolicy(allowed_modules, trust=trust_types, saved_from=module)
    except ValueError as exc:
        raise SignatureError(str(exc)) from None
    name = data.get("name") or "StringSignature"
    spec: dict[str, tuple[Any, SignatureField]] = {}
    for index, item in enumerate(data["fields"]):
        if not isinstance(item, Mapping) or not {"name", "kind", "type"} <= item.keys():
            raise SignatureError(
                f"saved signature {name}: field {index} needs 'name', 'kind' and 'type'"
            )
        where = f"field `{item['name']}` of {name}"
        given = types or {}
        if str(item["name"]) in given:
            annotation = given[str(item["name"])]
        else:
            annotation = type_from_text(
                str(item["type"]),
                where=where,
                policy=policy,
                signature=name if name != "StringSignature" else "MySignature",
            )
        if item["kind"] not in ("input", "output"):
            raise SignatureError(f"{where}: kind must be 'input' or 'output'")
        make = InputField if item["kind"] == "input" else OutputField
        options: dict[str, Any] = dict(item.get("constraints") or {})
        if "default" in item:
            options["default"] = _typed(annotation, item["default"], where)
        field = make(desc=item.get("desc"), prefix=item.get("prefix"), **options)
        spec[str(item["name"])] = (annotation, field)
    instructions = data.get("instructions")
    return str(name), None if instructions is None else str(instructions), spec, module


def _typed(annotation: Any, value: Any, where: str) -> Any:
    """A JSON value back as the annotation's type (a dict back to a model...)."""
    if value is None:
        return None
    from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

    try:
        return TypeAdapter(annotation).validate_python(value)
    except PydanticSchemaGenerationError:  # a type pydantic cannot check: keep the value
        return value
    except ValidationError as exc:
        raise SignatureError(
            f"{where}: saved default {value!r} is not a valid value: {exc}"
        ) from None


# -- DSPy's state: instructions and field texts, over a signature the code defines ----------


def dspy_state(signature: Any) -> dict[str, Any]:
    """DSPy's ``Signature.dump_state()``: the instructions, each field's prefix and text."""
    return {
        "instructions": signature.instructions,
        "fields": [
            {
                "prefix": field.json_schema_extra["prefix"],
                "description": field.json_schema_extra["desc"],
            }
            for field in signature.fields.values()
        ],
    }


def with_dspy_state(signature: Any, state: Mapping[str, Any]) -> Any:
    """DSPy's ``Signature.load_state(state)``: a copy with the state's texts, fields in order.

    Raises:
        SignatureError: ``state`` is not what `dspy_state` makes.
    """
    fields = state.get("fields") if isinstance(state, Mapping) else None
    instructions = state.get("instructions") if isinstance(state, Mapping) else None
    if not isinstance(instructions, str) or not isinstance(fields, list):
        raise SignatureError(
            "a signature's state is {'instructions': str, 'fields': [{'prefix': ..., "
            "'description': ...}, ...]}, as Signature.dump_state() makes it"
        )
    loaded = signature.with_instructions(instructions)
    for name, saved in zip(signature.fields, fields, strict=False):  # as DSPy: by position
        desc = saved.get("description")
        # DSPy's placeholder for a field with no description: none, not that text.
        desc = None if desc == f"${{{name}}}" else desc
        loaded = loaded.with_updated_fields(name, desc=desc, prefix=saved.get("prefix"))
    return loaded
