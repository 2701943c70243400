"""`Predict.batch` and `abatch`: streamed inputs, a bounded read-ahead, results in order."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import structio as sio
import structio.predict.batching as predict_module
from structio._util.progress import Progress

QA = sio.Signature("question -> answer: int")


def number(messages: list[dict[str, Any]]) -> int:
    """The question's number: each question is the decimal text of an int."""
    return int(messages[-1]["content"].split("\n")[1])


def answer(value: int) -> str:
    return f"[[ ## answer ## ]]\n{value}"


class Ledger:
    """Counts what a batch has read from its inputs and what the model has answered."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.read = 0
        self.answered = 0
        self.most_ahead = 0

    def questions(self, count: int) -> Iterator[dict[str, Any]]:
        for i in range(count):
            with self.lock:
                self.read += 1
                # Items read whose call has not answered yet (an answered call may not have
                # stored its result yet, so this never overcounts what the batch holds).
                self.most_ahead = max(self.most_ahead, self.read - self.answered)
            yield {"question": str(i)}

    def reply(self, messages: list[dict[str, Any]]) -> str:
        value = number(messages)
        with self.lock:
            self.answered += 1
        return answer(value * 10)


class OutOfOrder(sio.BaseLM):
    """Answers item 0 only once item 1 has been answered, so completions come out of order.

    Not a `FakeLM`: that one calls its function under a lock, one call at a time.
    """

    def __init__(self) -> None:
        super().__init__("out-of-order")
        self.second_done = threading.Event()

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> sio.LMResponse:
        value = number(messages)
        if value == 0:
            assert self.second_done.wait(timeout=10), "item 1 never ran alongside item 0"
        elif value == 1:
            self.second_done.set()
        return sio.LMResponse((sio.Completion(answer(value + 100)),), self.model)


def answers(results: list[sio.Prediction | BaseException]) -> list[Any]:
    return [r.answer if isinstance(r, sio.Prediction) else type(r).__name__ for r in results]


# -- batch ---------------------------------------------------------------------------------


def test_a_generator_is_read_lazily_within_the_bound_and_results_keep_input_order() -> None:
    ledger = Ledger()
    predict = sio.Predict(QA, lm=sio.FakeLM(ledger.reply))
    results = predict.batch(ledger.questions(300), max_concurrency=3, progress=False)
    assert answers(results) == [i * 10 for i in range(300)]
    assert ledger.read == 300
    # Reading the whole generator first would put 300 items ahead of any answer.
    assert 1 <= ledger.most_ahead <= 2 * 3


def test_results_are_placed_by_input_not_by_completion() -> None:
    predict = sio.Predict(QA, lm=OutOfOrder())
    inputs = ({"question": str(i)} for i in range(4))
    results = predict.batch(inputs, max_concurrency=2, progress=False)
    assert answers(results) == [100, 101, 102, 103]


def test_failures_stay_in_place() -> None:
    def reply(messages: list[dict[str, Any]]) -> str:
        value = number(messages)
        if value % 4 == 1:
            raise sio.RateLimitError(f"no {value}")
        return answer(value)

    predict = sio.Predict(QA, lm=sio.FakeLM(reply))
    results = predict.batch(({"question": str(i)} for i in range(10)), progress=False)
    expected = [("RateLimitError" if i % 4 == 1 else i) for i in range(10)]
    assert answers(results) == expected
    assert str(results[5]) == "no 5"


def test_batch_error_holds_every_result_of_a_generator() -> None:
    def reply(messages: list[dict[str, Any]]) -> str:
        value = number(messages)
        if value == 7:
            raise sio.RateLimitError("busy")
        return answer(value)

    predict = sio.Predict(QA, lm=sio.FakeLM(reply))
    inputs = ({"question": str(i)} for i in range(20))
    with pytest.raises(sio.BatchError, match="1 of 20 batch items failed; the first, item 7"):
        predict.batch(inputs, return_exceptions=False, max_concurrency=4, progress=False)


def test_batch_error_results_are_complete() -> None:
    lm = sio.FakeLM(lambda m: answer(number(m)) if number(m) != 2 else "no answer here")
    predict = sio.Predict(QA, lm=lm)
    with pytest.raises(sio.BatchError) as info:
        predict.batch(
            ({"question": str(i)} for i in range(5)), return_exceptions=False, progress=False
        )
    assert [i for i, _ in info.value.errors] == [2]
    assert answers(info.value.results) == [0, 1, "ParseError", 3, 4]


def test_a_list_with_an_item_that_is_not_a_dict_is_refused_before_any_call() -> None:
    lm = sio.FakeLM(lambda m: answer(1))
    predict = sio.Predict(QA, lm=lm)
    with pytest.raises(sio.ConfigurationError, match="batch item 2 must be a dict of inputs"):
        predict.batch([{"question": "0"}, {"question": "1"}, "2"])  # type: ignore[list-item]
    assert lm.call_count == 0


def test_a_generated_item_that_is_not_a_dict_fails_in_its_place() -> None:
    def inputs() -> Iterator[Any]:
        yield {"question": "0"}
        yield "1"
        yield {"question": "2"}

    predict = sio.Predict(QA, lm=sio.FakeLM(lambda m: answer(number(m))))
    results = predict.batch(inputs(), progress=False)
    assert answers(results) == [0, "ConfigurationError", 2]
    assert "batch item 1 must be a dict of inputs, not str" in str(results[1])
    with pytest.raises(sio.BatchError) as info:
        predict.batch(inputs(), progress=False, return_exceptions=False)
    assert [i for i, _ in info.value.errors] == [1]


def test_a_single_dict_is_not_a_batch() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    with pytest.raises(sio.ConfigurationError, match="not a single dict"):
        predict.batch({"question": "q"})


def test_an_error_from_the_inputs_stops_the_batch_and_propagates() -> None:
    lm = sio.FakeLM(lambda m: answer(number(m)))

    def inputs() -> Iterator[dict[str, Any]]:
        for i in range(3):
            yield {"question": str(i)}
        raise OSError("the data file went away")

    with pytest.raises(OSError, match="went away"):
        sio.Predict(QA, lm=lm).batch(inputs(), max_concurrency=2, progress=False)
    assert lm.call_count <= 3


def test_a_base_exception_in_a_call_ends_the_batch() -> None:
    class Stop(BaseException):
        pass

    read = 0

    def inputs() -> Iterator[dict[str, Any]]:
        nonlocal read
        for i in range(1000):
            read += 1
            yield {"question": str(i)}

    def reply(messages: list[dict[str, Any]]) -> str:
        if number(messages) == 5:
            raise Stop
        return answer(1)

    with pytest.raises(Stop):
        sio.Predict(QA, lm=sio.FakeLM(reply)).batch(inputs(), max_concurrency=2, progress=False)
    assert read < 1000  # no item was read after the batch knew it had ended


def test_progress_total_is_the_length_when_known(monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[Progress] = []

    class Recorded(Progress):
        def __init__(self, total: int | None, **options: Any) -> None:
            super().__init__(total, **options)
            bars.append(self)

    monkeypatch.setattr(predict_module, "Progress", Recorded)
    lm = sio.FakeLM(lambda m: answer(number(m)) if number(m) != 1 else "unreadable")
    predict = sio.Predict(QA, lm=lm)
    predict.batch([{"question": str(i)} for i in range(3)], progress=False)
    predict.batch(({"question": str(i)} for i in range(4)), progress=False)
    asyncio.run(predict.abatch(({"question": str(i)} for i in range(5)), progress=False))
    assert [(bar.total, bar.done, bar.failed) for bar in bars] == [
        (3, 3, 1),
        (None, 4, 1),
        (None, 5, 1),
    ]


def test_generated_batch_threads_see_the_callers_context() -> None:
    with sio.context(lm=sio.FakeLM(lambda m: answer(7))):
        results = sio.Predict(QA).batch(
            ({"question": str(i)} for i in range(5)), max_concurrency=2, progress=False
        )
    assert answers(results) == [7] * 5


def test_a_long_batch_keeps_a_bounded_fake_record() -> None:
    lm = sio.FakeLM(lambda m: answer(number(m)), record=50)
    results = sio.Predict(QA, lm=lm).batch(
        ({"question": str(i)} for i in range(500)), progress=False
    )
    assert answers(results) == list(range(500))
    assert (lm.call_count, len(lm.calls)) == (500, 50)


def test_max_concurrency_is_checked() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    for bad in (0, -1, True, 2.0):
        with pytest.raises(sio.ConfigurationError, match="max_concurrency"):
            predict.batch([{"question": "q"}], max_concurrency=bad)  # type: ignore[arg-type]
        with pytest.raises(sio.ConfigurationError, match="max_concurrency"):
            asyncio.run(predict.abatch([{"question": "q"}], max_concurrency=bad))  # type: ignore[arg-type]


def test_empty_inputs() -> None:
    predict = sio.Predict(QA, lm=sio.FakeLM([]))
    assert predict.batch(iter([])) == []
    assert asyncio.run(predict.abatch(iter([]))) == []
    assert asyncio.run(predict.abatch([])) == []


# -- abatch --------------------------------------------------------------------------------


def test_abatch_reads_a_generator_lazily_and_keeps_order() -> None:
    ledger = Ledger()
    predict = sio.Predict(QA, lm=sio.FakeLM(ledger.reply))
    results = asyncio.run(predict.abatch(ledger.questions(200), max_concurrency=3, progress=False))
    assert answers(results) == [i * 10 for i in range(200)]
    assert 1 <= ledger.most_ahead <= 3


def test_abatch_places_results_by_input_not_by_completion() -> None:
    # BaseLM's async path runs _complete in a thread, so item 0 may block there.
    predict = sio.Predict(QA, lm=OutOfOrder())
    inputs = ({"question": str(i)} for i in range(4))
    results = asyncio.run(predict.abatch(inputs, max_concurrency=2, progress=False))
    assert answers(results) == [100, 101, 102, 103]


def test_abatch_failures_in_place_and_batch_error() -> None:
    def inputs() -> Iterator[Any]:
        for i in range(6):
            yield "oops" if i == 4 else {"question": str(i)}

    def reply(messages: list[dict[str, Any]]) -> str:
        if number(messages) == 1:
            raise sio.RateLimitError("busy")
        return answer(number(messages))

    predict = sio.Predict(QA, lm=sio.FakeLM(reply))
    results = asyncio.run(predict.abatch(inputs(), max_concurrency=2, progress=False))
    assert answers(results) == [0, "RateLimitError", 2, 3, "ConfigurationError", 5]
    with pytest.raises(sio.BatchError) as info:
        asyncio.run(predict.abatch(inputs(), return_exceptions=False, progress=False))
    assert [i for i, _ in info.value.errors] == [1, 4]
    assert answers(info.value.results) == [0, "RateLimitError", 2, 3, "ConfigurationError", 5]


def test_abatch_refuses_a_list_with_a_bad_item_before_any_call() -> None:
    lm = sio.FakeLM(lambda m: answer(1))
    with pytest.raises(sio.ConfigurationError, match="batch item 1 must be a dict"):
        asyncio.run(sio.Predict(QA, lm=lm).abatch([{"question": "0"}, 1]))  # type: ignore[list-item]
    assert lm.call_count == 0


def test_abatch_an_error_from_the_inputs_cancels_the_rest_and_propagates() -> None:
    def inputs() -> Iterator[dict[str, Any]]:
        for i in range(3):
            yield {"question": str(i)}
        raise OSError("the data file went away")

    lm = sio.FakeLM(lambda m: answer(number(m)))
    with pytest.raises(OSError, match="went away"):
        asyncio.run(sio.Predict(QA, lm=lm).abatch(inputs(), max_concurrency=2, progress=False))
    assert lm.call_count <= 3


def test_abatch_sees_the_callers_context() -> None:
    async def main() -> list[sio.Prediction | BaseException]:
        with sio.context(lm=sio.FakeLM(lambda m: answer(3))):
            return await sio.Predict(QA).abatch(
                ({"question": str(i)} for i in range(4)), max_concurrency=2, progress=False
            )

    assert answers(asyncio.run(main())) == [3] * 4
