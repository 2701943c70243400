"""configure() and context(): defaults for Predict, isolated across threads and tasks."""

from __future__ import annotations

import asyncio
import threading

import pytest

import structio as sio

QA = sio.Signature("question -> answer")


def fake(text: str) -> sio.FakeLM:
    return sio.FakeLM(lambda _messages: f"[[ ## answer ## ]]\n{text}")


def test_no_lm_is_a_clear_error() -> None:
    with pytest.raises(sio.ConfigurationError, match=r"structio\.configure\(lm="):
        sio.Predict(QA)(question="q")


def test_configure_sets_the_global_default() -> None:
    sio.configure(lm=fake("global"))
    assert sio.Predict(QA)(question="q").answer == "global"


def test_context_overrides_and_restores() -> None:
    sio.configure(lm=fake("global"))
    with sio.context(lm=fake("scoped")):
        assert sio.Predict(QA)(question="q").answer == "scoped"
        with sio.context(adapter=sio.JSONAdapter(), lm=sio.FakeLM([{"answer": "json"}])):
            pred = sio.Predict(QA)(question="q")
            assert (pred.answer, pred.path) == ("json", "json")
    assert sio.Predict(QA)(question="q").answer == "global"


def test_precedence_call_then_predict_then_context() -> None:
    with sio.context(lm=fake("context")):
        predict = sio.Predict(QA, lm=fake("predict"))
        assert predict(question="q").answer == "predict"
        assert predict(question="q", lm=fake("call")).answer == "call"


def test_context_is_not_seen_by_other_threads() -> None:
    sio.configure(lm=fake("global"))
    seen: dict[str, str] = {}
    inside = threading.Event()
    release = threading.Event()

    def scoped() -> None:
        with sio.context(lm=fake("thread")):
            inside.set()
            release.wait(5)
            seen["scoped"] = sio.Predict(QA)(question="q").answer

    worker = threading.Thread(target=scoped)
    worker.start()
    inside.wait(5)
    seen["main"] = sio.Predict(QA)(question="q").answer
    release.set()
    worker.join(5)
    assert seen == {"scoped": "thread", "main": "global"}


def test_context_is_isolated_between_asyncio_tasks() -> None:
    async def ask(name: str) -> str:
        with sio.context(lm=fake(name)):
            await asyncio.sleep(0.01)  # let the other task enter its own context
            pred = await sio.Predict(QA).acall(question="q")
            return str(pred.answer)

    async def main() -> list[str]:
        return list(await asyncio.gather(ask("a"), ask("b"), ask("c")))

    assert asyncio.run(main()) == ["a", "b", "c"]


def test_batch_threads_see_the_callers_context() -> None:
    with sio.context(lm=fake("scoped")):
        results = sio.Predict(QA).batch([{"question": "1"}, {"question": "2"}], progress=False)
    assert [r.answer for r in results if isinstance(r, sio.Prediction)] == ["scoped", "scoped"]


def test_settings_are_checked() -> None:
    with pytest.raises(sio.ConfigurationError, match="lm= must be a structio LM"):
        sio.configure(lm="openai/gpt-4o-mini")  # type: ignore[arg-type]
    with (
        pytest.raises(sio.ConfigurationError, match="adapter= must be an Adapter"),
        sio.context(adapter="json"),  # type: ignore[arg-type]
    ):
        pass


def test_one_check_says_how_to_fix_a_model_string_or_an_adapter_class() -> None:
    from structio.settings import check_adapter, check_lm

    with pytest.raises(sio.ConfigurationError, match=r"pass lm=structio\.LM\('openai/x'\)"):
        sio.configure(lm="openai/x")  # type: ignore[arg-type]
    with pytest.raises(sio.ConfigurationError, match="not the class FakeLM: pass an instance"):
        check_lm(sio.FakeLM)
    with pytest.raises(sio.ConfigurationError, match=r"pass an instance, ChatAdapter\(\)"):
        check_adapter(sio.ChatAdapter)
    lm, adapter = sio.FakeLM([]), sio.JSONAdapter()
    assert (check_lm(lm), check_adapter(adapter), check_lm(None)) == (lm, adapter, None)


def test_settings_lm_reads_what_is_in_effect_as_dspys_does() -> None:
    import structio.settings

    sio.configure(lm=None, adapter=None)
    assert sio.settings.lm is None
    assert structio.settings.adapter is None
    outer = fake("global")
    sio.configure(lm=outer)
    assert sio.settings.lm is outer
    inner, adapter = fake("scoped"), sio.JSONAdapter()
    with sio.context(lm=inner, adapter=adapter):
        assert sio.settings.lm is inner
        assert sio.settings.adapter is adapter
        assert sio.settings.callbacks == ()
    assert sio.settings.lm is outer
    with pytest.raises(AttributeError, match="no attribute 'lmm'"):
        _ = sio.settings.lmm


def test_an_unknown_setting_names_those_that_exist_and_the_closest() -> None:
    from structio.settings import UnknownSettingError

    before = sio.settings.current_settings()
    with pytest.raises(UnknownSettingError, match="did you mean `adapter`") as info:
        sio.configure(adaptor=sio.JSONAdapter())
    assert "`lm`, `adapter`, `callbacks`" in str(info.value)
    assert sio.settings.current_settings() == before  # nothing was set
    # A TypeError still, as Python's own unexpected keyword is.
    with pytest.raises(TypeError, match="context\\(\\) has no setting `temperature`\\."):  # noqa: SIM117
        with sio.context(temperature=0):
            pass
    assert isinstance(info.value, sio.ConfigurationError)


def test_an_unknown_setting_with_a_valid_one_sets_neither() -> None:
    from structio.settings import UnknownSettingError

    sio.configure(lm=None)
    with pytest.raises(UnknownSettingError, match="did you mean `callbacks`"):
        sio.configure(lm=fake("x"), callback=[])
    assert sio.settings.lm is None
