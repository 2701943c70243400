"""Provider failures as structio's errors: the public names for transports and batches.

A transport (`structio.lm.transport.Transport`) builds the errors it translates with
`lm_error`, so that a rate limit or a rejected key reads the same on every path:
``"<model> (provider <p>): <what>[ after N attempts]: <detail>"``, credentials redacted.
"""

from __future__ import annotations

from structio.lm._errors import (
    RETRYABLE,
    body_detail,
    context_exceeded_text,
    exception_chain,
    is_retryable,
    lm_error,
    request_url,
    retry_after,
    status_error_class,
)

__all__ = [
    "RETRYABLE",
    "body_detail",
    "context_exceeded_text",
    "exception_chain",
    "is_retryable",
    "lm_error",
    "request_url",
    "retry_after",
    "status_error_class",
]
