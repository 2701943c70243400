"""Saved, named prompts: a `Predict` as one readable JSON file.

The file holds the name, the signature (instructions; fields with descriptions, types as
text, user classes as ``module:QualName``), the demos, the adapter and the LM settings,
never API keys or other secrets. `save_prompt` / `load_prompt` keep prompts by name in
``$STRUCTIO_HOME/prompts/<name>.json`` (``~/.cache/structio/prompts`` by default).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structio.exceptions import ConfigurationError, SignatureError

if TYPE_CHECKING:
    from structio.adapters.base import Adapter
    from structio.lm.base import BaseLM
    from structio.predict import Predict

__all__ = ["load_prompt", "prompts_dir", "save_prompt"]

FORMAT_VERSION = 1
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def prompts_dir() -> Path:
    """Where `save_prompt` keeps prompts: ``$STRUCTIO_HOME/prompts``."""
    home = os.environ.get("STRUCTIO_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".cache" / "structio"
    return base / "prompts"


def check_name(name: Any) -> str:
    """A prompt name: letters, digits, ``_``, ``.`` and ``-`` (it names a file).

    Raises:
        ConfigurationError: The name is not of that form.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise ConfigurationError(
            f"a prompt name is letters, digits, '_', '.' and '-' (it names a file), "
            f"not {name!r}; e.g. name='question_generation'"
        )
    return name


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


def load_prompt(name: str) -> Predict:
    """Load the prompt `save_prompt` saved under ``name``.

    Raises:
        ConfigurationError: The name is malformed, or no prompt of that name is saved.
        SignatureError: The file names a type that cannot be imported.
    """
    from structio.predict import Predict

    path = prompts_dir() / f"{check_name(name)}.json"
    if not path.is_file():
        saved = sorted(p.stem for p in prompts_dir().glob("*.json"))
        raise ConfigurationError(
            f"no saved prompt named {name!r} in {prompts_dir()} (saved: "
            f"{', '.join(saved) or 'none'}); save one with structio.save_prompt(predict)"
        )
    return Predict.load(path)


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented JSON, atomically: the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> dict[str, Any]:
    """Read a saved prompt file.

    Raises:
        ConfigurationError: The file cannot be read or is not a saved prompt.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read saved prompt {str(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"saved prompt {str(path)!r} is not valid JSON (line {exc.lineno}): {exc.msg}"
        ) from None
    if not isinstance(data, dict) or "signature" not in data:
        raise ConfigurationError(f"{str(path)!r} is not a saved structio prompt")
    version = data.get("structio_prompt")
    if version != FORMAT_VERSION:
        raise ConfigurationError(
            f"{str(path)!r} is saved prompt format {version!r}; this structio reads "
            f"format {FORMAT_VERSION}"
        )
    return data


def adapter_to_dict(adapter: Adapter | None) -> dict[str, Any] | None:
    """The adapter as data: its class and options."""
    if adapter is None:
        return None
    from structio.adapters.chat_adapter import ChatAdapter
    from structio.adapters.json_adapter import JSONAdapter

    if type(adapter) is ChatAdapter:
        return {"type": "ChatAdapter", "fallback": adapter.fallback}
    if type(adapter) is JSONAdapter:
        return {"type": "JSONAdapter"}
    raise SignatureError(
        f"cannot save adapter {type(adapter).__name__}: only ChatAdapter and JSONAdapter "
        "are saved; set it again after loading"
    )


def adapter_from_dict(data: Mapping[str, Any] | None) -> Adapter | None:
    """The adapter `adapter_to_dict` described."""
    if data is None:
        return None
    from structio.adapters.chat_adapter import ChatAdapter
    from structio.adapters.json_adapter import JSONAdapter

    if data.get("type") == "ChatAdapter":
        return ChatAdapter(fallback=data.get("fallback", "json"))
    if data.get("type") == "JSONAdapter":
        return JSONAdapter()
    raise ConfigurationError(f"unknown adapter in a saved prompt: {data.get('type')!r}")


def lm_to_dict(lm: BaseLM | None) -> dict[str, Any] | None:
    """An `LM`'s settings without secrets; ``None`` for no LM or another kind of model."""
    from structio.lm.lm import LM

    if not isinstance(lm, LM):
        return None
    return {
        "model": lm.model,
        "num_retries": lm.num_retries,
        "timeout": lm.timeout,
        "backoff": lm.backoff,
        "max_backoff": lm.max_backoff,
        "context_window": lm.context_window,
        "cache": lm.cache is not False,
        "kwargs": public_settings(lm.kwargs),
    }


def lm_from_dict(data: Mapping[str, Any] | None) -> BaseLM | None:
    """The `LM` `lm_to_dict` described (API keys come from the environment, as usual)."""
    if data is None:
        return None
    from structio.lm.lm import LM

    settings = dict(data)
    kwargs = dict(settings.pop("kwargs", {}) or {})
    model = settings.pop("model")
    return LM(model, **settings, **kwargs)


def public_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Request settings minus secrets (API keys, tokens, passwords, auth headers), as JSON.

    The same rule as the response cache and the call history use (`public_params`).
    """
    from structio.adapters._values import jsonable
    from structio.lm.cache import public_params

    return {k: jsonable(v) for k, v in public_params(settings).items()}
