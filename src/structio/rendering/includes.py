"""Template includes confined to one folder: the include rule and the loader that keeps it.

``{% include %}`` (and ``import``, ``extends``) read only files inside the template's
folder: a name with a ``..`` segment, an absolute path, a drive, a backslash, or a symbolic
link that resolves outside the folder is refused, whether the name is written in the
template or comes from the data.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structio._util.files import TEXT_ENCODING
from structio.rendering.budget import _recorder, _RefusedError, _where

if TYPE_CHECKING:
    from importlib.abc import Traversable

_DRIVE = re.compile(r"[A-Za-z]:")


def _pieces(name: str) -> list[str]:
    return [piece for piece in name.split("/") if piece not in ("", ".")]


def _include_problem(name: object) -> str | None:
    """Why an include name would leave the template folder, or None where it stays inside."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a file name"
    if "\\" in name:
        return "contains a backslash (separate folders with '/')"
    if "\x00" in name:
        return "contains a NUL character"
    if name.startswith("/"):
        return "is an absolute path; includes are relative to the template folder"
    if _DRIVE.match(name):
        return "names a drive; includes are relative to the template folder"
    if ".." in name.split("/"):
        return "leaves the template folder ('..')"
    if not _pieces(name):
        return "names no file"
    return None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _refused_include(template: str, include: object, problem: str) -> _RefusedError:
    state = _recorder.get()
    where = _where(state, sys._getframe()) if state is not None else f"template {template}"
    shown = include if isinstance(include, str) else type(include).__name__
    return _RefusedError(f"{where}: include {shown!r} {problem}")


@functools.cache
def _loader_class() -> type[Any]:
    import jinja2

    class _ConfinedLoader(jinja2.BaseLoader):
        """Reads includes from one folder and never from outside it.

        Args:
            folder: The folder include names are relative to.
            boundary: The real path a file must resolve inside (symbolic links followed),
                or None where the folder is not on disk (a zipped package).
            template: The template's name, for error messages.
        """

        def __init__(self, folder: Traversable, boundary: Path | None, template: str) -> None:
            self.folder = folder
            self.boundary = boundary
            self.template = template

        def get_source(
            self, environment: jinja2.Environment, template: str
        ) -> tuple[str, str | None, Callable[[], bool] | None]:
            problem = _include_problem(template)
            if problem is not None:
                raise _refused_include(self.template, template, problem)
            target = self.folder.joinpath(*_pieces(template))
            if not isinstance(target, Path):  # inside a zip file: no links to follow
                if not target.is_file():
                    raise jinja2.TemplateNotFound(template)
                return target.read_text(encoding=TEXT_ENCODING), None, None
            real = _real(target)
            if self.boundary is not None and not _inside(real, self.boundary):
                raise _refused_include(
                    self.template,
                    template,
                    "resolves outside the template folder (through a symbolic link)",
                )
            try:
                # Read the path that was checked, not the name: a link swapped in between
                # must not lead elsewhere.
                mtime = os.path.getmtime(real)
                source = real.read_text(encoding=TEXT_ENCODING) if real.is_file() else None
            except OSError:
                source = None
            if source is None:
                raise jinja2.TemplateNotFound(template)

            def uptodate() -> bool:
                try:
                    return os.path.getmtime(real) == mtime
                except OSError:
                    return False

            return source, str(target), uptodate

    return _ConfinedLoader
