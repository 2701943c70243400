# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/language_models.md block 0
#   docs/docs/getting-started/expanding-signatures.md block 0
#   docs/docs/getting-started/expanding-signatures.md block 1
#   docs/docs/getting-started/expanding-signatures.md block 2
#   docs/docs/getting-started/expanding-signatures.md block 3
# (`import dspy` added before block 0 of language_models.md, the setup the pages assume)

import structio as dspy
# Authenticate via `OPENAI_API_KEY` env: import os; os.environ['OPENAI_API_KEY'] = 'here'
lm = dspy.LM('openai/gpt-4o-mini')
dspy.configure(lm=lm)

haiku_bot = dspy.Predict("location, mood -> haiku")
result = haiku_bot(location="a quiet library", mood="mysterious")
print(result.haiku)

haiku_bot = dspy.Predict("location, mood -> haiku, haiku_title")
result = haiku_bot(location="a quiet library", mood="mysterious")
print(result.haiku_title)
print("- - -")
print(result.haiku)

haiku_bot = dspy.Predict("a, b -> c")
result = haiku_bot(a="a quiet library", b="mysterious")
print(result.c)

haiku_bot = dspy.Predict("location, mood, contains_pun: bool -> haiku")
result = haiku_bot(location="a quiet library", mood="mysterious", contains_pun=True)
print(result.haiku)
