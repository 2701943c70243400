"""Provider batch APIs: upload a file of requests, create a batch, poll it, read its output.

OpenAI and OpenAI-compatible servers that implement ``/v1/files`` and ``/v1/batches`` are
reached over the direct transport's pooled httpx client (the LM's ``api_base`` and
``api_key``); other providers through litellm's files and batches functions
(``litellm.create_file``, ``create_batch``, ``retrieve_batch``, ``file_content``), for the
providers litellm can create batches for. The calling side (`structio.batch`) decides what
goes in a batch; this module only moves it to and from the provider, and prices it.
"""

from __future__ import annotations

import abc
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from structio.exceptions import (
    ConfigurationError,
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm import _exchange, _http, _pool
from structio.lm._errors import lm_error
from structio.lm.base import BaseLM
from structio.lm.client import is_client_setting
from structio.lm.lm import LM
from structio.lm.models import cost_of, model_entry
from structio.lm.types import LMResponse, Usage

if TYPE_CHECKING:
    from structio.lm.cache import ResponseCache

__all__ = [
    "BATCH_ENDPOINT",
    "COMPLETION_WINDOW",
    "OPENAI_LIMITS",
    "TERMINAL",
    "BatchAPI",
    "BatchInfo",
    "BatchLimits",
    "BatchPrice",
    "DirectBatches",
    "LineResult",
    "LiteLLMBatches",
    "batch_api",
    "batch_price",
    "cache_entry",
]

#: The endpoint every request of a batch goes to.
BATCH_ENDPOINT = "/v1/chat/completions"
#: How long the provider has to run a batch.
COMPLETION_WINDOW = "24h"
#: The states after which a batch changes no more.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})

# litellm 1.106's `create_batch` serves these providers (Anthropic's message batches can be
# retrieved through it, not created).
_LITELLM_BATCH_PROVIDERS = frozenset(
    {"openai", "azure", "vertex_ai", "bedrock", "hosted_vllm", "mistral", "xai"}
)
# Failures of a status poll or a download that a second try may not see.
_TRANSIENT = (RateLimitError, LMTimeoutError, LMConnectionError, ServerError)


class BatchLimits(NamedTuple):
    """How much one batch may hold; more rows are split into several batches.

    Attributes:
        max_requests: Requests per batch (OpenAI: 50,000).
        max_bytes: Bytes of the uploaded request file (OpenAI: 200 MB).
    """

    max_requests: int = 50_000
    max_bytes: int = 200 * 1024 * 1024


#: OpenAI's per-batch limits.
OPENAI_LIMITS = BatchLimits()


@dataclass(frozen=True)
class BatchInfo:
    """What the provider says of one batch.

    Attributes:
        id: The batch's id.
        status: ``validating``, ``in_progress``, ``finalizing``, ``completed``, ``failed``,
            ``expired``, ``cancelling`` or ``cancelled``.
        total: Requests in the batch.
        completed: Requests answered so far.
        failed: Requests that failed so far.
        output_file_id: The file of answers, once there is one.
        error_file_id: The file of failed requests, once there is one.
        errors: The batch's own errors (why it failed validation), as text.
    """

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        """Whether the batch has ended (completed, failed, expired or cancelled)."""
        return self.status in TERMINAL

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BatchInfo:
        """A batch object of OpenAI's API (as JSON data) read into a `BatchInfo`."""
        counts = data.get("request_counts") or {}
        errors = data.get("errors") or {}
        listed = errors.get("data") if isinstance(errors, Mapping) else None
        messages = tuple(
            str(item.get("message") or item.get("code") or item)
            for item in listed or ()
            if isinstance(item, Mapping)
        )
        return cls(
            id=str(data.get("id") or ""),
            status=str(data.get("status") or "unknown"),
            total=int(counts.get("total") or 0),
            completed=int(counts.get("completed") or 0),
            failed=int(counts.get("failed") or 0),
            output_file_id=data.get("output_file_id") or None,
            error_file_id=data.get("error_file_id") or None,
            errors=messages,
        )


@dataclass(frozen=True)
class LineResult:
    """One line of a batch's output or error file: the row's response, or why it failed."""

    custom_id: str
    response: LMResponse | None = None
    error: LMError | None = field(default=None)


class BatchAPI(abc.ABC):
    """One provider's batch API, for one model and its settings."""

    def __init__(self, lm: LM) -> None:
        self.lm = lm
        self.model = lm.model

    @property
    @abc.abstractmethod
    def provider(self) -> str:
        """The provider's name, as error messages give it."""

    @abc.abstractmethod
    def body(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON body of one request (``params``: the LM's and the call's, merged)."""

    @abc.abstractmethod
    def upload(self, data: bytes, filename: str) -> str:
        """Upload a JSON Lines file of requests (purpose ``batch``); its file id."""

    @abc.abstractmethod
    def create(self, file_id: str, metadata: Mapping[str, str]) -> BatchInfo:
        """Create a batch from an uploaded file."""

    @abc.abstractmethod
    def retrieve(self, batch_id: str) -> BatchInfo:
        """The batch as the provider sees it now."""

    @abc.abstractmethod
    def content(self, file_id: str) -> bytes:
        """The bytes of a file (a batch's output or error file)."""

    def request_line(
        self, custom_id: str, messages: list[dict[str, Any]], params: Mapping[str, Any]
    ) -> bytes:
        """One line of the request file: the request ``custom_id`` stands for."""
        line = {
            "custom_id": custom_id,
            "method": "POST",
            "url": BATCH_ENDPOINT,
            "body": self.body(messages, params),
        }
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    def read_line(self, data: Mapping[str, Any]) -> LineResult:
        """One line of an output or error file: the response, or the row's error."""
        custom_id = str(data.get("custom_id"))
        response = data.get("response")
        error = data.get("error")
        if isinstance(response, Mapping):
            status = int(response.get("status_code") or 0)
            body = response.get("body")
            if status == 200 and isinstance(body, Mapping):
                try:
                    return LineResult(custom_id, response=self._response(body))
                except LMError as exc:
                    return LineResult(custom_id, error=exc)
            if status:
                text = json.dumps(body) if isinstance(body, (Mapping, list)) else str(body)
                failure = _http.HTTPStatusError(status, text, {})
                translated = _http.translate_error(failure, self.model, 1)
                return LineResult(custom_id, error=translated or ServerError(text))
        if isinstance(error, Mapping):
            code = error.get("code")
            message = str(error.get("message") or code or "no reason given")
            detail = f"{message} ({code})" if code and code not in message else message
            return LineResult(custom_id, error=self._error(ServerError, detail))
        return LineResult(
            custom_id, error=self._error(ServerError, f"a batch result line with no answer: {data}")
        )

    def _response(self, body: Mapping[str, Any]) -> LMResponse:
        response = _http.to_response(body, self.model, self.provider, 0.0, 1)
        return LMResponse(
            completions=response.completions,
            model=response.model,
            usage=response.usage,
            cost=batch_price(self.model).cost(response.usage),
        )

    def _error(self, cls: type[LMError], detail: str, *, what: str | None = None) -> LMError:
        return lm_error(
            cls, model=self.model, provider=self.provider, attempts=1, detail=detail, what=what
        )

    def _again(self, action: Any, *args: Any, **kwargs: Any) -> Any:
        """``action(...)``, tried again on a failure that may pass (polls, downloads)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return action(*args, **kwargs)
            except _TRANSIENT:
                if attempt > self.lm.num_retries:
                    raise
                time.sleep(min(self.lm.backoff * 2 ** (attempt - 1), self.lm.max_backoff))


class DirectBatches(BatchAPI):
    """OpenAI's batch API over httpx: OpenAI and compatible servers (``api_base=``)."""

    def __init__(self, lm: LM) -> None:
        super().__init__(lm)
        self._point = _http.endpoint(lm.model, lm.client)
        if self._point.provider == "azure":
            raise ConfigurationError(
                f"{lm.model}: Azure batches go through litellm; pass transport='litellm' to "
                "LM (or --transport litellm) to submit a batch"
            )

    @property
    def provider(self) -> str:
        """The provider of the model string (``openai`` for a bare name or ``api_base``)."""
        return self._point.provider

    def body(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        """The body the direct transport sends for an online call (never streamed)."""
        sent = {k: v for k, v in params.items() if k not in ("stream", "stream_options")}
        return _http.request_body(self._point, messages, sent, self.lm.client)

    def _send(self, method: str, path: str, **options: Any) -> Any:
        headers = dict(self._point.headers)
        if "files" in options:
            headers.pop("Content-Type", None)  # httpx writes the multipart boundary
        client = _pool.client(self._point.client_key)
        url = _http.joined(self._point.base, path)
        try:
            with _pool.hidden(self._point.secrets):  # from what httpx logs of the request
                response = client.request(
                    method, url, headers=headers, timeout=self.lm.timeout, **options
                )
        except Exception as exc:
            raise self._translated(exc) from exc
        if response.status_code >= 300:
            failure = _http.HTTPStatusError(response.status_code, response.text, response.headers)
            raise self._translated(failure) from failure
        return response

    def _translated(self, exc: Exception) -> Exception:
        error = _http.translate_error(exc, self.model, 1)
        return error if error is not None else exc

    def _json(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        response = self._send(method, path, **options)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._error(ServerError, f"{path} answered with no JSON object: {response.text}")
        return data

    def upload(self, data: bytes, filename: str) -> str:
        """``POST /files`` (multipart, purpose ``batch``); the file id."""
        found = self._json(
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": (filename, data, "application/jsonl")},
        )
        return _identifier(found, "file", self)

    def create(self, file_id: str, metadata: Mapping[str, str]) -> BatchInfo:
        """``POST /batches`` for chat completions, 24h window; never retried (twice paid)."""
        body = {
            "input_file_id": file_id,
            "endpoint": BATCH_ENDPOINT,
            "completion_window": COMPLETION_WINDOW,
            "metadata": dict(metadata),
        }
        found = self._json("POST", "/batches", content=_exchange._encode(body))
        _identifier(found, "batch", self)
        return BatchInfo.from_data(found)

    def retrieve(self, batch_id: str) -> BatchInfo:
        """``GET /batches/{id}``, tried again on a transient failure."""
        found = self._again(self._json, "GET", f"/batches/{batch_id}")
        return BatchInfo.from_data(found)

    def content(self, file_id: str) -> bytes:
        """``GET /files/{id}/content``, tried again on a transient failure."""
        response = self._again(self._send, "GET", f"/files/{file_id}/content")
        return bytes(response.content)


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
                f"{lm.model}: litellm cannot create batches for the provider "
                f"{provider or 'unknown'!r}; batches work for "
                f"{', '.join(sorted(_LITELLM_BATCH_PROVIDERS))} (run it online instead: "
                "structio run without --batch)"
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
        return _identifier(found, "file", self)

    def create(self, file_id: str, metadata: Mapping[str, str]) -> BatchInfo:
        """``litellm.create_batch`` for chat completions, 24h window (never retried)."""
        found = self._call(
            "create_batch",
            completion_window=COMPLETION_WINDOW,
            endpoint=BATCH_ENDPOINT,
            input_file_id=file_id,
            metadata=dict(metadata),
        )
        info = BatchInfo.from_data(_plain(found))
        _identifier({"id": info.id}, "batch", self)
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


def _plain(value: Any) -> dict[str, Any]:
    """A litellm response object as a plain dict."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    data = dump() if callable(dump) else vars(value)
    return dict(data) if isinstance(data, Mapping) else {}


def _identifier(data: Mapping[str, Any], what: str, api: BatchAPI) -> str:
    found = data.get("id")
    if not isinstance(found, str) or not found:
        raise api._error(ServerError, f"the provider created a {what} but sent no id: {data}")
    return found


def batch_api(lm: BaseLM) -> BatchAPI:
    """The batch API that serves ``lm``: direct for OpenAI-compatible models, else litellm.

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
    return LiteLLMBatches(lm)


@dataclass(frozen=True)
class BatchPrice:
    """What a model's batch tokens cost.

    Attributes:
        input: USD per prompt token in a batch, or None when unknown.
        output: USD per completion token in a batch, or None when unknown.
        note: How the price was found (the map's batch price, 50% off, no discount known).
    """

    input: float | None
    output: float | None
    note: str

    @property
    def known(self) -> bool:
        """Whether both prices are known."""
        return self.input is not None and self.output is not None

    def cost(self, usage: Usage) -> float | None:
        """What ``usage`` costs at these prices, or None when unknown."""
        if self.input is None or self.output is None:
            return None
        return usage.prompt_tokens * self.input + usage.completion_tokens * self.output


def batch_price(model: str) -> BatchPrice:
    """The batch price of ``model`` from litellm's model map.

    The map's own batch prices (``input_cost_per_token_batches``) when it has them; else
    OpenAI's batch discount (50%) for OpenAI models; else the ordinary price, said to be
    without a known discount; else unknown.
    """
    found = model_entry(model)
    if found is None:
        return BatchPrice(None, None, f"no price known for {model}")
    _, entry = found
    batch_in = entry.get("input_cost_per_token_batches")
    batch_out = entry.get("output_cost_per_token_batches")
    if isinstance(batch_in, (int, float)) and isinstance(batch_out, (int, float)):
        return BatchPrice(float(batch_in), float(batch_out), "batch price")
    plain_in = cost_of(model, Usage(prompt_tokens=1))
    plain_out = cost_of(model, Usage(completion_tokens=1))
    if plain_in is None or plain_out is None:
        return BatchPrice(None, None, f"no price known for {model}")
    if entry.get("litellm_provider") == "openai":
        return BatchPrice(plain_in / 2, plain_out / 2, "50% batch discount")
    return BatchPrice(plain_in, plain_out, "full price: no batch discount known")


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
