"""`Predict`: a signature, demos, an adapter and an LM, called like a function.

The predictor itself (`structio.predict.predictor`), what it returns
(`structio.predict.prediction`), prompts on disk (`structio.predict.saving`) and many calls at
once (`structio.predict.batching`).
"""

from __future__ import annotations

from structio.predict.chain_of_thought import ChainOfThought
from structio.predict.module import Module, Parallel
from structio.predict.prediction import Completions, Prediction, PredictionMeta
from structio.predict.predictor import Predict, check_outputs
from structio.predict.saving import FORMAT_VERSION, check_name, read_saved

__all__ = [
    "FORMAT_VERSION",
    "ChainOfThought",
    "Completions",
    "Module",
    "Parallel",
    "Predict",
    "Prediction",
    "PredictionMeta",
    "check_name",
    "check_outputs",
    "read_saved",
]
