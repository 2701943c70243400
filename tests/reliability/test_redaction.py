"""Never repeat a credential: not in an error's message, the call history, a log or an event.

A real HTTP server on 127.0.0.1 answers with the API key echoed in its error text (some
providers do); structio's exception and ``inspect_history`` must not carry it on. An API
base with credentials in its address (user, password, query values) sends them, and no log
line, callback event or span repeats them, over either transport.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio
from structio._util.secrets import REDACTED, redact, redact_data, secret_values
from structio.lm import lm as lm_module
from tests.observe.recording import Recorder
from tests.wire.conftest import make_lm, transport  # noqa: F401 - the loopback fixtures
from tests.wire.server import OpenAIServer, Reply, Request

MakeLM = Callable[..., sio.LM]
KEY = "sk-live-ECHOED-0123456789abcdef"  # a made-up key the tests look for
CALL_KEY = "sk-call-ECHOED-9876543210"
HEADER_TOKEN = "hdr-ECHOED-5555aaaa"  # noqa: S105
MESSAGES = [{"role": "user", "content": "Hi?"}]


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the backoff waits instead of sleeping them."""
    recorded: list[float] = []
    monkeypatch.setattr(lm_module, "_sleep", recorded.append)
    return recorded


def echoing(status: int) -> Callable[[Request], Reply]:
    """A handler that answers ``status`` and quotes every header it received, as some do."""

    def handle(request: Request) -> Reply:
        quoted = "; ".join(f"{name}: {value}" for name, value in request.headers.items())
        return Reply(status=status, error_message=f"Incorrect API key provided ({quoted})")

    return handle


def shown(error: BaseException) -> str:
    return f"{error!s}\n{error!r}\n{error.args!r}"


@pytest.mark.parametrize(
    ("status", "kind"), [(401, sio.AuthenticationError), (400, sio.BadRequestError)]
)
def test_a_key_echoed_in_an_error_body_is_not_repeated(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    status: int,
    kind: type[sio.LMError],
) -> None:
    server.handler = echoing(status)
    lm = make_lm(api_key=KEY)
    with pytest.raises(kind) as info:
        lm(MESSAGES)
    (request,) = server.requests
    assert request.headers["Authorization"] == f"Bearer {KEY}"  # the key was sent...
    cause = info.value.__cause__
    assert cause is not None
    assert REDACTED in str(cause)  # ...echoed back, and redacted in the cause too
    assert KEY not in shown(info.value)  # ...but structio does not repeat it
    assert f"Bearer {REDACTED}" in str(info.value)  # the rest of the text is kept
    assert info.value.status_code == status


def test_keys_of_the_call_and_of_secret_headers_are_redacted_too(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
) -> None:
    server.handler = echoing(401)
    lm = make_lm(api_key=KEY, extra_headers={"X-Api-Key": HEADER_TOKEN})
    with pytest.raises(sio.AuthenticationError) as info:
        lm(MESSAGES, api_key=CALL_KEY)
    sent = server.requests[0].headers
    assert sent["Authorization"] == f"Bearer {CALL_KEY}"
    assert sent["X-Api-Key"] == HEADER_TOKEN
    text = shown(info.value)
    for secret in (KEY, CALL_KEY, HEADER_TOKEN):
        assert secret not in text, secret


def test_a_key_from_the_environment_is_redacted(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.handler = echoing(401)
    lm = make_lm(api_key=None)  # no key given: the environment's is sent
    with pytest.raises(sio.AuthenticationError) as info:
        lm(MESSAGES)
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in shown(info.value)


def test_a_retried_server_error_and_the_async_path_are_redacted(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    sleeps: list[float],
) -> None:
    server.handler = echoing(500)
    lm = make_lm(api_key=KEY, num_retries=1)
    with pytest.raises(sio.ServerError) as info:
        lm(MESSAGES)
    assert len(server.requests) == 2
    assert info.value.attempts == 2
    assert KEY not in shown(info.value)
    with pytest.raises(sio.ServerError) as again:
        asyncio.run(lm.acall(MESSAGES))
    assert KEY not in shown(again.value)


def test_a_prediction_error_does_not_repeat_the_key(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
) -> None:
    server.handler = echoing(401)
    predict = sio.Predict("question -> answer", lm=make_lm(api_key=KEY))
    with pytest.raises(sio.AuthenticationError) as info:
        predict(question="q")
    assert KEY not in shown(info.value)
    results = predict.batch([{"question": "q"}], progress=False)
    assert isinstance(results[0], sio.AuthenticationError)
    assert KEY not in shown(results[0])


def test_the_history_never_holds_a_key_echoed_in_a_completion_or_sent_in_a_message(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
) -> None:
    server.handler = lambda request: Reply(
        content=f"you sent {request.headers['Authorization']} and {request.headers['X-Api-Key']}"
    )
    lm = make_lm(api_key=KEY, extra_headers={"X-Api-Key": HEADER_TOKEN})
    messages = [{"role": "user", "content": f"my key is {KEY}, is it valid?"}]
    response = lm(messages, metadata={"note": f"key {KEY}"})
    assert KEY in response.text  # the caller gets the response as it came
    printed = io.StringIO()
    sio.inspect_history(1, file=printed)
    text = printed.getvalue()
    (entry,) = lm.history
    everything = f"{text}\n{entry!r}"
    assert KEY not in everything
    assert HEADER_TOKEN not in everything
    assert f"you sent Bearer {REDACTED} and {REDACTED}" in text
    assert f"my key is {REDACTED}, is it valid?" in text
    assert entry.params["metadata"]["note"] == f"key {REDACTED}"
    assert messages[0]["content"] == f"my key is {KEY}, is it valid?"  # not changed in place


def test_a_fake_lm_history_is_redacted_too() -> None:
    lm = sio.FakeLM([f"echo {KEY}"])
    response = lm(MESSAGES, api_key=KEY)
    assert response.text == f"echo {KEY}"
    (entry,) = lm.history
    assert entry.response.text == f"echo {REDACTED}"


def test_the_secret_values_follow_the_one_rule() -> None:
    params = {
        "api_key": KEY,
        "max_tokens": 1000,  # not a secret, and never looked for in text
        "temperature": "0.5",
        "client_secret": ["abcd-1234", "xy"],  # too short to look for: "xy"
        "extra_headers": {"Authorization": f"Bearer {HEADER_TOKEN}", "Accept": "text/plain"},
    }
    values = secret_values(params, {"OTHER_TOKEN": CALL_KEY})
    assert set(values) == {KEY, "abcd-1234", f"Bearer {HEADER_TOKEN}", HEADER_TOKEN, CALL_KEY}
    lengths = [len(value) for value in values]
    assert lengths == sorted(lengths, reverse=True)  # a header's value before the key in it
    assert redact(f"a {KEY} b Bearer {HEADER_TOKEN} c", values) == (f"a {REDACTED} b {REDACTED} c")
    data = {"x": [f"{KEY}!", ("abcd-1234",)], "y": 3, "z": "plain"}
    assert redact_data(data, values) == {"x": [f"{REDACTED}!", (REDACTED,)], "y": 3, "z": "plain"}
    clean = {"z": "plain", "n": [1, "two"]}
    assert redact_data(clean, values) is clean
    assert secret_values({"temperature": 0.5, "model": "gpt"}) == []


@pytest.mark.parametrize("status", [401, 400])
def test_a_traceback_of_the_error_does_not_repeat_an_echoed_key(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    import traceback

    server.handler = echoing(status)
    lm = make_lm(api_key=KEY, num_retries=0)
    with pytest.raises(sio.LMError) as info:
        lm(MESSAGES)
    printed = "".join(traceback.format_exception(info.value))
    assert info.value.__cause__ is not None  # the transport's exception is kept...
    assert REDACTED in printed  # ...its text redacted, not dropped
    assert KEY not in printed
    with caplog.at_level(logging.ERROR):
        logging.getLogger("test").exception("failed", exc_info=info.value)
    assert caplog.records
    assert KEY not in caplog.text


# -- credentials in the address: logs, callback events and spans ----------------------------------
#
# An API base can carry credentials: ``https://user:password@host/v1?key=...``. They travel
# with each request, but no log line (structio's, httpx's, litellm's, at DEBUG), callback
# event or OpenTelemetry span may repeat them, nor the Basic credentials made of them.

URL_USER = "urluser-4f3e2d1c"
URL_PASSWORD = "urlpass-9a8b7c6d"  # noqa: S105 - made up, looked for
URL_KEY = "urlkey-0f1e2d3c4b5a"
URL_BASIC = base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode()
URL_SECRETS = (URL_USER, URL_PASSWORD, URL_KEY, URL_BASIC)
ANSWER = "[[ ## answer ## ]]\nfine\n\n[[ ## completed ## ]]"


def address(server: OpenAIServer) -> str:
    """The loopback server's API base with a user, a password and a key in it."""
    scheme, rest = server.base_url.split("://", 1)
    return f"{scheme}://{URL_USER}:{URL_PASSWORD}@{rest}?key={URL_KEY}"


class Seen:
    """Everything a program could see of its calls: log records, callback events, spans."""

    def __init__(self, caplog: pytest.LogCaptureFixture, recorder: Recorder, exporter: Any) -> None:
        self.caplog = caplog
        self.recorder = recorder
        self.exporter = exporter

    def logged(self) -> list[str]:
        return [record.getMessage() for record in self.caplog.records]

    def text(self) -> str:
        parts = [self.caplog.text, *self.logged()]
        for hook, event in self.recorder.events:
            parts.append(f"{hook} {event!r}")
            error = getattr(event, "error", None)
            if isinstance(error, BaseException):
                parts.append("".join(traceback.format_exception(error)))
        parts += [span.to_json() for span in self.exporter.get_finished_spans()]
        return "\n".join(parts)

    def assert_no_secret(self, *more: str) -> None:
        text = "\n".join([self.text(), *more])
        for secret in URL_SECRETS:
            assert secret not in text, secret


@pytest.fixture
def seen(
    caplog: pytest.LogCaptureFixture,
    exporter: Any,
    monkeypatch: pytest.MonkeyPatch,
    transport: str,  # noqa: F811
) -> Iterator[Seen]:
    """Every logger at DEBUG, a recording callback and spans, for the test's calls."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from structio.observe import OpenTelemetryCallback

    for name in ("", "structio", "httpx", "httpcore", "openai", "LiteLLM"):
        caplog.set_level(logging.DEBUG, logger=name)
    if transport == "direct":
        # structio's own filter only: litellm, once imported (by another test), puts one
        # of its own on httpx's logger, which would hide a leak of the direct transport.
        # (litellm's requests are litellm's to log: its filter stays for those.)
        httpx_log = logging.getLogger("httpx")
        own = [f for f in httpx_log.filters if type(f).__module__.startswith("structio.")]
        monkeypatch.setattr(httpx_log, "filters", own)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = Recorder()
    spans = OpenTelemetryCallback(tracer_provider=provider, capture_content=True)
    with sio.context(callbacks=[recorder, spans]):
        yield Seen(caplog, recorder, exporter)
    provider.shutdown()


def sent_the_credentials(server: OpenAIServer) -> None:
    """The request really carried them (so that their absence elsewhere means something)."""
    request = server.requests[-1]
    assert f"?key={URL_KEY}" in request.path
    assert request.headers["Authorization"] == f"Basic {URL_BASIC}"


def test_credentials_in_the_address_reach_no_log_event_or_span(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    transport: str,  # noqa: F811
    seen: Seen,
) -> None:
    predict = sio.Predict("question -> answer", lm=make_lm(api_base=address(server)))
    server.reply(Reply(content=ANSWER))
    assert predict(question="q").answer == "fine"
    sent_the_credentials(server)
    if transport == "direct":
        # litellm's async client (aiohttp) refuses an address with credentials and a key.
        server.reply(Reply(content=ANSWER))
        assert asyncio.run(predict.acall(question="q")).answer == "fine"
        sent_the_credentials(server)
        # The path goes before the query (litellm's client puts it after).
        assert server.requests[-1].path == f"/v1/chat/completions?key={URL_KEY}"
    calls = 2 if transport == "direct" else 1
    assert seen.recorder.hooks == ["start", "end"] * calls
    assert len(seen.exporter.get_finished_spans()) == calls
    if transport == "direct":  # httpx logs each request: the address with [redacted] in it
        requests = [line for line in seen.logged() if line.startswith("HTTP Request: POST")]
        assert len(requests) == 2
        # The line is kept, the credentials replaced (litellm, once imported, puts a filter
        # of its own on httpx's logger that also hides the query, in its spelling).
        assert f"://{REDACTED}" in requests[0]
        assert "@127.0.0.1:" in requests[0]
    seen.assert_no_secret()


@pytest.mark.parametrize(
    ("status", "kind"), [(401, sio.AuthenticationError), (500, sio.ServerError)]
)
def test_a_failing_call_echoing_the_address_repeats_no_credential(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    sleeps: list[float],
    seen: Seen,
    status: int,
    kind: type[sio.LMError],
) -> None:
    base = address(server)

    def echo(request: Request) -> Reply:
        return Reply(
            status=status,
            error_message=(
                f"no access for {base} (path {request.path}, "
                f"Authorization: {request.headers.get('Authorization')})"
            ),
        )

    server.handler = echo
    predict = sio.Predict("question -> answer", lm=make_lm(api_base=base, num_retries=1))
    with pytest.raises(kind) as info:
        predict(question="q")
    sent_the_credentials(server)
    shown_error = f"{shown(info.value)}\n{''.join(traceback.format_exception(info.value))}"
    assert REDACTED in shown_error  # the echo is kept, its credentials hidden
    if status == 500:  # retried once: structio's warning says so, and repeats nothing
        assert len(server.requests) == 2
        assert any("retry 1 in" in line for line in seen.logged())
    (end,) = [event for hook, event in seen.recorder.events if hook == "end"]
    assert end.error is info.value
    (span,) = seen.exporter.get_finished_spans()
    assert span.status.description is not None
    seen.assert_no_secret(shown_error, span.status.description)


def test_a_streamed_call_repeats_no_credential_of_the_address(
    server: OpenAIServer,
    make_lm: MakeLM,  # noqa: F811
    transport: str,  # noqa: F811
    seen: Seen,
) -> None:
    predict = sio.Predict("question -> answer", lm=make_lm(api_base=address(server)))
    server.reply(Reply(content=ANSWER))
    stream = predict.stream(question="q")
    events = list(stream)
    assert events
    assert stream.result.answer == "fine"
    sent_the_credentials(server)

    async def astreamed() -> str:
        server.reply(Reply(content=ANSWER))
        astream = predict.astream(question="q")
        async for _ in astream:
            pass
        return str(astream.result.answer)

    if transport == "direct":  # litellm's async client refuses such an address (see above)
        assert asyncio.run(astreamed()) == "fine"
        sent_the_credentials(server)
        assert sum(line.startswith("HTTP Request: POST") for line in seen.logged()) == 2
    assert seen.recorder.hooks == ["start", "end"] * (2 if transport == "direct" else 1)
    seen.assert_no_secret()


def test_the_basic_credentials_of_an_address_are_secret_values_too() -> None:
    values = secret_values({"api_base": "https://us%40er:p%3Ass@host/v1?key=abcdef"})
    basic = base64.b64encode(b"us@er:p:ss").decode()  # what a client sends, unquoted
    assert basic in values
    assert redact(f"Authorization: Basic {basic}", values) == f"Authorization: Basic {REDACTED}"


def test_batch_requests_to_such_an_address_repeat_no_credential(
    server: OpenAIServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The batch API goes over the direct transport's client: files and batches, each path
    # put before the address's query, none logged with its credentials.
    from tests.wire.test_batch import answer

    caplog.set_level(logging.DEBUG, logger="httpx")
    httpx_log = logging.getLogger("httpx")
    own = [f for f in httpx_log.filters if type(f).__module__.startswith("structio.")]
    monkeypatch.setattr(httpx_log, "filters", own)  # as in `seen`: structio's filter alone
    server.handler = answer
    lm = sio.LM("openai/test", api_base=address(server), api_key="k", cache=False)
    job = sio.Predict("ticket -> category", lm=lm).submit_batch([{"ticket": "a"}], progress=False)
    assert job.wait(poll_interval=0).results()[0] == {"category": "a"}
    paths = [request.path for request in server.requests]
    assert f"/v1/files?key={URL_KEY}" in paths
    assert f"/v1/batches?key={URL_KEY}" in paths
    logged = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert len(logged) >= 4  # upload, create, poll, content
    for secret in URL_SECRETS:
        assert secret not in "\n".join(logged), secret
