"""What every provider batch API shares: batch objects, the API's shape, prices.

`structio.lm.batches` picks the API that serves a model (OpenAI's and litellm's live there,
Anthropic's in `structio.lm._batch_anthropic`); each is a `BatchAPI`, most of them an
`HTTPBatches` over the pooled httpx client.
"""

from __future__ import annotations

import abc
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from structio.exceptions import (
    LMConnectionError,
    LMError,
    LMTimeoutError,
    RateLimitError,
    ServerError,
)
from structio.lm import _exchange, _http, _pool
from structio.lm._errors import lm_error
from structio.lm.lm import LM
from structio.lm.models import cost_of, model_entry
from structio.lm.types import LMResponse, Usage

__all__ = [
    "BATCH_ENDPOINT",
    "COMPLETION_WINDOW",
    "OPENAI_LIMITS",
    "TERMINAL",
    "BatchAPI",
    "BatchInfo",
    "BatchLimits",
    "BatchPrice",
    "HTTPBatches",
    "LineResult",
    "batch_price",
    "identifier",
]

#: The endpoint every request of a batch goes to.
BATCH_ENDPOINT = "/v1/chat/completions"
#: How long the provider has to run a batch.
COMPLETION_WINDOW = "24h"
#: The states after which a batch changes no more (``ended``: Anthropic's one end state).
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled", "ended"})

# Providers whose batches cost half the ordinary price when the model map has no batch price.
_HALF_PRICE_PROVIDERS = frozenset({"openai", "anthropic"})
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
        status: OpenAI's ``validating``, ``in_progress``, ``finalizing``, ``completed``,
            ``failed``, ``expired``, ``cancelling`` or ``cancelled``; Anthropic's
            ``in_progress``, ``canceling`` or ``ended``.
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
    def create(self, file_id: str, metadata: Mapping[str, str], data: bytes) -> BatchInfo:
        """Create a batch from an uploaded file (``data``: its bytes, as uploaded)."""

    @abc.abstractmethod
    def retrieve(self, batch_id: str) -> BatchInfo:
        """The batch as the provider sees it now."""

    @abc.abstractmethod
    def content(self, file_id: str) -> bytes:
        """The bytes of a file (a batch's output or error file)."""

    @abc.abstractmethod
    def cancel(self, batch_id: str) -> BatchInfo:
        """Ask the provider to stop a batch: its requests not yet run end unanswered."""

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
        return self._priced(_http.to_response(body, self.model, self.provider, 0.0, 1))

    def _priced(self, response: LMResponse) -> LMResponse:
        """``response`` at the batch price (a batch's answers are not billed as calls)."""
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


class HTTPBatches(BatchAPI):
    """A batch API reached over the pooled httpx client, at the address of an `Endpoint`."""

    _point: _exchange.Endpoint

    @property
    def provider(self) -> str:
        """The provider the endpoint names."""
        return self._point.provider

    def _url(self, path: str) -> str:
        """The address of ``path`` of the API (``/batches``...)."""
        return _exchange.joined(self._point.base, path)

    def _send(self, method: str, path: str, **options: Any) -> Any:
        headers = dict(self._point.headers)
        if "files" in options:
            headers.pop("Content-Type", None)  # httpx writes the multipart boundary
        client = _pool.client(self._point.client_key)
        url = self._url(path)
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
        error = _exchange.translate_error(
            exc, self.model, 1, secrets=self._point.secrets, provider=self.provider
        )
        return error if error is not None else exc

    def _json(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        response = self._send(method, path, **options)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._error(
                ServerError, f"{self._url(path)} answered with no JSON object: {response.text}"
            )
        return data


def identifier(data: Mapping[str, Any], what: str, api: BatchAPI) -> str:
    """The id the provider gave what it created (a file, a batch); none is a `ServerError`."""
    found = data.get("id")
    if not isinstance(found, str) or not found:
        raise api._error(ServerError, f"the provider created a {what} but sent no id: {data}")
    return found


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
    the batch discount (50%) OpenAI and Anthropic give for their models; else the ordinary
    price, said to be without a known discount; else unknown.
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
    if entry.get("litellm_provider") in _HALF_PRICE_PROVIDERS:
        return BatchPrice(plain_in / 2, plain_out / 2, "50% batch discount")
    return BatchPrice(plain_in, plain_out, "full price: no batch discount known")
