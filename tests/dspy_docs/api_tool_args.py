# ruff: noqa
# fmt: off
# From DSPy 3.4's API reference (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy` (and `from dspy import` to `from structio import`):
#   docs/docs/api/primitives/Tool.md, the example in the docstring it renders (dspy/adapters/types/tool.py, example 0)

import structio as dspy

# --- glue (the docstring assumes this import) ---
from structio import Tool
# --- end of glue ---
def foo(x: int, y: str = "hello"):
    return str(x) + y

tool = Tool(foo)
print(tool.args)
# Expected output: {'x': {'type': 'integer'}, 'y': {'type': 'string', 'default': 'hello'}}
