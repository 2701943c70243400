"""The structio command and files as users save them: a byte-order mark (Excel's "CSV
UTF-8", Windows editors) read as UTF-8 by every command that reads a user's file."""

from __future__ import annotations

import csv
import json
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
