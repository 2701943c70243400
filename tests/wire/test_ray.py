"""`structio.ray` on a real local Ray, against the loopback OpenAI server: no row lost."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import structio as sio
from structio.ray import PredictBatches, predict_dataset
from tests.wire.server import OpenAIServer, Reply, Request

# Ray is the users' extra (structio[ray]), which CI installs; a contributor's [dev] lacks it.
ray = pytest.importorskip(
    "ray", reason="Ray is not installed (structio[ray]): EXTRAS=ray bash scripts/setup"
)

pytestmark = pytest.mark.filterwarnings(
    # Ray's DataContext, when made, sets its own deprecated options to their defaults
    # (`use_push_based_shuffle`, `use_polars`, `use_arrow_tensor_v2`) and warns about
    # them itself; only deprecations raised in that module of Ray's are let through.
    "ignore::DeprecationWarning:ray.data.context",
)

ROWS = 2_000
DELAY = 0.005


class Ticket(sio.Signature):
    """Rate how urgent a support ticket is."""

    text: str = sio.InputField()
    urgency: int = sio.OutputField(ge=1, le=5)


def number(request: Request) -> int:
    """The row number the ticket text carries (``ticket 17: ...``)."""
    found = re.search(r"ticket (\d+):", request.messages[-1]["content"])
    assert found is not None
    return int(found.group(1))


def answer(request: Request) -> Reply:
    """Row i is urgency i % 5 + 1; every 50th from 7 a 400, from 13 an unreadable answer.

    Each reply waits a little, so calls that overlap are seen overlapping by the server.
    """
    i = number(request)
    if i % 50 == 7:
        return Reply(status=400, error_message=f"row {i} refused", delay=DELAY)
    if i % 50 == 13:
        return Reply(content="I cannot tell.", delay=DELAY)
    text = f"[[ ## urgency ## ]]\n{i % 5 + 1}\n\n[[ ## completed ## ]]"
    return Reply(content=text, delay=DELAY)


def expected_error(i: int) -> str | None:
    if i % 50 == 7:
        return "BadRequestError"
    if i % 50 == 13:
        return "ParseError"
    return None


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # The node's address is given as 127.0.0.1: otherwise Ray finds it by opening a UDP
    # socket towards a public address, which the suite's network guard refuses.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    context = ray.data.DataContext.get_current()
    preserve, progress = context.execution_options.preserve_order, context.enable_progress_bars
    # In order, so the test can check that order is kept; quiet, for the test's output.
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    yield
    context.execution_options.preserve_order, context.enable_progress_bars = preserve, progress
    ray.shutdown()


@pytest.fixture
def builder(server: OpenAIServer) -> Callable[[], sio.Predict]:
    """A function that builds the Predict on each worker (only the function travels)."""
    server.handler = answer
    url = server.base_url

    def build() -> sio.Predict:
        lm = sio.LM("openai/test", api_base=url, api_key="k", cache=False, backoff=0.01)
        # No JSON fallback: one request per row, so the server's count proves it.
        return sio.Predict(Ticket, lm=lm, adapter=sio.ChatAdapter(fallback=None))

    return build


def tickets(count: int) -> list[dict[str, Any]]:
    return [{"id": f"t{i:05d}", "text": f"ticket {i}: it broke"} for i in range(count)]


def check_rows(rows: list[dict[str, Any]], count: int) -> None:
    assert [row["id"] for row in rows] == [f"t{i:05d}" for i in range(count)]
    for i, row in enumerate(rows):
        assert row["text"] == f"ticket {i}: it broke"
        kind = expected_error(i)
        if kind is None:
            assert (row["urgency"], row["error"]) == (i % 5 + 1, None), row
        else:
            assert row["urgency"] is None, row
            assert row["error"].startswith(f"{kind}: "), row


def test_every_row_of_a_dataset_is_answered_in_order_with_errors_kept(
    local_ray: None, server: OpenAIServer, builder: Callable[[], sio.Predict]
) -> None:
    dataset = ray.data.from_items(tickets(ROWS), override_num_blocks=8)

    out = predict_dataset(dataset, builder, workers=2, max_concurrency=8, batch_size=100)
    rows = out.take_all()

    check_rows(rows, ROWS)
    assert set(rows[0]) == {"id", "text", "urgency", "error"}
    assert sum(row["error"] is not None for row in rows) == 2 * ROWS // 50
    assert "row 7 refused" in rows[7]["error"]
    assert "urgency" in rows[13]["error"]  # the parse error names the field
    # One request per row: a failed row is neither retried (400) nor re-asked, and no
    # batch ran twice.
    assert len(server.requests) == ROWS
    assert sorted(number(request) for request in server.requests) == list(range(ROWS))
    # Calls overlapped inside the workers (Predict.batch), never beyond both pools.
    assert 1 < server.max_in_flight <= 2 * 8


def test_numpy_batches_and_a_saved_prompt_built_on_each_worker(
    local_ray: None, server: OpenAIServer
) -> None:
    server.handler = answer
    lm = sio.LM("openai/test", api_base=server.base_url, cache=False)
    saved = sio.Predict(Ticket, lm=lm, adapter=sio.ChatAdapter(fallback=None)).to_dict()
    count = 300
    dataset = ray.data.from_items(tickets(count), override_num_blocks=3)

    out = dataset.map_batches(
        PredictBatches,
        fn_constructor_kwargs={"predict": saved, "trust_endpoint": True, "max_concurrency": 4},
        compute=ray.data.ActorPoolStrategy(size=1),
        batch_size=64,
        batch_format="numpy",
        num_cpus=0.5,
        # A saved prompt holds no API key: the worker reads it from its environment.
        runtime_env={"env_vars": {"OPENAI_API_KEY": "key-from-the-environment"}},
    )
    rows = out.take_all()

    check_rows(rows, count)
    assert len(server.requests) == count
    keys = {
        value
        for request in server.requests
        for name, value in request.headers.items()
        if name.lower() == "authorization"
    }
    assert keys == {"Bearer key-from-the-environment"}


def test_a_predict_passed_as_it_is_travels_to_the_workers(
    local_ray: None, server: OpenAIServer
) -> None:
    server.handler = answer
    lm = sio.LM("openai/test", api_base=server.base_url, api_key="k", cache=False)
    predict = sio.Predict(Ticket, lm=lm, adapter=sio.ChatAdapter(fallback=None))
    count = 300

    out = predict_dataset(ray.data.from_items(tickets(count)), predict, max_concurrency=4)
    rows = out.take_all()

    check_rows(rows, count)
    assert len(server.requests) == count
