"""Saved, named prompts: a `Predict` as one readable JSON file.

The file holds the name, the signature (instructions; fields with descriptions, types as
text, user classes as ``module:QualName``), the demos, the adapter and the LM settings,
never API keys or other secrets. `save_prompt` / `load_prompt` keep prompts by name in
`prompts_dir()`: ``$STRUCTIO_HOME/prompts`` when that is set, else the platform's folder
for user data, which clearing a cache does not touch (``$XDG_DATA_HOME/structio/prompts``,
by default ``~/.local/share/structio/prompts``, on Linux; ``~/Library/Application
Support/structio/prompts`` on macOS; ``%APPDATA%/structio/prompts`` on Windows).

Earlier versions kept them in the cache folder, ``~/.cache/structio/prompts``. The first
`save_prompt` or `load_prompt` of a process moves the prompts found there to
`prompts_dir()`, logging each (logger ``"structio"``); one that cannot be moved is still
read from there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from structio._util.files import TEXT_ENCODING, atomic_write
from structio._util.log import logger
from structio.exceptions import ConfigurationError
from structio.predict import Predict, check_name

if TYPE_CHECKING:
    from structio.lm.base import BaseLM

__all__ = ["load_prompt", "prompts_dir", "save_prompt"]

# (old folder, new folder) pairs already looked at by this process.
_MOVED: set[tuple[Path, Path]] = set()


def prompts_dir() -> Path:
    """Where `save_prompt` keeps prompts: ``$STRUCTIO_HOME/prompts``, else the user data folder.

    The data folder is the platform's: ``$XDG_DATA_HOME/structio`` (default
    ``~/.local/share/structio``) on Linux and other Unix systems, ``~/Library/Application
    Support/structio`` on macOS, ``%APPDATA%/structio`` on Windows.
    """
    home = os.environ.get("STRUCTIO_HOME")
    if home:
        return Path(home).expanduser() / "prompts"
    return _data_dir(sys.platform, os.environ) / "structio" / "prompts"


def _data_dir(platform: str, environ: Mapping[str, str]) -> Path:
    """The folder for a user's application data on ``platform`` (a `sys.platform` value)."""
    if platform == "win32":
        appdata = environ.get("APPDATA")
        return Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
    if platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    # The XDG spec: a relative $XDG_DATA_HOME is invalid and must be ignored.
    xdg = environ.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return Path.home() / ".local" / "share"


def _old_prompts_dir() -> Path | None:
    """Where versions before this one kept prompts without $STRUCTIO_HOME: the cache folder."""
    if os.environ.get("STRUCTIO_HOME"):
        return None  # $STRUCTIO_HOME/prompts has not moved
    return Path.home() / ".cache" / "structio" / "prompts"


def _move_old_prompts(folder: Path) -> None:
    """Move the prompts an earlier version saved in the cache folder into ``folder``, once."""
    old = _old_prompts_dir()
    if old is None or (old, folder) in _MOVED:
        return
    _MOVED.add((old, folder))
    if old == folder or not old.is_dir():
        return
    for path in sorted(old.glob("*.json")):
        target = folder / path.name
        if target.exists():
            logger().info(
                "saved prompt %s is not moved to %s, which has a prompt of that name (the one "
                "used); delete the old file if it is not needed",
                path,
                folder,
            )
            continue
        try:
            if not _move(path, target):
                continue
        except FileNotFoundError:
            continue  # another process moved it first
        except OSError as exc:
            logger().warning(
                "saved prompt %s could not be moved to %s (%s); it is read from where it is, "
                "and clearing the cache folder would delete it",
                path,
                folder,
                exc,
            )
            continue
        logger().warning(
            "moved saved prompt %s from the cache folder to %s, where clearing the cache "
            "does not delete it",
            path.name,
            folder,
        )


def _move(source: Path, target: Path) -> bool:
    """Move a file, unless a file of the same name was saved meanwhile (then False)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # A hard link fails if the target exists: a prompt saved meanwhile is never replaced.
        os.link(source, target)
    except FileExistsError:
        return False  # saved meanwhile: that one is used, the old file stays
    except FileNotFoundError:
        raise
    except OSError:
        # Another file system, or one without hard links: copy, then remove the old file.
        text = source.read_text(encoding=TEXT_ENCODING)
        if target.exists():
            return False

        def write(handle: IO[str]) -> None:
            handle.write(text)

        atomic_write(target, write, what="the saved prompt")
    source.unlink()
    return True


def save_prompt(predict: Predict) -> Path:
    """Save a named `Predict` to ``prompts_dir() / f"{name}.json"`` and return the path.

    Raises:
        ConfigurationError: The Predict has no name.
        SignatureError: Something in it cannot be saved (a type with no text form...).
        SaveError: The file cannot be written (no permission, a full disk...); a prompt
            already saved under the name is left as it was.
    """
    if predict.name is None:
        raise ConfigurationError(
            "save_prompt needs a named prompt: Predict(..., name='question_generation'); "
            "or save it to a path of your choice with predict.save(path)"
        )
    folder = prompts_dir()
    _move_old_prompts(folder)
    path = folder / f"{predict.name}.json"
    predict.save(path)
    return path


def load_prompt(
    name: str,
    *,
    lm: BaseLM | None = None,
    trust_endpoint: bool = False,
    allowed_modules: Iterable[str] | None = None,
    trust_types: bool = False,
) -> Predict:
    """Load the prompt `save_prompt` saved under ``name``, importing only the modules allowed.

    Args:
        name: The prompt's name.
        lm: The model to call, instead of the one the file describes (whose endpoint,
            if it sets one, is then not used and needs no trust).
        trust_endpoint: Use every setting the file gives (see `Predict.from_dict`); off by
            default, so an edited file cannot send your requests and API key elsewhere, as
            another account, or with no end to their cost and time.
        allowed_modules: Modules, beyond structio, the standard modules of plain types and
            the module the prompt's signature was saved from (when this program has
            imported it), whose classes the file may name; each allows its submodules.
        trust_types: Allow the file to import any module: only for a file you trust as you
            trust code.

    Raises:
        ConfigurationError: The name is malformed, no prompt of that name is saved, the
            file sets an endpoint and ``trust_endpoint`` is False, or it names an adapter
            class of a module that is not allowed.
        SignatureError: The file names a type of a module that is not allowed (nothing is
            imported then), or a type that cannot be imported.
    """
    folder = prompts_dir()
    _move_old_prompts(folder)
    file_name = f"{check_name(name)}.json"
    old = _old_prompts_dir()
    # A prompt that could not be moved from the old folder is still read from there.
    found = [d / file_name for d in (folder, old) if d is not None and (d / file_name).is_file()]
    if not found:
        saved = sorted({p.stem for d in (folder, old) if d is not None for p in d.glob("*.json")})
        raise ConfigurationError(
            f"no saved prompt named {name!r} in {folder} (saved: "
            f"{', '.join(saved) or 'none'}); save one with structio.save_prompt(predict)"
        )
    path = found[0]
    return Predict.load(
        path,
        lm=lm,
        trust_endpoint=trust_endpoint,
        allowed_modules=allowed_modules,
        trust_types=trust_types,
    )
