# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/language_models.md block 0
#   docs/docs/diving-deeper/tools.md block 0
#   docs/docs/diving-deeper/tools.md block 2
#   docs/docs/diving-deeper/tools.md block 5
# (`import dspy` added before block 0 of language_models.md, the setup the pages assume)

import structio as dspy
# Authenticate via `OPENAI_API_KEY` env: import os; os.environ['OPENAI_API_KEY'] = 'here'
lm = dspy.LM('openai/gpt-4o-mini')
dspy.configure(lm=lm)

def search(query: str, limit: int = 5) -> list[str]:
    """Search the knowledge base for relevant passages."""
    return index.search(query, limit=limit)

search_tool = dspy.Tool(
    search,
    name="search_docs",
    desc="Search the product documentation.",
)

calls = dspy.ToolCalls.from_dict_list([
    {"name": "search", "args": {"query": "DSPy tools"}},
])

# --- check (not in the docs): the tool is named and described as given, the call parsed ---
assert search_tool.name == "search_docs"
assert search_tool.desc == "Search the product documentation."
assert search_tool.args["limit"]["default"] == 5
assert calls.tool_calls[0].name == "search" and calls.tool_calls[0].args == {"query": "DSPy tools"}
