# ruff: noqa
# fmt: off
# From DSPy 3.4 documentation (github.com/stanfordnlp/dspy), with `import dspy` changed to
# `import structio as dspy`; code blocks joined in the order shown:
#   docs/docs/learn/programming/language_models.md block 0
#   docs/docs/cheatsheet.md block 15
#   docs/docs/cheatsheet.md block 16
# (`import dspy` added before block 0 of language_models.md, the setup the pages assume)

import structio as dspy
# Authenticate via `OPENAI_API_KEY` env: import os; os.environ['OPENAI_API_KEY'] = 'here'
lm = dspy.LM('openai/gpt-4o-mini')
dspy.configure(lm=lm)

# --- glue (not in the docs): a program of two predictors, its demos assigned where the
# cheatsheet compiles it with an optimizer ---
class YourProgramClass(dspy.Module):
    def __init__(self):
        super().__init__()
        self.draft = dspy.ChainOfThought("question -> answer")
        self.check = dspy.Predict("question, answer -> verdict: bool")

    def forward(self, question):
        answer = self.draft(question=question).answer
        return dspy.Prediction(answer=answer, verdict=self.check(question=question, answer=answer).verdict)

your_dspy_program_compiledx2 = YourProgramClass()
# (each module's own predictor: a ChainOfThought holds one in DSPy and is one in structio)
your_dspy_program_compiledx2.draft.predictors()[0].demos = [dspy.Example(question="1+1?", reasoning="add", answer="2")]
your_dspy_program_compiledx2.check.predictors()[0].demos = [dspy.Example(question="1+1?", answer="2", verdict=True)]
# --- end of glue ---

save_path = './v1.json'
your_dspy_program_compiledx2.save(save_path)

loaded_program = YourProgramClass()
loaded_program.load(path=save_path)

# --- check (not in the docs): the loaded program has the saved demos and runs ---
saved, loaded = your_dspy_program_compiledx2.draft.predictors()[0], loaded_program.draft.predictors()[0]
assert [dict(d) for d in loaded.demos] == [dict(d) for d in saved.demos]
assert len(loaded_program.check.predictors()[0].demos) == 1
print(loaded_program(question="What is the capital of France?"))
