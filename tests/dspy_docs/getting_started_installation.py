# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/getting-started/installation.md block 0
#   docs/docs/getting-started/installation.md block 1

import structio as dspy

# Pass the key explicitly...
lm = dspy.LM("openai/gpt-5-nano", api_key="YOUR_OPENAI_API_KEY")

dspy.configure(lm=lm)

messages = [
    {
        "role": "system",
        "content": "You are a helpful assistant"
    },
    {
        "role": "user",
        "content": "What is the capital of France?"
    }
]

print(lm(messages = messages))
