# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/signatures.md block 10

import structio as dspy

class Extract(dspy.Signature):
    """Extract structured information from text."""
    text: str = dspy.InputField()
    title: str = dspy.OutputField()                                # required: missing -> AdapterParseError
    note: str | None = dspy.OutputField(default="No note")         # missing -> "No note"
    tags: list[str] = dspy.OutputField(default_factory=list)      # missing -> []
    subtitle: str | None = dspy.OutputField()                      # missing -> None
