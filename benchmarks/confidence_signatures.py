"""The two sentiment signatures `confidence_real.sh` asks the real model, as `file.py:Name`."""

from __future__ import annotations

from typing import Literal

import structio as sio


class Sentiment(sio.Signature):
    """Classify the sentiment of a product review."""

    review: str = sio.InputField()
    sentiment: Literal["positive", "negative"] = sio.OutputField()


class Sentiment3(sio.Signature):
    """Classify the sentiment of a product review."""

    review: str = sio.InputField()
    sentiment: Literal["positive", "negative", "neutral"] = sio.OutputField()
