"""Anthropic's Message Batches: the requests the Messages API writes, sent as one batch.

``POST /v1/messages/batches`` takes the requests inline (``{"requests": [{"custom_id",
"params"}]}``): there is no file to upload. So `AnthropicBatches.upload` only names the
request file that stays in this process (its digest), and `AnthropicBatches.create` sends
its lines; the batch job's state file records that name before the create as it records
an OpenAI file id, and a run stopped in between rebuilds the same requests and creates the
batch from them (nothing was sent, nothing is paid twice). Each request's ``params`` are
the body the Anthropic Messages API (`structio.lm._anthropic.ANTHROPIC`, a `WireAPI`) writes
for an online call, and each succeeded result is read by that API's own `response`.

Results come as JSON Lines from ``GET /v1/messages/batches/{id}/results`` once the batch
has ``ended``, one per request: ``succeeded`` (a Message), ``errored`` (an error body, read
as the HTTP error it stands for), ``canceled`` or ``expired`` (the row is failed, never
answered by anything else).
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

from structio.exceptions import LMError, ServerError
from structio.lm import _exchange
from structio.lm._anthropic import ANTHROPIC
from structio.lm._batch_base import BatchInfo, HTTPBatches, LineResult, identifier
from structio.lm.client import split_settings
from structio.lm.lm import LM
from structio.lm.models import model_info
from structio.lm.types import LMResponse

__all__ = [
    "BATCH_DISCOUNT",
    "PROVIDER",
    "AnthropicBatches",
    "batch_info",
    "messages_api",
    "serves",
]

#: The provider name of Anthropic's models (``anthropic/claude-...``).
PROVIDER = "anthropic"
#: What a batch's tokens cost, as a share of the ordinary price.
BATCH_DISCOUNT = 0.5

# LM settings that a transport reads and never sends (as the chat API drops them).
_NOT_SENT = frozenset({"timeout", "num_retries", "max_retries", "stream", "stream_options"})

# The HTTP status each error type of Anthropic's stands for, so that an errored result
# becomes the error the same failure of an online call would (a 429 a `RateLimitError`...).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def serves(lm: LM) -> bool:
    """Whether ``lm`` is an Anthropic model (``anthropic/...``, or a bare Claude name)."""
    model = lm.model
    if "/" in model:
        return model.split("/", 1)[0] == PROVIDER
    info = model_info(model)
    return info is not None and info.provider == PROVIDER


def messages_api() -> _exchange.WireAPI:
    """The Anthropic Messages API, whose requests and responses a batch carries."""
    return ANTHROPIC


def batch_info(data: Mapping[str, Any]) -> BatchInfo:
    """A Message Batch object (as JSON data) read into a `BatchInfo`.

    Its results are read once it has ``ended``: they are named by the batch's id.
    """
    counts = data.get("request_counts") or {}

    def count(name: str) -> int:
        return int(counts.get(name) or 0)

    status = str(data.get("processing_status") or "unknown")
    ended = status == "ended"
    failed = count("errored") + count("canceled") + count("expired")
    return BatchInfo(
        id=str(data.get("id") or ""),
        status=status,
        total=count("processing") + count("succeeded") + failed,
        completed=count("succeeded"),
        failed=failed,
        output_file_id=str(data.get("id")) if ended and data.get("id") else None,
    )


class AnthropicBatches(HTTPBatches):
    """Anthropic's Message Batches over httpx, at the Messages API's address (``api_base``)."""

    def __init__(self, lm: LM, api: _exchange.WireAPI | None = None) -> None:
        super().__init__(lm)
        self.api = api if api is not None else messages_api()
        self._point = self.api.endpoint(lm.model, lm.client, stream=False)

    def _url(self, path: str) -> str:
        """``path`` under ``/messages/batches``, beside the Messages API's own address.

        Made from the messages URL (not the API base) so that a base with or without
        ``/v1`` or a query (``?key=...``) gives the address the online call uses.
        """
        parts = urllib.parse.urlsplit(self._point.url)
        where = parts.path.rstrip("/") + "/batches" + path
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, where, parts.query, ""))

    def body(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        """The body the Messages API writes for an online call (never streamed)."""
        client_settings, call = split_settings(params)
        sent = {k: v for k, v in call.items() if k not in _NOT_SENT}
        client = self.lm.client.updated(client_settings)
        body = self.api.body(self._point, messages, sent, client, stream=False)
        body.pop("stream", None)
        return body

    def request_line(
        self, custom_id: str, messages: list[dict[str, Any]], params: Mapping[str, Any]
    ) -> bytes:
        """One request of the batch: ``{"custom_id", "params"}``."""
        line = {"custom_id": custom_id, "params": self.body(messages, params)}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    def upload(self, data: bytes, filename: str) -> str:
        """Nothing is uploaded (the requests go inline): a name for them, their digest."""
        return f"inline-{hashlib.sha256(data).hexdigest()[:24]}"

    def create(self, file_id: str, metadata: Mapping[str, str], data: bytes) -> BatchInfo:
        """``POST /messages/batches`` with every request; never retried (twice paid).

        Anthropic's batches hold no metadata: ``metadata`` is not sent.
        """
        requests = [json.loads(raw) for raw in data.splitlines() if raw.strip()]
        found = self._json("POST", "", content=_exchange._encode({"requests": requests}))
        identifier(found, "batch", self)
        return batch_info(found)

    def retrieve(self, batch_id: str) -> BatchInfo:
        """``GET /messages/batches/{id}``, tried again on a transient failure."""
        return batch_info(self._again(self._json, "GET", f"/{batch_id}"))

    def content(self, file_id: str) -> bytes:
        """``GET /messages/batches/{id}/results`` (JSON Lines), tried again if it may pass.

        Read at the API's own address rather than the ``results_url`` the batch names, so
        that the key is only ever sent where the online calls send it.
        """
        response = self._again(self._send, "GET", f"/{file_id}/results")
        return bytes(response.content)

    def cancel(self, batch_id: str) -> BatchInfo:
        """``POST /messages/batches/{id}/cancel``."""
        return batch_info(self._json("POST", f"/{batch_id}/cancel"))

    def _priced(self, response: LMResponse) -> LMResponse:
        """``response`` at half its price: Anthropic bills every token of a batch at 50%.

        Halved from the Messages API's own price, so that cache reads and writes keep
        their rates (Anthropic's discounts stack); the map's batch prices for Claude are
        exactly these.
        """
        cost = None if response.cost is None else response.cost * BATCH_DISCOUNT
        return LMResponse(
            completions=response.completions,
            model=response.model,
            usage=response.usage,
            cost=cost,
        )

    def read_line(self, data: Mapping[str, Any]) -> LineResult:
        """One result: the Message read by the Messages API, or the row's error."""
        custom_id = str(data.get("custom_id"))
        result = data.get("result")
        kind = result.get("type") if isinstance(result, Mapping) else None
        if kind == "succeeded" and isinstance(result, Mapping):
            message = result.get("message")
            if isinstance(message, Mapping):
                try:
                    answer = self.api.response(message, self.model, self.provider, 0.0, 1)
                except LMError as exc:
                    return LineResult(custom_id, error=exc)
                except (TypeError, ValueError, AttributeError, KeyError) as exc:
                    detail = f"a succeeded result not of the Messages API's shape ({exc})"
                    return LineResult(custom_id, error=self._error(ServerError, detail))
                return LineResult(custom_id, response=self._priced(answer))
        if kind == "errored" and isinstance(result, Mapping):
            return LineResult(custom_id, error=self._errored(result.get("error")))
        if kind == "expired":
            why = "the batch expired (24h window) before this request ran"
            return LineResult(custom_id, error=self._unrun(why))
        if kind == "canceled":
            why = "the batch was cancelled before this request ran"
            return LineResult(custom_id, error=self._unrun(why))
        detail = f"a batch result line with no answer: {dict(data)}"
        return LineResult(custom_id, error=self._error(ServerError, detail))

    def _errored(self, error: Any) -> LMError:
        """An errored result's error body as the error of the HTTP status it stands for."""
        inner = error.get("error") if isinstance(error, Mapping) else None
        kind = inner.get("type") if isinstance(inner, Mapping) else None
        status = _ERROR_STATUS.get(str(kind), 500)
        text = json.dumps(error) if isinstance(error, Mapping) else str(error)
        failure = _exchange.HTTPStatusError(status, text, {})
        translated = self._translated(failure)
        if isinstance(translated, LMError):
            return translated
        return self._error(ServerError, text)  # pragma: no cover - a status always translates

    def _unrun(self, why: str) -> LMError:
        return self._error(
            ServerError,
            f"{why}; run the row again (online, or in a new batch)",
            what="no answer",
        )
