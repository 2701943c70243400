r"""Local model servers: what each takes to constrain decoding, and how it is asked.

A local server (vLLM, SGLang, llama.cpp or llama-cpp-python, Ollama, LM Studio) speaks
OpenAI's chat completions, but each asks for structured output in its own words: a JSON
schema as ``response_format`` (OpenAI's ``json_schema`` form, or llama.cpp's
``{"type": "json_object", "schema": ...}``), a grammar as ``grammar`` (llama.cpp's GBNF),
``structured_outputs={"grammar": ...}`` (vLLM) or ``ebnf`` (SGLang). A `LocalServer`
holds that as data; `structio.LM` picks one from the model's prefix (``hosted_vllm/``,
``ollama/``, ``ollama_chat/``, ``lm_studio/``) or from ``LM(..., server="llamacpp")``, and
the model's `ModelProfile` names it (``profile.server``), so adapters send what that
server understands, derived from the signature. The user never writes a schema or grammar.

Example:
    >>> SERVERS["llamacpp"].grammar_params("root ::= \\"yes\\"")
    {'grammar': 'root ::= "yes"'}
    >>> server_for("hosted_vllm/Qwen/Qwen2.5-7B-Instruct").name
    'vllm'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from structio.exceptions import (
    BadRequestError,
    ConfigurationError,
    LMError,
    ServerError,
    StructuredOutputRefusedError,
)
from structio.lm.profile import ModelProfile

__all__ = [
    "GRAMMAR_KEYS",
    "SERVERS",
    "STRUCTURE_KEYS",
    "LocalServer",
    "check_server",
    "refused_structure",
    "served_by",
    "server_for",
]

GrammarSyntax = Literal["gbnf", "lark"]


@dataclass(frozen=True)
class LocalServer:
    """A local server's way of asking for structured output: one frozen value per server.

    Attributes:
        name: The name ``LM(..., server=)`` takes (``"vllm"``, ``"llamacpp"``...).
        title: The server as people call it, for messages.
        prefixes: Model prefixes that mean this server (litellm's: ``hosted_vllm``...).
        default_base: Where it listens by default, when a prefix names it and no
            ``api_base`` is given (``None``: an ``api_base`` is required).
        grammar: The grammar syntax it takes (``"gbnf"``: llama.cpp's, which xgrammar, the
            engine behind vLLM's and SGLang's grammars, reads too), ``None`` when it takes
            no grammar.
        schema_form: How a JSON schema is sent: ``"openai"`` (``response_format`` of type
            ``json_schema``, not strict) or ``"llamacpp"`` (``response_format`` of type
            ``json_object`` with the schema beside it: llama-cpp-python refuses the first).
        json_object: Whether it takes ``response_format={"type": "json_object"}`` (any
            JSON, no schema).
    """

    name: str
    title: str
    prefixes: tuple[str, ...]
    default_base: str | None
    grammar: GrammarSyntax | None
    schema_form: Literal["openai", "llamacpp"]
    json_object: bool = True

    def grammar_params(self, text: str) -> dict[str, Any]:
        """The request parameters that constrain the answer to the grammar ``text``.

        Raises:
            ConfigurationError: This server takes no grammar.
        """
        if self.name == "vllm":
            return {"structured_outputs": {"grammar": text}}
        if self.name == "sglang":
            return {"ebnf": text}
        if self.grammar is None:
            raise ConfigurationError(
                f"{self.title} takes no grammar; it is constrained by a JSON schema only "
                "(JSONAdapter, CompactAdapter), or not at all (constrain=False)"
            )
        return {"grammar": text}

    def schema_params(self, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The request parameters that constrain the answer to the JSON ``schema``."""
        if self.schema_form == "llamacpp":
            return {"response_format": {"type": "json_object", "schema": dict(schema)}}
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": False, "schema": dict(schema)},
            }
        }


#: The local servers structio knows, by the name ``LM(..., server=)`` takes.
SERVERS: dict[str, LocalServer] = {
    server.name: server
    for server in (
        # https://docs.vllm.ai/en/latest/features/structured_outputs/ (v0.12 and later:
        # `structured_outputs`; the `guided_*` fields are gone).
        LocalServer("vllm", "vLLM", ("hosted_vllm",), None, "gbnf", "openai"),
        # https://docs.sglang.ai/advanced_features/structured_outputs.html: `ebnf`, and
        # OpenAI's json_schema response_format.
        LocalServer("sglang", "SGLang", (), None, "gbnf", "openai"),
        # llama.cpp's llama-server and llama-cpp-python's server: `grammar` (GBNF), and
        # {"type": "json_object", "schema": ...} (llama-cpp-python refuses json_schema).
        LocalServer("llamacpp", "llama.cpp", (), None, "gbnf", "llamacpp"),
        # Ollama's OpenAI-compatible API (/v1): json_schema response_format; no grammar.
        LocalServer(
            "ollama",
            "Ollama",
            ("ollama", "ollama_chat"),
            "http://localhost:11434/v1",
            None,
            "openai",
        ),
        # LM Studio: json_schema response_format only (no json_object, no grammar).
        LocalServer(
            "lmstudio",
            "LM Studio",
            ("lm_studio",),
            "http://localhost:1234/v1",
            None,
            "openai",
            json_object=False,
        ),
    )
}

_BY_PREFIX = {prefix: server for server in SERVERS.values() for prefix in server.prefixes}


def check_server(name: object) -> LocalServer:
    """The server ``LM(..., server=name)`` names.

    Raises:
        ConfigurationError: ``name`` is not a known server's name.
    """
    found = SERVERS.get(name) if isinstance(name, str) else None
    if found is None:
        raise ConfigurationError(
            f"server={name!r} is not a local server structio knows; use one of "
            f"{', '.join(repr(n) for n in SERVERS)}, or leave server= out for a hosted model"
        )
    return found


def server_for(model: str, server: object = None) -> LocalServer | None:
    """The local server of ``model``: ``server=`` if given, else the model's prefix's.

    Raises:
        ConfigurationError: ``server`` is given and is not a known server's name.
    """
    if server is not None:
        return check_server(server)
    prefix = model.split("/", 1)[0] if "/" in model else ""
    return _BY_PREFIX.get(prefix)


def served_by(profile: ModelProfile, server: LocalServer | None) -> ModelProfile:
    """``profile`` as ``server`` serves the model: a plain JSON schema, and JSON mode if it has it.

    The map knows nothing of a model served locally; the server decides what is taken.
    """
    if server is None:
        return profile
    return profile.replace(
        server=server.name,
        json_schema=True,
        schema_dialect="json-schema",
        json_object=server.json_object,
        # vLLM and SGLang return OpenAI's logprobs; llama-cpp-python the legacy completions
        # shape (read as OpenAI's: `lm._stream.logprobs_of`); Ollama and LM Studio none.
        logprobs=server.name in ("vllm", "sglang", "llamacpp"),
    )


#: The request parameters that hold a local server's answer to a grammar.
GRAMMAR_KEYS = ("grammar", "structured_outputs", "ebnf", "guided_grammar")

# The request parameters that ask a server for structured output.
STRUCTURE_KEYS = (
    "response_format",
    "grammar",
    "structured_outputs",
    "ebnf",
    "json_schema",
    "regex",
    "guided_json",
    "guided_grammar",
    "guided_regex",
    "guided_choice",
)


def refused_structure(error: LMError, params: Mapping[str, Any]) -> LMError:
    """``error`` as `StructuredOutputRefusedError` when the server refused a structure parameter.

    A 400, 422 or 500 whose message names a structured-output parameter the request
    carried (llama-cpp-python answers a ``json_schema`` response format, or a grammar it
    cannot parse, with a 500 naming it): retrying would only fail again. Any other error
    is returned as it is.
    """
    if not isinstance(error, (BadRequestError, ServerError)) or isinstance(
        error, StructuredOutputRefusedError
    ):
        return error
    if error.status_code not in (400, 422, 500):
        return error
    sent = [key for key in STRUCTURE_KEYS if key in params]
    if not sent:
        return error
    text = str(error)
    named = [key for key in sent if key in text]
    if not named and "grammar" not in text:
        return error
    refused = StructuredOutputRefusedError(
        f"{text}\n  the server refused the structured-output parameter it was sent "
        f"({', '.join(named or sent)}): this is not retried. Tell structio which server "
        f"this is (LM(..., server=...): one of {', '.join(SERVERS)}), or send no "
        "constraint (the adapter's constrain=False).",
        model=error.model,
        provider=error.provider,
        status_code=error.status_code,
        attempts=error.attempts,
    )
    refused.__cause__ = error.__cause__
    return refused
