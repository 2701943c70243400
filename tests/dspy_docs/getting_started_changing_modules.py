# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/language_models.md block 0
#   docs/docs/getting-started/class-based-signatures.md block 2
#   docs/docs/getting-started/changing-modules.md block 0
# (`import dspy` added before block 0 of language_models.md, the setup the pages assume)

import structio as dspy
# Authenticate via `OPENAI_API_KEY` env: import os; os.environ['OPENAI_API_KEY'] = 'here'
lm = dspy.LM('openai/gpt-4o-mini')
dspy.configure(lm=lm)

from typing import Literal

Season = Literal[
    "spring", "summer", "autumn", "winter",
]

class HaikuBot(dspy.Signature):
    """
    Write a classical haiku given the provided inputs.
    """
    location: str = dspy.InputField()
    mood: str = dspy.InputField()
    season: Season = dspy.InputField()
    haiku: str = dspy.OutputField()

haiku_bot = dspy.Predict(HaikuBot)
result = haiku_bot(location="Bodega Bay", mood="mysterious", season="autumn")
print(result.haiku)

reasoning_haiku_bot = dspy.ChainOfThought(HaikuBot)
result = reasoning_haiku_bot(location="Bodega Bay", mood="mysterious", season="autumn")
print(result.haiku)
