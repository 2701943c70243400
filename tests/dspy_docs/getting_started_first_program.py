# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/language_models.md block 0
#   docs/docs/getting-started/first-program.md block 0
# (`import dspy` added before block 0 of language_models.md, the setup the pages assume)

import structio as dspy
# Authenticate via `OPENAI_API_KEY` env: import os; os.environ['OPENAI_API_KEY'] = 'here'
lm = dspy.LM('openai/gpt-4o-mini')
dspy.configure(lm=lm)

haiku_signature = "subject -> haiku"
haiku_generator = dspy.Predict(haiku_signature)
result = haiku_generator(subject="computer science")
print(result.haiku)
