"""Classes named as ``module:QualName``: how saved files refer to code, never by ``eval``.

Loading such a name is an import, and importing a module runs its code. So a load imports
only modules the caller allows (`ImportPolicy`), and the check comes before the import:
a file cannot make structio run a module's code by naming it.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["SAFE_MODULES", "ImportPolicy", "class_ref", "import_ref", "is_module_name"]

#: Modules a saved file may always name: structio itself, and the standard modules (and
#: pydantic, which structio validates with) whose classes are plain data types. Each name
#: allows its submodules. Importing them runs no code a file could choose.
SAFE_MODULES = frozenset(
    {
        "structio",
        "builtins",
        "collections",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "ipaddress",
        "pathlib",
        "typing",
        "uuid",
        "pydantic",
    }
)

_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def is_module_name(name: object) -> bool:
    """Whether ``name`` is a dotted module name (``myapp.models``), nothing else."""
    return isinstance(name, str) and _MODULE_NAME.fullmatch(name) is not None


def _within(module_name: str, allowed: Iterable[str]) -> bool:
    """Whether ``module_name`` is one of ``allowed`` or a submodule of one."""
    return any(module_name == name or module_name.startswith(name + ".") for name in allowed)


class ImportPolicy:
    """Which modules a load may import: `SAFE_MODULES`, and what the caller adds.

    Args:
        allowed_modules: More module names to allow; each allows its submodules. A single
            string is one name.
        trust: Allow any module (the caller trusts the file).
        saved_from: The module the file says it was saved from. A file could claim any
            module, so it is allowed only when this program has imported it already: then
            naming it runs no new code.
    """

    __slots__ = ("allowed", "saved_from", "trust")

    def __init__(
        self,
        allowed_modules: Iterable[str] | None = None,
        *,
        trust: bool = False,
        saved_from: str | None = None,
    ) -> None:
        if isinstance(allowed_modules, str):
            allowed_modules = [allowed_modules]
        extra = frozenset(str(name) for name in allowed_modules or ())
        bad = sorted(name for name in extra if not is_module_name(name))
        if bad:
            raise ValueError(
                f"allowed_modules holds {', '.join(map(repr, bad))}, which "
                f"{'is not a module name' if len(bad) == 1 else 'are not module names'}; "
                "give dotted names such as 'myapp.models'"
            )
        self.allowed: frozenset[str] = SAFE_MODULES | extra
        self.trust = bool(trust)
        self.saved_from = saved_from if is_module_name(saved_from) else None

    def __repr__(self) -> str:
        if self.trust:
            return "ImportPolicy(trust=True)"
        return (
            f"ImportPolicy({sorted(self.allowed - SAFE_MODULES)!r}, saved_from={self.saved_from!r})"
        )

    def refusal(self, module_name: str) -> str | None:
        """Why ``module_name`` may not be imported, or None when it may.

        The reason names the module and says how to allow it; the caller puts it in the
        error of its own kind, after saying what named the module.
        """
        if self.trust or (is_module_name(module_name) and _within(module_name, self.allowed)):
            return None
        if (
            self.saved_from is not None
            and _within(module_name, [self.saved_from])
            and module_name in sys.modules
        ):
            return None
        note = ""
        if self.saved_from is not None and _within(module_name, [self.saved_from]):
            note = (
                " (the file says it was saved from that module, but this program has not "
                "imported it, and a file's word alone does not allow an import)"
            )
        return (
            f"module {module_name!r} is not allowed{note}; pass allowed_modules=[{module_name!r}] "
            "or trust_types=True if you trust this file"
        )


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


def import_ref(ref: str, *, policy: ImportPolicy) -> Any:
    """The object a ``module:QualName`` reference names, imported if ``policy`` allows.

    Callers check ``policy.refusal`` first to raise their own error; the check here makes
    sure that no path imports a module the policy refuses.

    Raises:
        ImportError: The reference is malformed, the policy refuses its module, the module
            cannot be imported, or it has no such attribute; the message says which.
    """
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ImportError(f"{ref!r} is not a module:QualName reference")
    refused = policy.refusal(module_name)
    if refused is not None:
        raise ImportError(f"{ref!r}: {refused}")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"{ref!r} is not importable ({exc}); install or put module {module_name!r} on the path"
        ) from None
    for attr in qualname.split("."):
        # A class's qualified name never walks through dunders (``__builtins__``...).
        if (attr.startswith("__") and attr.endswith("__")) or not hasattr(obj, attr):
            raise ImportError(
                f"{ref!r} is not importable (module {module_name!r} has no {qualname!r})"
            )
        obj = getattr(obj, attr)
    # A name may reach, through the module's own imports, a class of another module
    # (``pathlib:os.PathLike``): that module must be allowed too.
    owner = getattr(obj, "__module__", None)
    if isinstance(owner, str) and owner != module_name:
        refused = policy.refusal(owner)
        if refused is not None:
            raise ImportError(f"{ref!r} is a class of another module: {refused}")
    return obj
