"""Constrained decoding: what an adapter asks a local server to hold its answer to.

A local server (`structio.lm.servers`) can constrain decoding to a grammar or a JSON
schema. Each adapter's ``constrain`` option says whether it asks: ``True`` always (an
error when the model's server cannot), ``False`` never, ``None`` (the default) as the
adapter's class says (``constrain_default``: ``False`` for every built-in adapter, the
better of the two on a real small model for each, `benchmarks/real_model.py`; see
docs/tutorials/local-models.md). Text formats (`ChatAdapter`, `XMLAdapter`) send the grammar of
their own text (`Adapter.grammar`, compiled once per signature and options); JSON formats
(`JSONAdapter`, `CompactAdapter`) send the outputs' JSON schema, which the server turns
into its own grammar. A parameter the caller set (``response_format``, ``grammar``...) is
never replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from structio.exceptions import ConfigurationError
from structio.lm.servers import SERVERS, STRUCTURE_KEYS, LocalServer

if TYPE_CHECKING:
    from structio.adapters.base import Adapter
    from structio.adapters.hooks import ModelCapabilities
    from structio.signatures.signature import Signature

__all__ = ["choice", "local_server", "set_constrain", "with_grammar", "with_schema"]


def set_constrain(adapter: object, constrain: bool | None) -> None:
    """Keep an adapter's ``constrain`` option, only when chosen (a default saves as before).

    Raises:
        ValueError: ``constrain`` is not a bool or ``None``.
    """
    if constrain is not None and not isinstance(constrain, bool):
        raise ValueError(f"constrain must be True, False or None, not {constrain!r}")
    if constrain is not None:
        adapter.constrain = constrain  # type: ignore[attr-defined]


def local_server(lm: ModelCapabilities) -> LocalServer | None:
    """The local server the model runs on, from its profile; ``None`` for a hosted model."""
    name = lm.profile.server
    return SERVERS.get(name) if name is not None else None


def choice(adapter: Adapter) -> bool | None:
    """The adapter's ``constrain`` option: ``True``, ``False``, or ``None`` (its default)."""
    value: bool | None = getattr(adapter, "constrain", None)
    return value


def _caller_chose(params: Mapping[str, Any]) -> bool:
    return any(key in params for key in STRUCTURE_KEYS)


def with_grammar(
    adapter: Adapter,
    signature: type[Signature],
    params: dict[str, Any],
    lm: ModelCapabilities,
) -> dict[str, Any]:
    """``params`` with the grammar of the adapter's text, when the adapter constrains.

    Raises:
        ConfigurationError: ``constrain=True`` and the model's server takes no grammar (or
            the model is a hosted one), or the adapter has no grammar for the signature.
    """
    wanted = choice(adapter)
    if wanted is False or _caller_chose(params):
        return params
    server = local_server(lm)
    name = type(adapter).__name__
    if server is None or server.grammar is None:
        if wanted:
            where = server.title if server is not None else "a hosted model"
            raise ConfigurationError(
                f"{name}(constrain=True): {where} takes no grammar. Constrained decoding "
                "needs a local server that takes one (LM(..., server='llamacpp' | 'vllm' | "
                "'sglang')); use JSONAdapter for a JSON schema, or constrain=None"
            )
        return params
    if wanted is None and not type(adapter).constrain_default:
        return params
    grammar = adapter.grammar(signature, think=lm.profile.reasoning)
    if grammar is None:
        if wanted:
            raise ConfigurationError(
                f"{name}(constrain=True): this adapter has no grammar for {signature.__name__}"
            )
        return params
    text = grammar.gbnf() if server.grammar == "gbnf" else grammar.lark()
    params.update(server.grammar_params(text))
    return params


def with_schema(
    adapter: Adapter,
    signature: type[Signature],
    params: dict[str, Any],
    lm: ModelCapabilities,
    schema: Mapping[str, Any] | None,
    name: str,
) -> dict[str, Any] | None:
    """``params`` as a local server constrains a JSON answer; ``None`` for a hosted model.

    Constrained: the outputs' schema (``schema``, in the plain JSON Schema dialect) in the
    server's own form. Else nothing, not even JSON object mode: on the real model
    (`benchmarks/real_model.py`) llama.cpp's generic JSON grammar cost the server about
    twice the CPU of free decoding and changed no answer. A hosted model is the adapter's
    to decide.

    Raises:
        ConfigurationError: ``constrain=True`` and the outputs have no JSON schema.
    """
    server = local_server(lm)
    if server is None or _caller_chose(params):
        return None if server is None else params
    wanted = choice(adapter)
    if wanted is None:
        wanted = type(adapter).constrain_default
    if wanted and schema is not None:
        params.update(server.schema_params(name, schema))
        return params
    if wanted and choice(adapter):
        raise ConfigurationError(
            f"{type(adapter).__name__}(constrain=True): the outputs of {signature.__name__} "
            "have no JSON schema a server can take"
        )
    return params
