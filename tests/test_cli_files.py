"""The structio command and files as users save them: a byte-order mark (Excel's "CSV
UTF-8", Windows editors) read as UTF-8 by every command that reads a user's file; an empty
data file, a count of epochs, an output name and a signature class named wrong, each a
clear error."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from structio.cli import main
from tests.evaluate._rows import data_rows, prediction, write_jsonl
from tests.test_cli import run
from tests.wire.server import OpenAIServer, Reply, Request

ROOT = Path(__file__).resolve().parents[1]
TRIAGE = f"{ROOT / 'examples' / 'quickstart.py'}:Triage"
TICKETS = ROOT / "examples" / "data" / "tickets.jsonl"
EVAL_SIG = f"{ROOT / 'tests' / 'evaluate' / '_rows.py'}:Triage"
BOM = "\ufeff"
OFFLINE_RUN = ["--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1"]


def tickets() -> list[dict[str, object]]:
    lines = TICKETS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def with_bom(path: Path) -> Path:
    """A copy of ``path`` beside it, a byte-order mark before its text (``bom-<name>``)."""
    copy = path.with_name(f"bom-{path.name}")
    copy.write_text(BOM + path.read_text(encoding="utf-8"), encoding="utf-8")
    return copy


def marked(path: Path, rows: list[dict[str, object]], mark: str) -> Path:
    """``rows`` as JSON Lines, ``mark`` (a byte-order mark, or nothing) before them."""
    write_jsonl(path, rows)
    path.write_text(mark + path.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, object]], *, encoding: str = "utf-8") -> Path:
    """``rows`` as CSV; ``encoding="utf-8-sig"`` writes what Excel's "CSV UTF-8" does."""
    with path.open("w", encoding=encoding, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def answer(request: Request) -> Reply:
    return Reply(content="[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n4")


def predicted_inputs(path: Path) -> dict[int, dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["line"]: row["inputs"] for row in rows}


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_run_reads_a_data_file_with_a_byte_order_mark(
    server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    server.handler = answer
    rows = [{"ticket": row["ticket"]} for row in tickets()]
    if kind == "csv":
        data = write_csv(tmp_path / "tickets.csv", rows, encoding="utf-8-sig")
        assert data.read_bytes().startswith(BOM.encode("utf-8"))
    else:
        data = marked(tmp_path / "tickets.jsonl", rows, BOM)
    out = tmp_path / "preds.jsonl"
    argv = ["run", TRIAGE, str(data), "-o", str(out), "--model", "openai/m", "--no-cache"]
    code = main([*argv, "--api-base", server.base_url, "--api-key", "k"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert BOM not in captured.out + captured.err
    assert captured.out.startswith(f"{len(rows)} rows predicted, 0 already in")
    first = 2 if kind == "csv" else 1  # the header is line 1 of a CSV
    assert predicted_inputs(out) == {first + n: row for n, row in enumerate(rows)}


def test_finetune_and_validate_read_files_with_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = write_csv(tmp_path / "tickets.csv", tickets())
    excel = write_csv(tmp_path / "excel.csv", tickets(), encoding="utf-8-sig")
    outputs = {}
    for data in (plain, excel):
        out = tmp_path / f"{data.stem}.ft.jsonl"
        code, _, err = run(capsys, "finetune", TRIAGE, str(data), "-o", str(out))
        assert (code, err) == (0, ""), err
        outputs[data] = out.read_bytes()
    assert outputs[excel] == outputs[plain]
    ft = tmp_path / "tickets.ft.jsonl"
    bom = with_bom(ft)
    reports = [run(capsys, "validate", str(file), "--sig", TRIAGE) for file in (ft, bom)]
    assert [(code, err) for code, _, err in reports] == [(0, ""), (0, "")]
    assert f"{len(tickets())} rows" in reports[0][1]
    assert reports[1][1] == reports[0][1].replace(str(ft), str(bom))


def test_eval_reads_data_and_predictions_with_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = data_rows(4)
    cells = [{**row, "tags": json.dumps(row["tags"])} for row in rows]
    outputs = [{k: row[k] for k in ("category", "urgency", "tags")} for row in rows]
    failed = {"error": "ParseError: cut"}
    reports = {}
    for mark in ("", BOM):
        folder = tmp_path / ("bom" if mark else "plain")
        folder.mkdir()
        encoding = "utf-8-sig" if mark else "utf-8"
        jsonl = marked(folder / "data.jsonl", rows, mark)
        table = write_csv(folder / "data.csv", cells, encoding=encoding)
        # A CSV's first row is its line 2: the predictions answer the lines of their data.
        for labels, first in ((jsonl, 1), (table, 2)):
            preds = [prediction(first + n, o) for n, o in enumerate(outputs) if n != 2]
            ran = marked(folder / f"preds{first}.jsonl", preds, mark)
            marked(folder / f"preds{first}.errors.jsonl", [{**failed, "line": first + 2}], mark)
            argv = ["eval", str(labels), str(ran), "--sig", EVAL_SIG, "--json"]
            code, out, err = run(capsys, *argv)
            assert (code, err) == (0, ""), err
            reports[mark, labels.suffix] = json.loads(out)
    for suffix in (".jsonl", ".csv"):
        plain, with_mark = reports["", suffix], reports[BOM, suffix]
        assert plain["rows"] == {**plain["rows"], "total": 4, "scored": 3, "failed": 1}
        assert with_mark == plain


def test_demos_and_json_arguments_with_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demos = [{"question": "1+1?", "answer": 2}]
    inputs = {"question": "2+2?"}
    outputs = []
    for mark in ("", BOM):
        folder = tmp_path / ("bom" if mark else "plain")
        folder.mkdir()
        lines = marked(folder / "demos.jsonl", demos, mark)
        listed = folder / "demos.json"
        listed.write_text(mark + json.dumps(demos), encoding="utf-8")
        given = folder / "inputs.json"
        given.write_text(mark + json.dumps(inputs), encoding="utf-8")
        for file in (lines, listed):
            argv = ["format", "question -> answer: int", "--inputs", f"@{given}"]
            code, out, err = run(capsys, *argv, "--demos", str(file))
            assert (code, err) == (0, ""), err
            outputs.append(json.loads(out))
    assert outputs[0] == outputs[1] == outputs[2] == outputs[3]
    assert outputs[0][1]["content"] == "[[ ## question ## ]]\n1+1?"


# -- smaller command-line errors --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.jsonl", ""),
        ("blank.jsonl", "\n  \n"),
        ("marked.jsonl", BOM),
        ("header.csv", "ticket\r\n"),
        ("empty.csv", ""),
    ],
)
@pytest.mark.parametrize("batch", [False, True])
def test_run_on_a_data_file_without_rows_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, batch: bool
) -> None:
    data = tmp_path / name
    data.write_text(text, encoding="utf-8")
    out = tmp_path / "preds.jsonl"
    argv = ["run", TRIAGE, str(data), "-o", str(out), *OFFLINE_RUN]
    code, stdout, err = run(capsys, *argv, *(["--batch"] if batch else []))
    assert (code, stdout) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"structio: error: no rows in the data file {str(data)!r}: it is empty")
    assert "give the file that holds the rows to predict" in line
    assert not out.exists()  # nothing is created for a run that cannot start


@pytest.mark.parametrize("epochs", ["0", "-2"])
def test_epochs_must_be_positive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], epochs: str
) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit) as caught:
        main(["finetune", TRIAGE, str(TICKETS), "-o", str(out), "--epochs", epochs])
    assert caught.value.code == 2
    assert not out.exists()
    assert f"--epochs: must be 1 or more, not {epochs}" in capsys.readouterr().err


def test_epochs_count_in_the_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tokens = []
    for epochs in ("1", "3"):
        out = tmp_path / f"ft{epochs}.jsonl"
        argv = ["finetune", TRIAGE, str(TICKETS), "-o", str(out), "--training-price", "1"]
        code, stdout, err = run(capsys, *argv, "--epochs", epochs)
        assert (code, err) == (0, "")
        (cost,) = [line for line in stdout.splitlines() if line.startswith("estimated")]
        tokens.append(int(cost.split("(")[1].split()[0].replace(",", "")))  # (17,820 tokens
    assert tokens[1] == 3 * tokens[0] > 0


def name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def test_an_output_name_that_fits_but_its_temporary_file_does_not_names_the_users_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The name fits; the temporary file beside it (".<name>.XXXXXXXX.tmp") is 14 longer.
    limit = name_max(tmp_path)
    out = tmp_path / ("o" * (limit - 10) + ".jsonl")  # 4 characters short of the limit
    code, stdout, err = run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(out))
    assert (code, stdout) == (2, "")
    assert err == (
        f"structio: error: cannot write the finetune file {str(out)!r}: the name is too "
        "long for the temporary file written beside it first (the name and 14 "
        "characters); give a name at least 10 characters shorter. Nothing was written "
        "(a file already there is as it was)\n"
    )
    shorter = tmp_path / ("o" * (limit - 20) + ".jsonl")  # as the message says: it fits
    assert run(capsys, "finetune", TRIAGE, str(TICKETS), "-o", str(shorter))[0] == 0
    assert shorter.is_file()


SIGNATURES = """
import structio as sio
from structio import Signature


class Triage(sio.Signature):
    ticket: str = sio.InputField()
    team: str = sio.OutputField()


class Summarize(Signature):
    text: str = sio.InputField()
    summary: str = sio.OutputField()


class Helper:
    pass
"""


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Triag", "did you mean 'Triage'? Its signature classes: Summarize, Triage"),
        ("triage", "did you mean 'Triage'? Its signature classes: Summarize, Triage"),
        ("Sumarise", "did you mean 'Summarize'? Its signature classes: Summarize, Triage"),
        ("Report", "its signature classes: Summarize, Triage"),
        ("helper", "its signature classes: Summarize, Triage"),  # not a signature: not offered
    ],
)
def test_a_missing_class_lists_the_files_signatures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, said: str
) -> None:
    file = tmp_path / f"sigs_{name.lower()}.py"
    file.write_text(SIGNATURES, encoding="utf-8")
    ref = f"{file}:{name}"
    code, out, err = run(capsys, "format", ref, "--inputs", "{}")
    assert (code, out) == (2, "")
    assert err == (
        f"structio: error: {file} has no {name!r} (looking for signature {ref!r}); {said}\n"
    )


def test_a_missing_class_in_a_file_without_signatures_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "no_sigs.py"
    file.write_text("import structio as sio\n\nclass Triage:\n    pass\n", encoding="utf-8")
    code, _, err = run(capsys, "format", f"{file}:Triag", "--inputs", "{}")
    assert code == 2
    assert err.rstrip().endswith("; it holds no signature class (a subclass of structio.Signature)")


def test_saved_prompts_and_templates_with_a_byte_order_mark_read_as_written(
    tmp_path: Path,
) -> None:
    import structio as sio

    predict = sio.Predict("question -> answer: int", max_retries=1)
    plain = tmp_path / "plain.json"
    predict.save(plain)
    marked = tmp_path / "marked.json"
    marked.write_text(plain.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert sio.Predict.load(marked).to_dict() == sio.Predict.load(plain).to_dict()

    template = tmp_path / "hello.yaml.j2"
    template.write_text(
        '- name: hi\n  role: user\n  content: "Hello {{ who }}"\n', encoding="utf-8-sig"
    )
    parts = sio.Template.from_file(template).render({"who": "Ada"})
    assert [m["content"] for m in parts.messages] == ["Hello Ada"]
