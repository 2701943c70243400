# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/modules/Parallel.md, the example in the docstring it renders (dspy/predict/parallel.py, example 0)

import structio as dspy
from structio import Parallel
lm = dspy.LM("openai/gpt-4o-mini")
dspy.configure(lm=lm)

examples = [
    {"question": "What is the capital of Spain?"},
    {"question": "What is 3 * 4?"},
    {"question": "Who wrote Hamlet?"},
]

module = dspy.Predict("question->answer")
exec_pairs = [(module, example) for example in examples]
parallel = Parallel(num_threads=3, disable_progress_bar=False)
results = parallel(exec_pairs)
for i, result in enumerate(results):
    print(f"Result {i+1}: {result.answer}")

# Expected Output:
# Result 1: Madrid
# Result 2: 12
# Result 3: William Shakespeare
