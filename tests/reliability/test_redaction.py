"""Never repeat a credential: not in an error's message, not in the call history.

A real HTTP server on 127.0.0.1 answers with the API key echoed in its error text (some
providers do); structio's exception and ``inspect_history`` must not carry it on.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

import pytest

import structio as sio
from structio._util.secrets import REDACTED, redact, redact_data, secret_values
from structio.lm import lm as lm_module
from tests.wire.conftest import make_lm  # noqa: F401 - the loopback fixture
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
