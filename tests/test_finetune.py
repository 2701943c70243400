"""Finetune JSONL: exact inference prompts plus targets, checked rows, atomic output."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

import structio as sio
from structio import finetune
from structio.lm import models


class Triage(sio.Signature):
    """Route a support ticket."""

    ticket: str = sio.InputField()
    category: Literal["billing", "bug", "other"] = sio.OutputField()
    urgency: int = sio.OutputField(ge=1, le=5)
    tags: list[str] = sio.OutputField(default=[])


ROWS = [
    {"ticket": "I was charged twice.", "category": "billing", "urgency": 4, "tags": ["card"]},
    {"ticket": "The app crashes.", "category": "bug", "urgency": 5},
    {"ticket": "Dark mode?", "category": "other", "urgency": 1},
]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("adapter", [sio.ChatAdapter(), sio.JSONAdapter()])
def test_each_line_is_the_inference_prompt_plus_the_target(
    tmp_path: Path, adapter: sio.Adapter
) -> None:
    demo = {"ticket": "Refund?", "category": "billing", "urgency": 2}
    out = tmp_path / "train.jsonl"
    summary = finetune.write_jsonl(Triage, ROWS, out, adapter=adapter, demos=[demo])
    assert summary.written == 3
    records = lines(out)
    for row, record in zip(ROWS, records, strict=True):
        inputs = {"ticket": row["ticket"]}
        outputs = {k: v for k, v in row.items() if k != "ticket"}
        assert record == adapter.format_finetune_data(Triage, [demo], inputs, outputs)
        assert record["messages"][:-1] == adapter.format(Triage, [demo], inputs)
        assert list(record) == ["messages"]
        assert [m["role"] for m in record["messages"]][-1] == "assistant"
        assert all(set(m) == {"role", "content"} for m in record["messages"])
    assert finetune.validate(out, signature=Triage, adapter=adapter).problem_count == 0


def test_jsonl_and_csv_files_give_the_same_output(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n", encoding="utf-8")
    table = tmp_path / "rows.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ticket", "category", "urgency", "tags"])
        for r in ROWS:
            tags = json.dumps(r["tags"]) if "tags" in r else ""
            writer.writerow([r["ticket"], r["category"], str(r["urgency"]), tags])
    finetune.write_jsonl(Triage, ROWS, tmp_path / "a.jsonl")
    finetune.write_jsonl(Triage, source, tmp_path / "b.jsonl")
    finetune.write_jsonl(Triage, str(table), tmp_path / "c.jsonl")
    a = (tmp_path / "a.jsonl").read_bytes()
    assert a == (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()


BAD = [
    {"ticket": "a", "category": "sales", "urgency": 3},  # 1: not one of the categories
    {"ticket": "b", "category": "bug", "urgency": 9},  # 2: breaks le=5
    {"ticket": "c", "category": "bug", "urgency": 2},  # 3: fine
    {"ticket": "c", "category": "bug", "urgency": 2},  # 4: duplicate of 3
    {"tickt": "d", "category": "bug", "urgency": 2},  # 5: unknown field
    {"ticket": "e", "urgency": 2},  # 6: a required output is missing
    "not a dict",  # 7
]


def test_problems_name_the_row_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    out.write_text("the previous file\n", encoding="utf-8")
    with pytest.raises(sio.DataError, match=r"6 of 7 examples have problems") as caught:
        finetune.write_jsonl(Triage, BAD, out)
    assert out.read_text(encoding="utf-8") == "the previous file\n"
    assert [p.name for p in tmp_path.iterdir()] == ["train.jsonl"]  # no temporary file left
    found = {p.line: str(p) for p in caught.value.problems}
    assert sorted(found) == [1, 2, 4, 5, 6, 7]
    assert "example 1: field `category`: 'sales' is not a valid value" in found[1]
    assert "constraint le=5" in found[2]
    assert found[4] == "example 4: duplicate of example 3; remove one"
    assert "did you mean `ticket`" in found[5]
    assert "category" in found[6]
    assert "must be a dict" in found[7]
    assert caught.value.problems[1].field == "urgency"


def test_skip_invalid_writes_the_good_rows_and_reports_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    summary = finetune.write_jsonl(Triage, BAD, out, skip_invalid=True)
    assert (summary.rows, summary.written, summary.skipped) == (7, 1, 6)
    assert len(lines(out)) == 1
    report = summary.report()
    assert report.startswith("7 rows read, 1 written, 6 skipped -> ")
    assert "6 problem(s):\n  example 1: field `category`" in report


def test_jsonl_line_numbers_count_blank_and_broken_lines(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(
        json.dumps(ROWS[0]) + "\n\n{broken\n[1, 2]\n" + json.dumps(ROWS[1]) + "\n",
        encoding="utf-8",
    )
    summary = finetune.write_jsonl(Triage, source, tmp_path / "o.jsonl", skip_invalid=True)
    assert [str(p) for p in summary.problems] == [
        "line 3: not valid JSON (Expecting property name enclosed in double quotes, column 2)",
        "line 4: a line must hold a JSON object, not list",
    ]
    assert summary.written == 2


def test_an_interrupted_run_leaves_no_file(tmp_path: Path) -> None:
    def examples() -> Iterator[dict[str, Any]]:
        yield ROWS[0]
        yield ROWS[1]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        finetune.write_jsonl(Triage, examples(), tmp_path / "train.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_token_statistics_limit_and_cost(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    summary = finetune.write_jsonl(Triage, ROWS, out, training_price=2.0, epochs=3)
    counts = sorted(
        finetune.count_tokens(r["messages"], sio.Prompt([]).tokenizer) for r in lines(out)
    )
    assert summary.tokens == {
        "min": counts[0],
        "median": counts[1],
        "max": counts[2],
        "total": sum(counts),
    }
    assert summary.cost == pytest.approx(sum(counts) * 3 * 2.0 / 1e6)
    limited = finetune.write_jsonl(
        Triage, ROWS, tmp_path / "u.jsonl", max_tokens=counts[1], skip_invalid=True
    )
    assert limited.written == 2
    assert f"over the limit of {counts[1]:,}" in str(limited.problems[0])


def test_the_models_limit_comes_from_litellm(tmp_path: Path) -> None:
    summary = finetune.write_jsonl(Triage, ROWS, tmp_path / "t.jsonl", model="gpt-4o-mini")
    assert summary.token_limit == 128_000
    assert "no training price for gpt-4o-mini" in summary.cost_note


def test_with_no_model_rows_are_checked_against_the_largest_known_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    largest = models.largest_context_window()
    assert largest is not None
    assert largest[0] >= 1_000_000
    summary = finetune.write_jsonl(Triage, ROWS, tmp_path / "t.jsonl")
    assert summary.token_limit == largest[0]
    assert "note:" not in summary.report()  # short rows: nothing to say
    # A row longer than any model takes is a problem, as over any limit.
    limit = summary.tokens["max"] + 10
    monkeypatch.setattr(models, "largest_context_window", lambda: (limit, "tiny-model"))
    long = {**ROWS[0], "ticket": "word " * 200}
    small = finetune.write_jsonl(Triage, [*ROWS, long], tmp_path / "s.jsonl", skip_invalid=True)
    assert small.written == 3
    assert small.skipped == 1
    assert f"over the limit of {limit:,}" in str(small.problems[0])
    # Naming the limit or the model says otherwise.
    told = finetune.write_jsonl(Triage, [long], tmp_path / "m.jsonl", max_tokens=10_000)
    assert told.written == 1
    assert told.largest_known is None


def test_a_row_over_most_models_limit_is_noted_when_no_model_is_named(tmp_path: Path) -> None:
    long = {**ROWS[0], "ticket": "word " * 140_000}
    summary = finetune.write_jsonl(Triage, [long], tmp_path / "t.jsonl")
    assert summary.written == 1
    assert summary.tokens["max"] > 131_072
    assert "note: no model named" in summary.report()
    assert "give --model" in summary.report()
    named = finetune.write_jsonl(
        Triage, [long], tmp_path / "u.jsonl", model="gpt-4.1-mini", skip_invalid=True
    )
    assert "note:" not in named.report()


def test_no_examples_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(sio.DataError, match="no examples"):
        finetune.write_jsonl(Triage, [], tmp_path / "t.jsonl")
    with pytest.raises(sio.ConfigurationError, match=r"use a \.jsonl file"):
        finetune.write_jsonl(Triage, str(tmp_path / "rows.txt"), tmp_path / "t.jsonl")
    with pytest.raises(sio.ConfigurationError, match="no such file"):
        finetune.write_jsonl(Triage, str(tmp_path / "rows.csv"), tmp_path / "t.jsonl")


def test_a_value_that_does_not_read_back_is_a_problem(tmp_path: Path) -> None:
    sig = sio.make_signature("q -> a: str")
    # A str answer that ends with a section marker would not read back as written.
    bad = [{"q": "x", "a": "ok\n\n[[ ## completed ## ]]\ntrailing"}]
    summary = finetune.write_jsonl(sig, bad, tmp_path / "t.jsonl", skip_invalid=True)
    assert summary.written == 0
    assert "does not read back" in str(summary.problems[0])


def messages(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in pairs]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[]", 'a JSON object with "messages"'),
        (json.dumps({"messages": [], "x": 1}), "unknown key(s) ['x']"),
        (json.dumps({"messages": []}), "non-empty list"),
        (json.dumps({"messages": messages(("user", "hi"))}), "last message must be the assistant"),
        (
            json.dumps({"messages": messages(("assistant", "a"), ("user", "b"))}),
            "message 0 is assistant, but user comes next",
        ),
        (
            json.dumps({"messages": messages(("user", "a"), ("system", "s"), ("assistant", "b"))}),
            "a system message may only come first",
        ),
        (json.dumps({"messages": messages(("user", " "), ("assistant", "b"))}), "non-empty text"),
        (json.dumps({"messages": messages(("bot", "a"))}), "has role 'bot'"),
        (
            json.dumps({"messages": [{"role": "user", "content": "a", "extra": 1}]}),
            "unknown key(s) ['extra']",
        ),
    ],
)
def test_validate_names_each_problem(tmp_path: Path, row: str, problem: str) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps({"messages": messages(("system", "s"), ("user", "u"), ("assistant", "a"))})
    path.write_text(good + "\n" + row + "\n", encoding="utf-8")
    summary = finetune.validate(path)
    assert summary.rows == 2
    assert summary.valid == 1
    assert len(summary.problems) == 1
    assert summary.problems[0].line == 2
    assert problem in summary.problems[0].message


def test_validate_finds_duplicates_limits_and_unreadable_answers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    system = ("system", sio.ChatAdapter().format_system_message(sio.Signature("q -> a: int")))
    row = json.dumps(
        {"messages": messages(system, ("user", "u"), ("assistant", "[[ ## a ## ]]\n4"))}
    )
    other = json.dumps({"messages": messages(system, ("user", "v"), ("assistant", "four"))})
    bare = json.dumps({"messages": messages(("user", "w"), ("assistant", "[[ ## a ## ]]\n5"))})
    path.write_text("\n".join([row, row, other, bare]) + "\n", encoding="utf-8")
    summary = finetune.validate(path, signature="q -> a: int")
    assert str(summary.problems[0]) == "line 2: duplicate of line 1; remove one"
    assert "does not read as StringSignature" in str(summary.problems[1])
    # Without the system message the model is sent, the row does not teach what it sees.
    assert str(summary.problems[2]) == (
        "line 4: no system message, but ChatAdapter's prompts begin with one; is the file in "
        "another format? check --adapter (adapter=)"
    )
    limited = finetune.validate(path, max_tokens=5)
    assert limited.problem_count == 4
    assert "over the limit of 5" in str(limited.problems[0])
    assert limited.report().startswith(f"4 rows checked in {path}: 0 valid, 4 with problems")


def test_the_configured_adapter_writes_the_targets_as_predict_sends_them(tmp_path: Path) -> None:
    # Under a JSONAdapter context, Predict sends JSON: finetune data must teach JSON too.
    out = tmp_path / "json.jsonl"
    with sio.context(adapter=sio.JSONAdapter()):
        finetune.write_jsonl("question -> answer: int", [{"question": "2+2?", "answer": 4}], out)
        sent = sio.Predict("question -> answer: int").format(question="2+2?")
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["messages"][:-1] == sent
    assert json.loads(record["messages"][-1]["content"]) == {"answer": 4}
    with sio.context(adapter=sio.JSONAdapter()):
        assert finetune.validate(out, signature="question -> answer: int").problem_count == 0
