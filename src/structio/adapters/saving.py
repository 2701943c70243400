"""An adapter's class as saved data: its name, and the class a name stands for.

structio's adapters are named by class name; others by ``module:QualName``, imported only
from the modules a caller allows (importing a module runs its code).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from structio._util.refs import ImportPolicy, class_ref, import_ref
from structio.exceptions import ConfigurationError

__all__ = ["adapter_class", "saved_name"]

T = TypeVar("T", bound=type)


def is_structio(klass: type) -> bool:
    """Whether a class is defined in structio itself."""
    module = klass.__module__
    return module == "structio" or module.startswith("structio.")


def saved_name(klass: type) -> str:
    """How a saved adapter names its class: structio's by name, others by reference.

    Raises:
        ConfigurationError: The class cannot be imported by name (defined in a function).
    """
    if is_structio(klass):
        return klass.__qualname__
    try:
        return class_ref(klass)
    except ValueError as exc:
        raise ConfigurationError(f"cannot save adapter {klass.__name__}: {exc}") from None


def adapter_class(
    root: T, name: str, allowed_modules: Iterable[str] | None, trust_types: bool
) -> T:
    """The subclass of ``root`` a saved name stands for, imported only if allowed.

    A class already defined in this program is used as it is; otherwise the module of a
    ``module:QualName`` is checked against the policy, then imported.

    Raises:
        ConfigurationError: No such adapter, a module that is not allowed (the message
            says how to allow it), an import that fails, or a class that is no adapter.
    """
    klass: object = defined_class(root, name)
    if klass is None and ":" not in name:
        raise ConfigurationError(
            f"cannot load adapter {name!r}: structio has no adapter of that name, and a "
            "custom adapter is named by module:QualName"
        )
    if klass is None:
        try:
            policy = ImportPolicy(allowed_modules, trust=trust_types)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        # Checked before any import: importing is what runs a module's code.
        refused = policy.refusal(name.partition(":")[0])
        if refused is not None:
            raise ConfigurationError(
                f"cannot load adapter: the file names class {name!r}: {refused}"
            )
        try:
            klass = import_ref(name, policy=policy)
        except ImportError as exc:
            raise ConfigurationError(f"cannot load adapter: {exc}") from None
    if not (isinstance(klass, type) and issubclass(klass, root)):
        raise ConfigurationError(f"cannot load adapter {name!r}: it is not an Adapter class")
    return klass  # type: ignore[return-value]


def defined_class(root: T, name: str) -> T | None:
    """A subclass of ``root`` this program has defined, found without importing anything.

    structio's adapters by class name (they are all imported with `structio.adapters`);
    others by ``module:QualName``, among the subclasses whose modules are imported already.
    """
    custom = ":" in name
    pending: list[type] = list(root.__subclasses__())
    while pending:
        klass = pending.pop()
        if custom:
            if "<locals>" not in klass.__qualname__ and name == (
                f"{klass.__module__}:{klass.__qualname__}"
            ):
                return klass  # type: ignore[return-value]
        elif klass.__qualname__ == name and is_structio(klass):
            return klass  # type: ignore[return-value]
        pending.extend(klass.__subclasses__())
    return None
