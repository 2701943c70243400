"""Write dspy_infer_prefix.json: field names and the prefixes DSPy 3.4.1 infers for them.

Run with the project's Python, pointing at a Python that has DSPy 3.4.1 installed:

    .venv/bin/python tests/signatures/make_dspy_prefix_pairs.py PYTHON_WITH_DSPY

The names are a hand-picked list (the spellings DSPy's own docs and tests use, acronyms,
digits, underscores, non-ASCII letters and digits) and identifiers drawn by hypothesis with
a fixed seed; DSPy's ``infer_prefix`` gives each one's prefix, in a subprocess (DSPy is not
a dependency of structio).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

OUT = Path(__file__).with_name("dspy_infer_prefix.json")

NAMES = [
    "question",
    "answer",
    "some_name",
    "someName",
    "camelCaseText",
    "snake_case_text",
    "text2number",
    "2text",
    "HTMLParser",
    "parseHTML",
    "parseHTMLString",
    "getHTTPResponseCode",
    "URL",
    "url",
    "userID",
    "userId",
    "ID",
    "a",
    "A",
    "aB",
    "Ab",
    "ABc",
    "ABcDe",
    "aBcDEf",
    "_private",
    "__dunder__",
    "trailing_",
    "double__under",
    "x1y2z3",
    "X1Y2",
    "v2_API_key",
    "gpt4oMini",
    "sql_query",
    "SQLQuery",
    "mySQLDatabase",
    "ÉtéCamel",
    "straße",
    "ǅungla",
    "ΣigmaValue",
    "value٣here",
    "\uff41\uff42\uff43\uff24\uff45\uff46",  # fullwidth abcDef
    "tab\tname",
    "line\nBreak",
    "x\nYz",
    "has space",
    "",
    "_",
    "123",
    "ALLCAPS_words_Mixed",
    "context",
    "reasoning",
    "rationale",
    "user_query_text",
    "numberOf_apples42",
]

IDENTIFIER_ALPHABET = st.sampled_from(
    # Non-ASCII letters and digits: fullwidth A and b, dotless i, dotted I.
    [*"abcxyzABCXYZ0123456789____", "é", "ß", "Σ", "ǅ", "٣", "\uff21", "\uff42", "\u0131", "İ"]
)


def drawn_names() -> list[str]:
    """Identifier-like names drawn by hypothesis, the same on every run."""
    names: list[str] = []

    @settings(
        max_examples=3000,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        st.one_of(
            st.text(IDENTIFIER_ALPHABET, min_size=1, max_size=24),
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
            st.text(min_size=0, max_size=12),
        )
    )
    def collect(name: str) -> None:
        names.append(name)

    collect()
    return names


def main(dspy_python: str) -> None:
    names = list(dict.fromkeys([*NAMES, *drawn_names()]))
    script = (
        "import json, sys\n"
        "from dspy.signatures.signature import infer_prefix\n"
        "names = json.load(sys.stdin)\n"
        "json.dump([infer_prefix(n) for n in names], sys.stdout)\n"
    )
    done = subprocess.run(
        [dspy_python, "-c", script],
        input=json.dumps(names),
        capture_output=True,
        text=True,
        check=True,
    )
    prefixes = json.loads(done.stdout)
    version = subprocess.run(
        [dspy_python, "-c", "import dspy; print(dspy.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # One pair a line, so that a change to the file reads as a change to names.
    pairs = ",\n".join(
        json.dumps([n, p], ensure_ascii=False) for n, p in zip(names, prefixes, strict=True)
    )
    source = json.dumps(f"dspy {version}: dspy.signatures.signature.infer_prefix")
    OUT.write_text(f'{{"source": {source},\n"pairs": [\n{pairs}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(names)} pairs to {OUT}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_dspy_prefix_pairs.py PYTHON_WITH_DSPY")
    main(sys.argv[1])
