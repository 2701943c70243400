# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/signatures/Signature.md, the example in the docstring it renders (dspy/signatures/signature.py, example 2)

import structio as dspy

class MySig(dspy.Signature):
    input_text: str = dspy.InputField(desc="Input sentence")
    output_text: str = dspy.OutputField(desc="Translated sentence")

NewSig = MySig.prepend("context", dspy.InputField(desc="Context for translation"))
print(list(NewSig.fields.keys()))
