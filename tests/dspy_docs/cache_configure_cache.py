# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/tutorials/cache/index.md block 5

import structio as dspy

dspy.configure_cache(
    enable_disk_cache=False,
    enable_memory_cache=False,
)
