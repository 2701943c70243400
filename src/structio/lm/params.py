"""Request parameters checked before they are sent: typos refused, unsupported ones logged.

A keyword of `LM` or of a call that is no client setting is sent as a request field, as
providers keep adding parameters. A misspelling of a parameter that exists
(``temprature=0``, ``max_token=``, ``top-p=``) would be sent too: ignored by a lenient
local server, a 400 from OpenAI. `checked_split` refuses a name that is *close* to a known
one (and not itself known) before any request; a name that resembles none is sent as it
was. `warn_unsupported` logs, once per LM and name, a parameter the model's profile says
its API does not take.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from structio._util.log import logger
from structio.exceptions import ConfigurationError
from structio.lm.client import CLIENT_SETTINGS, split_settings
from structio.lm.models import model_entry

__all__ = [
    "APIS",
    "KNOWN_PARAMS",
    "choose_api",
    "checked_split",
    "close_name",
    "suggestion",
    "take_rollout_id",
    "warn_unsupported",
]

#: The request parameters structio knows of, besides the client settings
#: (`structio.lm.client.is_client_setting`): a keyword close to one of these (and not one
#: itself) is taken for a typo.
KNOWN_PARAMS = frozenset(
    {
        # OpenAI chat completions
        "messages", "model", "temperature", "top_p", "n", "stream", "stream_options", "stop",
        "max_tokens", "max_completion_tokens", "presence_penalty", "frequency_penalty",
        "logit_bias", "logprobs", "top_logprobs", "user", "seed", "response_format", "tools",
        "tool_choice", "parallel_tool_calls", "functions", "function_call", "reasoning_effort",
        "store", "metadata", "service_tier", "modalities", "audio", "prediction",
        "web_search_options", "verbosity", "prompt_cache_key", "safety_identifier",
        "prompt_cache_retention",
        # OpenAI Responses
        "input", "instructions", "max_output_tokens", "previous_response_id", "reasoning",
        "text", "truncation", "include", "background", "conversation", "max_tool_calls",
        "prompt",
        # Anthropic (as structio translates it) and Gemini
        "system", "stop_sequences", "top_k", "thinking", "output_config", "container",
        "inference_geo", "speed", "cache_control", "diagnostics", "safety_settings",
        "cached_content", "generation_config", "response_mime_type", "response_schema",
        "candidate_count",
        # structio's and litellm's per-call settings (never sent)
        "cache", "timeout", "num_retries", "max_retries", "caching", "fallbacks",
        "allowed_openai_params", "additional_drop_params", "deployment_id",
        "context_window_fallback_dict",
        # `LM`'s own keywords, misspelled they would land among the parameters
        "backoff", "max_backoff", "context_window", "transport", "profile", "model_type",
        # DSPy's `dspy.LM` keywords, which DSPy code passes (`callbacks` is no `fallbacks`)
        "callbacks", "rollout_id", "finetuning_model", "launch_kwargs", "train_kwargs",
        "use_developer_role",
        # local servers: vLLM, SGLang, llama.cpp, Ollama, LM Studio, TGI
        "min_p", "repetition_penalty", "length_penalty", "best_of", "use_beam_search",
        "min_tokens", "stop_token_ids", "ignore_eos", "skip_special_tokens",
        "spaces_between_special_tokens", "include_stop_str_in_output", "structured_outputs",
        "guided_json", "guided_regex", "guided_choice", "guided_grammar",
        "guided_decoding_backend", "guided_whitespace_pattern", "chat_template",
        "chat_template_kwargs", "add_generation_prompt", "echo", "grammar", "ebnf", "regex",
        "json_schema", "n_predict", "typical_p", "repeat_penalty", "repeat_last_n",
        "mirostat", "mirostat_tau", "mirostat_eta", "n_probs", "cache_prompt", "id_slot",
        "samplers", "dynatemp_range", "dynatemp_exponent", "options", "format",
        "keep_alive", "num_ctx", "num_predict", "ttl", "draft_model", "prompt_logprobs",
        "truncate_prompt_tokens", "allowed_token_ids", "bad_words", "priority", "request_id",
        "return_tokens_as_token_ids", "enable_thinking",
        # hosted providers' own: OpenRouter, Groq, xAI, Fireworks
        "top_a", "transforms", "models", "route", "provider", "usage", "reasoning_format",
        "include_reasoning", "search_settings", "search_parameters",
        "context_length_exceeded_behavior",
    }
)  # fmt: skip

# How alike a keyword must be to a known name to be taken for its misspelling (difflib's
# ratio): `temprature`/`temperature` is 0.95, `top_k`/`top_p` 0.8 (both known, never asked).
_CUTOFF = 0.8


# Every name a keyword may rightly have: a client setting's too (`api_bse` is a typo). A
# name only *shaped* like a secret is no exception: `max_token` is `max_tokens` misspelt,
# though `is_client_setting` would keep it, unsent, as a credential.
_NAMES = KNOWN_PARAMS | CLIENT_SETTINGS


@functools.lru_cache(maxsize=4096)
def close_name(name: str) -> str | None:
    """The known parameter ``name`` misspells, or ``None`` (known itself, or close to none).

    Cached per name: a call's keywords are checked on every request.
    """
    if name in _NAMES:
        return None
    # `top-p` and `Temperature` are typos too: compared in Python's spelling.
    spelled = name.replace("-", "_").lower()
    if spelled in _NAMES:
        return spelled
    import difflib  # here, not at `import structio`: only a name not known pays for it

    close = difflib.get_close_matches(spelled, _NAMES, n=1, cutoff=_CUTOFF)
    return close[0] if close else None


def suggestion(name: str, known: Any) -> str:
    """``"; did you mean `x`?"`` for the name of ``known`` closest to ``name``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(name, [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def checked_split(
    settings: Mapping[str, Any], model: str, *, call: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``settings`` sorted into ``(client settings, request parameters)``, typos refused.

    Args:
        settings: The keywords of `LM` (or of a call, with ``call=True``).
        model: The LM's model, for the message.
        call: Whether the keywords are a call's (the message says where they were given).

    Raises:
        ConfigurationError: A keyword is a close misspelling of a known parameter; nothing
            was sent. To send such a name anyway, pass it in ``extra_body={...}``.
    """
    for name in settings:
        meant = close_name(name)
        if meant is not None:
            where = (
                f"lm(messages, {name}=...) on {model!r}" if call else f"LM({model!r}, {name}=...)"
            )
            raise ConfigurationError(
                f"{where}: unknown parameter `{name}`; did you mean `{meant}`? Nothing was "
                f"sent. To send `{name}` as it is, pass extra_body={{{name!r}: ...}}"
            )
    return split_settings(settings)


# What a profile must support for a parameter to be taken: (parameter, the profile's flag).
_NEEDS = (("logprobs", "logprobs"), ("top_logprobs", "logprobs"), ("reasoning_effort", "reasoning"))


def warn_unsupported(lm: Any, params: Mapping[str, Any]) -> None:
    """Log, once per LM and name, a parameter the model's profile says its API does not take.

    Only where the profile knows: ``profile=`` named the flag, or litellm's model map knows
    the model (and no local server serves it, whose profile is for the user to say). The
    request is sent all the same: the provider has the last word.
    """
    for name, flag in _NEEDS:
        if not params.get(name) or name in lm.__dict__.get("_unsupported", ()):
            continue
        profile = lm.profile
        if getattr(profile, flag) or not _knows(lm, profile, flag):
            continue
        lm.__dict__.setdefault("_unsupported", set()).add(name)
        logger().warning(
            "%s: %s=%r is sent, but the model's profile says it takes no %s (a 400 from "
            "some providers); if it does, say so with LM(..., profile={%r: True})",
            lm.model, name, params[name], flag, flag,
        )  # fmt: skip
    _warn_sampling(lm, params)


def take_rollout_id(lm: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``rollout_id`` taken out of ``params`` (never sent), as what the cache key adds.

    DSPy's ``rollout_id`` tells apart otherwise identical requests in the response cache:
    another id is another entry, the same id the same entry. It is the LM's, not the
    provider's, so it leaves the request here. ``None`` is no id, as in DSPy. At
    ``temperature=0`` the samples it keeps apart are alike: logged once per LM, as DSPy
    warns.

    Returns:
        ``{"rollout_id": id}`` for the cache key, or ``{}`` when the call has none.
    """
    rollout = params.pop("rollout_id", None)
    if rollout is None:
        return {}
    if params.get("temperature") == 0 and not lm.__dict__.get("_warned_rollout"):
        lm.__dict__["_warned_rollout"] = True
        logger().warning(
            "%s: rollout_id=%r has no effect at temperature=0 (the answers it keeps apart "
            "are alike); set temperature>0 to sample anew", lm.model, rollout,
        )  # fmt: skip
    return {"rollout_id": rollout}


# Sampling settings and the value a model without `sampling` takes (its default).
_SAMPLING = (("temperature", 1), ("top_p", 1))


def _warn_sampling(lm: Any, params: Mapping[str, Any]) -> None:
    """Log, once per LM and name, a sampling setting a reasoning model does not take."""
    for name, default in _SAMPLING:
        value = params.get(name)
        if value is None or value == default or name in lm.__dict__.get("_unsupported", ()):
            continue
        profile = lm.profile
        if profile.sampling or not _knows(lm, profile, "sampling"):
            continue
        lm.__dict__.setdefault("_unsupported", set()).add(name)
        logger().warning(
            "%s: %s=%r is sent, but the model is a reasoning model that takes only %s=%r "
            "(OpenAI answers a 400); leave %s out, or say the model takes it with "
            "LM(..., profile={'sampling': True})",
            lm.model, name, value, name, default, name,
        )  # fmt: skip


def _knows(lm: Any, profile: Any, flag: str) -> bool:
    """Whether ``profile``'s ``flag`` is knowledge rather than the default of an unknown model."""
    override = lm.__dict__.get("_profile_override")
    if isinstance(override, Mapping):
        if flag in override:
            return True
    elif override is not None:
        return True  # a whole profile given: the user's word on every flag
    return profile.server is None and model_entry(lm.model) is not None


#: The APIs ``LM(..., api=)`` names (``model_type=`` in DSPy's spelling).
APIS = ("chat", "responses")


def choose_api(model: str, settings: dict[str, Any]) -> None:
    """Turn DSPy's ``model_type`` into the client setting ``api``; refuse an unknown one."""
    model_type = settings.pop("model_type", None)
    api = settings.get("api")
    if model_type is not None:
        if api is not None and api != model_type:
            raise ConfigurationError(
                f"LM({model!r}, model_type={model_type!r}, api={api!r}): two names for the "
                "API disagree; pass one (api= is structio's spelling, model_type= DSPy's)"
            )
        api = model_type
    if api is None:
        return
    if api not in APIS:
        raise ConfigurationError(
            f"LM({model!r}, api={api!r}): the API is 'chat' (chat completions, the default) "
            "or 'responses' (OpenAI's Responses API); text completions are not supported"
        )
    if api == "chat":
        settings.pop("api", None)  # the default: nothing to tell a transport
    else:
        settings["api"] = api
