"""Classes named as ``module:QualName``: how saved files refer to code, never by ``eval``."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["class_ref", "import_ref"]


def class_ref(cls: type) -> str:
    """``module:QualName`` of a class defined at module level.

    Raises:
        ValueError: The class is defined inside a function, so no file can import it.
    """
    qualname = cls.__qualname__
    if "<locals>" in qualname:
        raise ValueError(
            f"the class {qualname} is defined inside a function, so it cannot be imported "
            "when the file is loaded; define it at module level"
        )
    return f"{cls.__module__}:{qualname}"


def import_ref(ref: str) -> Any:
    """The object a ``module:QualName`` reference names, imported.

    Raises:
        ImportError: The reference is malformed, the module cannot be imported, or it has
            no such attribute; the message says which.
    """
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ImportError(f"{ref!r} is not a module:QualName reference")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"{ref!r} is not importable ({exc}); install or put module {module_name!r} on the path"
        ) from None
    for attr in qualname.split("."):
        if not hasattr(obj, attr):
            raise ImportError(
                f"{ref!r} is not importable (module {module_name!r} has no {qualname!r})"
            )
        obj = getattr(obj, attr)
    return obj
