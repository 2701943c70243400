"""The package as a user meets it: imports, public names, typing marker, examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import structio
import structio.adapters
import structio.exceptions
import structio.signatures

ROOT = Path(__file__).resolve().parents[1]

# Names public in a subpackage that are deliberately not re-exported at the top level.
SUBPACKAGE_ONLY = {
    "MISSING",  # a sentinel, used as structio.signatures.MISSING
    "Constraints",  # a TypedDict for type checkers
    "SignatureMeta",  # the metaclass; users subclass Signature
    "Message",  # type aliases for annotations
    "SignatureLike",
    # Rarely touched: public in their subpackages, importable from structio (see _MOVED).
    "Reading",
    "ModelCapabilities",
    "infer_prefix",
    "SignatureField",
}


def run_python(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return result.stdout


def test_import_leaves_what_only_some_programs_need_for_first_use() -> None:
    # Test doubles, the transport registry, the template sandbox and batching load when
    # first used: `import structio` pays for what every program needs, no more.
    lazy = [
        "structio.testing",
        "structio.lm.mock",
        "structio.lm.transport",
        "structio.rendering.sandbox",
        "structio.rendering.includes",
        "structio.predict.batching",
    ]
    code = f"import json, sys, structio\nprint(json.dumps([m in sys.modules for m in {lazy!r}]))"
    assert json.loads(run_python(code)) == [False] * len(lazy)
    code = (
        "import json, sys, structio as sio\n"
        "sio.FakeLM([]); sio.LM('openai/x'); sio.Template('{{ x }}')\n"
        "from structio.lm import MockTransport\n"
        f"print(json.dumps([m in sys.modules for m in {lazy[:4]!r}]))"
    )
    assert json.loads(run_python(code)) == [True] * 4


def test_import_does_not_load_litellm_pydantic_or_json_repair() -> None:
    # logging too: the `structio` logger imports it at its first record (benchmarks/README).
    code = (
        "import json, sys, structio\n"
        "heavy = ['litellm', 'pydantic', 'pydantic_core', 'json_repair', 'tiktoken', 'httpx',"
        " 'logging']\n"
        "print(json.dumps({m: m in sys.modules for m in heavy}))"
    )
    loaded = json.loads(run_python(code))
    assert loaded == dict.fromkeys(
        ["litellm", "pydantic", "pydantic_core", "json_repair", "tiktoken", "httpx", "logging"],
        False,
    )


def test_formatting_and_parsing_do_not_load_litellm() -> None:
    code = (
        "import sys, structio as sio\n"
        "sio.ChatAdapter().format('q -> a: list[int]', inputs={'q': 'x'})\n"
        "sio.JSONAdapter().parse('q -> a: list[int]', '{\"a\": [1]}')\n"
        "print('litellm' in sys.modules)"
    )
    assert run_python(code).strip() == "False"


def test_all_is_sorted_and_resolves() -> None:
    assert structio.__all__ == sorted(structio.__all__)
    assert len(set(structio.__all__)) == len(structio.__all__)
    for name in structio.__all__:
        assert getattr(structio, name) is not None, name


def test_all_is_complete() -> None:
    exported = set(structio.__all__)
    for module in (structio.adapters, structio.signatures, structio.exceptions):
        missing = set(module.__all__) - exported - SUBPACKAGE_ONLY
        assert not missing, f"{module.__name__} exports {missing} but structio does not"
    public = {
        name
        for name, value in vars(structio).items()
        if not name.startswith("_") and not isinstance(value, type(structio))
    }
    # The tool types load pydantic, so they are imported when first used.
    assert public | set(structio._LAZY) == exported


def test_all_stays_small_and_moved_names_still_import() -> None:
    # 58 before the last turn, 99 at its end; 73 with SaveError, 74 with
    # StructuredOutputRefusedError (every error class is here); 78 with the stream events
    # FieldItem, ReasoningDelta and Failed and Stream.items' RereadError; 79 with
    # `evaluate`, the one call that scores a Predict on labelled examples; 80 with
    # UnknownSettingError; 83 with DSPy's asyncify, streamify and configure_cache; 85 with
    # DSPy's Module and Parallel.
    assert len(structio.__all__) <= 85
    for name, (module, attribute) in structio._MOVED.items():
        assert name not in structio.__all__
        home = __import__(module, fromlist=[attribute])
        assert getattr(structio, name) is getattr(home, attribute), name


def test_issue_names_are_exported() -> None:
    required = {
        "Signature",
        "InputField",
        "OutputField",
        "make_signature",
        "History",
        "ChatAdapter",
        "JSONAdapter",
        "Adapter",
        "StructioError",
        "SignatureError",
        "FormatError",
        "ParseError",
    }
    assert required <= set(structio.__all__)


def test_py_typed_marker_ships() -> None:
    assert (Path(structio.__file__).parent / "py.typed").is_file()


def test_quickstart_example_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "{'category': 'billing', 'urgency': 4}" in result.stdout
    assert "[[ ## ticket ## ]]\nI was charged twice this month." in result.stdout
    assert "constraint le=5" in result.stdout


def test_predict_example_runs_offline() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "predict_offline.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "billing 4 (read via chat)" in result.stdout
    assert "bug 5 (read via json)" in result.stdout
    assert "Response (finish reason: stop):" in result.stdout


def test_streaming_example_runs_offline() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "streaming.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    out = result.stdout
    assert "  reasoning += 'A'" in out  # text in pieces, before the value
    assert out.index("reasoning += ") < out.index("reasoning = 'A week") < out.index("answer = 21")
    assert "prediction: Prediction(" in out
    assert "(route chat)" in out
    assert out.count("answer: 21") == 2
    assert "It is a short poem about the sea." in out


def test_the_docs_draw_the_same_error_tree_as_the_code() -> None:
    def tree(text: str) -> list[str]:
        """The drawing: from the `StructioError` line to the first line that is not part of it."""
        lines = text[text.index("StructioError\n") :].splitlines()
        drawing = [lines[0]]
        for line in lines[1:]:
            if not line.strip() or line.lstrip()[0] not in "│├└":
                break
            drawing.append(line.strip())
        return drawing

    docs = tree((ROOT / "docs" / "how-to" / "errors.md").read_text(encoding="utf-8"))
    code = tree(structio.exceptions.__doc__ or "")
    assert docs == code
    drawn = {line.lstrip("│├└─ ").split()[0] for line in code}
    assert drawn == set(structio.exceptions.__all__)


def test_parse_benchmark_runs_without_dspy() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "parse_corpus.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [
        line.split() for line in result.stdout.splitlines() if line.startswith(("chat ", "json "))
    ]
    structio_rows = [row for row in rows if row[1] == "structio"]
    assert len(structio_rows) == 2
    for row in structio_rows:
        recovered, rejected, wrong, refused, hallucinated = map(int, row[3:8])
        assert (rejected, wrong, hallucinated) == (0, 0, 0)
        assert recovered + refused == int(row[2])


def test_readme_run_it_command_works_and_ci_runs_it(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Run it") :]
    command = section.split("```bash\n", 1)[1].split("\n```", 1)[0]
    shown = section.split("```\n\n```\n", 1)[1].split("\n```", 1)[0]  # the output block
    assert command.startswith("structio finetune ")
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    argv = command.split()[1:]
    # The same command, run from the repository root, writing into a temporary folder.
    out = tmp_path / argv[argv.index("-o") + 1]
    argv[argv.index("-o") + 1] = str(out)
    done = subprocess.run(
        [sys.executable, "-m", "structio", *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.strip() == shown.replace("tickets.finetune.jsonl", str(out))
    assert len(out.read_text(encoding="utf-8").splitlines()) == 20


def test_perf_benchmark_runs_without_dspy() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "perf.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("| (") and (".format" in line or ".parse" in line)
    ]
    assert len(rows) == 8  # (a) and (b): format and parse with both adapters
    assert all(row.endswith("| — | — |") for row in rows)  # no DSPy column without DSPy
    assert "`import structio` loads litellm: False" in result.stdout


def test_public_classes_say_they_come_from_structio() -> None:
    import pickle

    import structio as sio

    classes = [getattr(sio, name) for name in sio.__all__ if isinstance(getattr(sio, name), type)]
    assert len(classes) > 40
    assert [c.__name__ for c in classes if c.__module__ != "structio"] == []
    error = pickle.loads(pickle.dumps(sio.ConfigurationError("x")))  # noqa: S301 - our own bytes
    assert type(error) is sio.ConfigurationError


def test_structio_prompt_is_the_decorator_and_nothing_else() -> None:
    import importlib.util

    import structio as sio

    assert callable(sio.prompt)
    assert sio.prompt.__module__ == "structio.functions"
    assert importlib.util.find_spec("structio.prompt") is None  # no module of that name
    assert sio.Prompt.__name__ == "Prompt"


def test_dspy_names_are_exported_and_stay_light() -> None:
    dspy_names = {"ChainOfThought", "Example", "Predict", "Prediction", "PredictionMeta"}
    assert dspy_names <= set(structio.__all__)
    code = (
        "import json, sys, structio as sio\n"
        "ex = sio.Example(q='x').with_inputs('q')\n"
        "print(json.dumps([sio.settings.lm is None, 'pydantic' in sys.modules]))"
    )
    assert json.loads(run_python(code)) == [True, False]
