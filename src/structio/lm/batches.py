"""Provider batch APIs: upload a file of requests, create a batch, poll it, read its output.

OpenAI and OpenAI-compatible servers that implement ``/v1/files`` and ``/v1/batches`` are
reached over the direct transport's pooled httpx client (the LM's ``api_base`` and
``api_key``); Anthropic's Message Batches over the same client, with the requests the
Anthropic Messages API writes (`structio.lm._batch_anthropic`); other providers through
litellm's files and batches functions (``litellm.create_file``, ``create_batch``,
``retrieve_batch``, ``file_content``), for the providers litellm can create batches for.
The calling side (`structio.batch`) decides what goes in a batch; this module only moves it
to and from the provider, and prices it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from structio.exceptions import ConfigurationError
from structio.lm import _batch_anthropic, _exchange, _http
from structio.lm._batch_base import (
    BATCH_ENDPOINT,
    COMPLETION_WINDOW,
    OPENAI_LIMITS,
    TERMINAL,
    BatchAPI,
    BatchInfo,
    BatchLimits,
    BatchPrice,
    HTTPBatches,
    LineResult,
    batch_price,
    identifier,
)
from structio.lm.base import BaseLM
from structio.lm.client import is_client_setting
from structio.lm.lm import LM

if TYPE_CHECKING:
    from structio.lm.cache import ResponseCache

__all__ = [
    "BATCH_ENDPOINT",
    "COMPLETION_WINDOW",
    "DIRECT_BATCH_PROVIDERS",
    "OPENAI_LIMITS",
    "TERMINAL",
    "BatchAPI",
    "BatchInfo",
    "BatchLimits",
    "BatchPrice",
    "DirectBatches",
    "HTTPBatches",
    "LineResult",
    "LiteLLMBatches",
    "batch_api",
    "batch_price",
    "cache_entry",
]

# litellm 1.106's `create_batch` serves these providers (Anthropic's message batches can be
# retrieved through it, not created: structio creates them itself).
_LITELLM_BATCH_PROVIDERS = frozenset(
    {"openai", "azure", "vertex_ai", "bedrock", "hosted_vllm", "mistral", "xai"}
)
#: The providers whose batches structio reaches itself, without litellm.
DIRECT_BATCH_PROVIDERS = ("openai (and OpenAI-compatible servers)", "anthropic")


class DirectBatches(HTTPBatches):
    """OpenAI's batch API over httpx: OpenAI and compatible servers (``api_base=``)."""

    def __init__(self, lm: LM) -> None:
        super().__init__(lm)
        self._point = _http.endpoint(lm.model, lm.client)
        if self._point.provider == "azure":
            raise ConfigurationError(
                f"{lm.model}: Azure batches go through litellm; pass transport='litellm' to "
                "LM (or --transport litellm) to submit a batch"
            )

    def body(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        """The body the direct transport sends for an online call (never streamed)."""
        sent = {k: v for k, v in params.items() if k not in ("stream", "stream_options")}
        return _http.request_body(self._point, messages, sent, self.lm.client)

    def upload(self, data: bytes, filename: str) -> str:
        """``POST /files`` (multipart, purpose ``batch``); the file id."""
        found = self._json(
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": (filename, data, "application/jsonl")},
        )
        return identifier(found, "file", self)

    def create(self, file_id: str, metadata: Mapping[str, str], data: bytes) -> BatchInfo:
        """``POST /batches`` for chat completions, 24h window; never retried (twice paid)."""
        body = {
            "input_file_id": file_id,
            "endpoint": BATCH_ENDPOINT,
            "completion_window": COMPLETION_WINDOW,
            "metadata": dict(metadata),
        }
        found = self._json("POST", "/batches", content=_exchange._encode(body))
        identifier(found, "batch", self)
        return BatchInfo.from_data(found)

    def retrieve(self, batch_id: str) -> BatchInfo:
        """``GET /batches/{id}``, tried again on a transient failure."""
        found = self._again(self._json, "GET", f"/batches/{batch_id}")
        return BatchInfo.from_data(found)

    def content(self, file_id: str) -> bytes:
        """``GET /files/{id}/content``, tried again on a transient failure."""
        response = self._again(self._send, "GET", f"/files/{file_id}/content")
        return bytes(response.content)

    def cancel(self, batch_id: str) -> BatchInfo:
        """``POST /batches/{id}/cancel``."""
        return BatchInfo.from_data(self._json("POST", f"/batches/{batch_id}/cancel"))


class LiteLLMBatches(BatchAPI):
    """The batch API of another provider, through litellm's files and batches functions.

    Not exercised by structio's tests (no provider is reachable from them): what litellm
    supports is what works.
    """

    def __init__(self, lm: LM) -> None:
        super().__init__(lm)
        from structio.lm import _litellm

        provider = _litellm.provider_of(lm.model) or lm.client.get("custom_llm_provider")
        if provider not in _LITELLM_BATCH_PROVIDERS:
            raise ConfigurationError(
                f"{lm.model}: the provider {provider or 'unknown'!r} has no batch API "
                f"structio can reach; batches work for {', '.join(DIRECT_BATCH_PROVIDERS)}, "
                f"and through litellm for {', '.join(sorted(_LITELLM_BATCH_PROVIDERS))} "
                "(run it online instead: structio run without --batch)"
            )
        self._provider = str(provider)
        self._litellm = _litellm

    @property
    def provider(self) -> str:
        """The provider litellm routes the model to."""
        return self._provider

    def _settings(self) -> dict[str, Any]:
        names = ("api_base", "api_key", "api_version", "organization", "extra_headers")
        settings = {k: self.lm.client[k] for k in names if self.lm.client.get(k)}
        return {"custom_llm_provider": self._provider, **settings}

    def _call(self, name: str, **kwargs: Any) -> Any:
        module = self._litellm.get_litellm()
        try:
            return getattr(module, name)(**kwargs, **self._settings())
        except Exception as exc:
            error = self._litellm.translate_error(exc, self.model, 1)
            if error is None:
                raise
            raise error from exc

    def body(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        """The OpenAI-style body litellm turns into the provider's own."""
        name = self.model.split("/", 1)[1] if "/" in self.model else self.model
        skipped = {"stream", "stream_options", "timeout", "num_retries", "max_retries"}
        body = {k: v for k, v in params.items() if k not in skipped and not is_client_setting(k)}
        return {"model": name, "messages": messages, **body}

    def upload(self, data: bytes, filename: str) -> str:
        """``litellm.create_file`` (purpose ``batch``); the file id."""
        found = _plain(self._call("create_file", file=(filename, data), purpose="batch"))
        return identifier(found, "file", self)

    def create(self, file_id: str, metadata: Mapping[str, str], data: bytes) -> BatchInfo:
        """``litellm.create_batch`` for chat completions, 24h window (never retried)."""
        found = self._call(
            "create_batch",
            completion_window=COMPLETION_WINDOW,
            endpoint=BATCH_ENDPOINT,
            input_file_id=file_id,
            metadata=dict(metadata),
        )
        info = BatchInfo.from_data(_plain(found))
        identifier({"id": info.id}, "batch", self)
        return info

    def retrieve(self, batch_id: str) -> BatchInfo:
        """``litellm.retrieve_batch``, tried again on a transient failure."""
        found = self._again(self._call, "retrieve_batch", batch_id=batch_id)
        return BatchInfo.from_data(_plain(found))

    def content(self, file_id: str) -> bytes:
        """``litellm.file_content``, tried again on a transient failure."""
        found = self._again(self._call, "file_content", file_id=file_id)
        data = getattr(found, "content", found)
        return data if isinstance(data, bytes) else str(getattr(found, "text", data)).encode()

    def cancel(self, batch_id: str) -> BatchInfo:
        """``litellm.cancel_batch``."""
        return BatchInfo.from_data(_plain(self._call("cancel_batch", batch_id=batch_id)))


def _plain(value: Any) -> dict[str, Any]:
    """A litellm response object as a plain dict."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    data = dump() if callable(dump) else vars(value)
    return dict(data) if isinstance(data, Mapping) else {}


def batch_api(lm: BaseLM) -> BatchAPI:
    """The batch API that serves ``lm``.

    OpenAI's over httpx for a model the direct transport serves (OpenAI and compatible
    servers); Anthropic's Message Batches for an Anthropic model, whichever transport its
    online calls take (litellm cannot create them); else litellm's.

    Raises:
        ConfigurationError: ``lm`` is not an `LM` (a `FakeLM` or a custom model has no
            provider batch API), or its provider has none structio can reach.
    """
    if not isinstance(lm, LM):
        raise ConfigurationError(
            f"a provider batch needs an LM of a provider with a batch API, not "
            f"{type(lm).__name__}; call the model online instead (Predict.batch)"
        )
    if lm.resolved_transport == "direct":
        return DirectBatches(lm)
    if _batch_anthropic.serves(lm):
        return _batch_anthropic.AnthropicBatches(lm)
    return LiteLLMBatches(lm)


def cache_entry(
    lm: BaseLM, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]
) -> tuple[ResponseCache | None, str]:
    """The response cache an online call of ``lm`` would use, and its key for the request.

    ``(None, "")`` when the call would not use one (``cache=False``, or not an `LM`).
    """
    if not isinstance(lm, LM):
        return None, ""
    plain = [dict(message) for message in messages]  # as `BaseLM.__call__` passes them
    request = lm._prepare(plain, params)
    return request.cache, request.key
