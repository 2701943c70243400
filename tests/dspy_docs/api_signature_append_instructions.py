# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/signatures/Signature.md, the example in the docstring it renders (dspy/signatures/signature.py, example 1)

import structio as dspy

MySig = dspy.Signature("input_text -> output_text", "Translate to French.")
NewSig = MySig.append_instructions("Pass additional context.")
assert NewSig is not MySig
assert "Translate to French." in NewSig.instructions
assert "Pass additional context." in NewSig.instructions
