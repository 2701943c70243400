"""Saved, named prompts: a `Predict` as one readable JSON file.

The file holds the name, the signature (instructions; fields with descriptions, types as
text, user classes as ``module:QualName``), the demos, the adapter and the LM settings,
never API keys or other secrets. `save_prompt` / `load_prompt` keep prompts by name in
``$STRUCTIO_HOME/prompts/<name>.json`` (``~/.cache/structio/prompts`` by default).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from structio.exceptions import ConfigurationError
from structio.predict import Predict, check_name

__all__ = ["load_prompt", "prompts_dir", "save_prompt"]


def prompts_dir() -> Path:
    """Where `save_prompt` keeps prompts: ``$STRUCTIO_HOME/prompts``."""
    home = os.environ.get("STRUCTIO_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".cache" / "structio"
    return base / "prompts"


def save_prompt(predict: Predict) -> Path:
    """Save a named `Predict` to ``prompts_dir() / f"{name}.json"`` and return the path.

    Raises:
        ConfigurationError: The Predict has no name.
        SignatureError: Something in it cannot be saved (a type with no text form...).
    """
    if predict.name is None:
        raise ConfigurationError(
            "save_prompt needs a named prompt: Predict(..., name='question_generation'); "
            "or save it to a path of your choice with predict.save(path)"
        )
    path = prompts_dir() / f"{predict.name}.json"
    predict.save(path)
    return path


def load_prompt(
    name: str,
    *,
    trust_endpoint: bool = False,
    allowed_modules: Iterable[str] | None = None,
    trust_types: bool = False,
) -> Predict:
    """Load the prompt `save_prompt` saved under ``name``, importing only the modules allowed.

    Args:
        name: The prompt's name.
        trust_endpoint: Use the endpoint (``api_base``...) the file sets for its LM; off by
            default, so an edited file cannot send your requests and API key elsewhere.
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
    path = prompts_dir() / f"{check_name(name)}.json"
    if not path.is_file():
        saved = sorted(p.stem for p in prompts_dir().glob("*.json"))
        raise ConfigurationError(
            f"no saved prompt named {name!r} in {prompts_dir()} (saved: "
            f"{', '.join(saved) or 'none'}); save one with structio.save_prompt(predict)"
        )
    return Predict.load(
        path,
        trust_endpoint=trust_endpoint,
        allowed_modules=allowed_modules,
        trust_types=trust_types,
    )
