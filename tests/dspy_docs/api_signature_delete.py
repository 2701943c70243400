# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/signatures/Signature.md, the example in the docstring it renders (dspy/signatures/signature.py, example 4)

import structio as dspy

class MySig(dspy.Signature):
    input_text: str = dspy.InputField(desc="Input sentence")
    temp_field: str = dspy.InputField(desc="Temporary debug field")
    output_text: str = dspy.OutputField(desc="Translated sentence")

NewSig = MySig.delete("temp_field")
print(list(NewSig.fields.keys()))

# No error is raised if the field is not present
Unchanged = NewSig.delete("nonexistent")
print(list(Unchanged.fields.keys()))
