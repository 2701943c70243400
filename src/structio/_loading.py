"""Finding a signature from the command line: a file, a module, or a string spec."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
import typing
from pathlib import Path
from typing import Any

from structio.exceptions import SignatureError
from structio.signatures.signature import Signature, SignatureMeta, make_signature

__all__ = ["load_signature"]


def load_signature(ref: str) -> type[Signature]:
    """A signature from ``path/to/file.py:ClassName``, ``package.module:ClassName`` or a spec.

    A text with ``->`` is a string spec (``"question -> answer: int"``).

    Raises:
        SignatureError: The file, module or class cannot be found, or is not a signature.
    """
    if "->" in ref:
        return make_signature(ref)
    location, sep, name = ref.rpartition(":")
    if not sep or not location or not name.replace(".", "_").isidentifier():
        # Neither a spec nor a class: what a spec needs is what the user most likely missed.
        if ref.endswith(".py"):
            raise SignatureError(
                f"{ref!r} names a Python file but no class in it: give {ref}:ClassName"
            )
        try:
            return make_signature(ref)
        except SignatureError as exc:
            raise SignatureError(
                f"{exc}; or name a signature class: path/to/file.py:ClassName or "
                "package.module:ClassName"
            ) from None
    module = _module_from_file(location) if location.endswith(".py") else _module(location)
    obj: Any = module
    for attr in name.split("."):
        if not hasattr(obj, attr):
            raise SignatureError(
                f"{location} has no {name!r} (looking for signature {ref!r}); "
                + _suggestions(obj, attr)
            )
        obj = getattr(obj, attr)
    if not isinstance(obj, SignatureMeta):
        raise SignatureError(f"{ref!r} is a {type(obj).__name__}, not a Signature class")
    return typing.cast("type[Signature]", obj)


def _suggestions(owner: Any, missing: str) -> str:
    """What ``owner`` (a module, or a class) has instead of ``missing``: its signatures.

    The closest names first ("did you mean"), then every signature class it holds, so a
    typo and a wrong file are both plain at once.
    """
    found = sorted(
        name
        for name, value in vars(owner).items()
        if isinstance(value, SignatureMeta)
        and not name.startswith("_")
        # structio's own classes imported into the file (`Signature`) are not the user's.
        and getattr(value, "__module__", "").partition(".")[0] != "structio"
    )
    if not found:
        return "it holds no signature class (a subclass of structio.Signature)"
    close = difflib.get_close_matches(missing, found, n=3)
    if not close:
        # A different spelling of the case (`triage` for `Triage`) is a close match too.
        close = [name for name in found if name.lower() == missing.lower()]
    listed = f"its signature classes: {', '.join(found[:20])}"
    if len(found) > 20:
        listed += f" and {len(found) - 20:,} more"
    if close:
        return f"did you mean {' or '.join(repr(name) for name in close)}? I{listed[1:]}"
    return listed


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise SignatureError(f"cannot import module {name!r}: {exc}") from None


def _module_from_file(location: str) -> Any:
    try:
        path = Path(location).resolve()
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the path
        raise SignatureError(f"cannot read {location!r}: {exc}; give another path") from exc
    if not path.is_file():
        raise SignatureError(f"no such file: {location!r}")
    # The file's folder goes on the path, so that its own imports (and the classes it
    # names, saved as module:QualName) resolve as when it is run from there.
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None and Path(getattr(existing, "__file__", "") or "").resolve() == path:
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SignatureError(f"cannot load {location!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise SignatureError(f"{location} failed to load: {type(exc).__name__}: {exc}") from exc
    return module
