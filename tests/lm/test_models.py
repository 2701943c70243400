"""Model metadata read from litellm's bundled map without importing litellm, checked against
litellm's own answers (litellm is the oracle here, imported by the test only)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import structio as sio
from structio.lm._litellm import get_litellm, model_capabilities
from structio.lm.models import cost_of, model_entry, model_info

MODELS = [
    "gpt-4o-mini",
    "openai/gpt-4o",
    "gpt-4.1-nano",
    "azure/gpt-4o",
    "deepseek/deepseek-chat",
    "groq/openai/gpt-oss-20b",
    "fireworks_ai/accounts/fireworks/models/llama-v3p1-405b-instruct",
]


@pytest.mark.parametrize("model", MODELS)
def test_the_context_window_is_litellms(model: str) -> None:
    info = model_info(model)
    assert info is not None, f"{model} is not in litellm's map any more: pick another"
    assert info.max_input_tokens == get_litellm().get_model_info(model)["max_input_tokens"]


# Models whose entry states every price litellm uses (litellm applies some providers' cache
# discounts that their entry does not state, e.g. Fireworks': those are priced at the
# entry's full input rate here).
@pytest.mark.parametrize("model", MODELS[:-1])
def test_the_price_of_a_usage_is_litellms(model: str) -> None:
    usage = sio.Usage(prompt_tokens=1_000, completion_tokens=200, cached_tokens=300)
    prompt, completion = get_litellm().cost_per_token(
        model=model,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cache_read_input_tokens=usage.cached_tokens,
    )
    assert cost_of(model, usage) == pytest.approx(prompt + completion, rel=1e-9)


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-3.5-turbo-0125"])
def test_schema_support_is_litellms(model: str) -> None:
    info = model_info(model)
    assert info is not None
    assert info.supports_response_schema == model_capabilities(model).json_schema


def test_unknown_models_have_no_metadata_and_no_price() -> None:
    assert model_entry("openai/not-a-model-anyone-ships") is None
    assert model_info("openai/not-a-model-anyone-ships") is None
    assert cost_of("openai/not-a-model-anyone-ships", sio.Usage(prompt_tokens=5)) is None


def test_reading_the_map_does_not_import_litellm() -> None:
    script = (
        "import sys\n"
        "from structio.lm.models import model_info\n"
        "print(model_info('openai/gpt-4o-mini').max_input_tokens, 'litellm' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["128000", "False"]
