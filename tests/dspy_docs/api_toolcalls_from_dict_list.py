# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/primitives/ToolCalls.md, the example in the docstring it renders (dspy/adapters/types/tool.py, example 2)

import structio as dspy

# --- glue (the docstring assumes this import) ---
from structio import ToolCalls
# --- end of glue ---
tool_calls_dict = [
    {"name": "search", "args": {"query": "hello"}},
    {"name": "translate", "args": {"text": "world"}}
]
tool_calls = ToolCalls.from_dict_list(tool_calls_dict)
