"""Named prompts: demos checked at construction, save -> load -> equal, plain-string prompts."""

from __future__ import annotations

import enum
import json
import logging
from pathlib import Path

import pydantic
import pytest

import structio as sio
from structio.saved import _data_dir, prompts_dir


class Level(enum.Enum):
    EASY = "easy"
    HARD = "hard"


class Source(pydantic.BaseModel):
    url: str
    year: int


class QuestionGeneration(sio.Signature):
    """Write a question about the context."""

    context: str = sio.InputField(desc="a passage")
    source: Source | None = sio.InputField(default=None)
    question: str = sio.OutputField()
    level: Level = sio.OutputField()
    tags: list[str] = sio.OutputField(max_length=3)


DEMO = {
    "context": "Paris is the capital of France.",
    "source": {"url": "https://example.org", "year": 2020},
    "question": "What is the capital of France?",
    "level": "easy",
    "tags": ["geography"],
}


def make() -> sio.Predict:
    lm = sio.LM(
        "openai/gpt-4o-mini",
        temperature=0.2,
        max_tokens=300,
        api_key="sk-very-secret",
        api_base="http://127.0.0.1:9/v1",
        extra_headers={"Authorization": "Bearer also-secret"},
    )
    return sio.Predict(
        QuestionGeneration,
        name="question_generation",
        demos=[DEMO, {"context": "Rome.", "question": "Where?"}],
        lm=lm,
        adapter=sio.JSONAdapter(),
        max_prompt_tokens=4000,
        truncation_step="auto",
        n=2,
    )


def test_demos_are_converted_to_the_declared_types() -> None:
    demo = make().demos[0]
    assert demo["level"] is Level.EASY
    assert demo["source"] == Source(url="https://example.org", year=2020)


@pytest.mark.parametrize(
    ("demos", "message"),
    [
        (
            [{"context": "x", "questoin": "y"}],
            r"demo 0: `questoin` is not a field .*did you mean `question`",
        ),
        ([DEMO, {"level": "medium"}], r"demo 1: field `level`: 'medium' is not a valid value"),
        ([{"tags": ["a", "b", "c", "d"]}], r"demo 0: field `tags`.*max_length=3"),
        ([{"source": {"url": "u"}}], r"demo 0: field `source`.*year"),
        (["not a dict"], r"demo 0 must be a dict"),
        ({"context": "x"}, r"demos must be a list of dicts"),
    ],
)
def test_bad_demos_name_the_index_and_field(demos: object, message: str) -> None:
    with pytest.raises(sio.FormatError, match=message):
        sio.Predict(QuestionGeneration, demos=demos)  # type: ignore[arg-type]


def test_a_str_field_takes_a_list_of_passages_in_a_demo() -> None:
    p = sio.Predict("context -> answer", demos=[{"context": ["a", "b"], "answer": "c"}])
    assert p.demos[0]["context"] == ["a", "b"]


def test_instructions_must_not_be_empty() -> None:
    with pytest.raises(sio.SignatureError, match="empty instructions"):
        sio.Predict(QuestionGeneration.with_instructions("  "))


def test_names_name_files() -> None:
    with pytest.raises(sio.ConfigurationError, match="a prompt name is letters"):
        sio.Predict("q -> a", name="../escape")
    assert sio.Predict("q -> a", name="qa-v2.1").name == "qa-v2.1"


def test_save_then_load_is_equal(tmp_path: Path) -> None:
    original = make()
    path = tmp_path / "qg.json"
    original.save(path)
    loaded = sio.Predict.load(path, trust_endpoint=True)
    assert loaded == original
    assert loaded.signature == QuestionGeneration
    assert loaded.demos == original.demos
    assert loaded.demos[0]["level"] is Level.EASY
    assert isinstance(loaded.adapter, sio.JSONAdapter)
    assert isinstance(loaded.lm, sio.LM)
    assert loaded.lm.kwargs == {
        "temperature": 0.2,
        "max_tokens": 300,  # a setting whose name holds "token", not a secret
    }
    assert dict(loaded.lm.client) == {
        "api_base": "http://127.0.0.1:9/v1",
        "extra_headers": {},  # the Authorization header is left out
    }
    assert loaded.lm_kwargs == {"n": 2}
    assert loaded.truncation_step == "auto"
    assert loaded.format(context="x") == original.format(context="x")


def test_the_file_is_readable_json_without_secrets(tmp_path: Path) -> None:
    path = tmp_path / "qg.json"
    make().save(path)
    text = path.read_text(encoding="utf-8")
    assert "secret" not in text
    data = json.loads(text)
    assert data["name"] == "question_generation"
    assert data["signature"]["instructions"] == "Write a question about the context."
    assert data["signature"]["fields"][3] == {
        "name": "level",
        "kind": "output",
        "type": "tests.test_saved:Level",
    }
    assert data["demos"][0]["source"] == {"url": "https://example.org", "year": 2020}
    assert data["adapter"] == {"type": "JSONAdapter"}
    assert data["lm"]["model"] == "openai/gpt-4o-mini"
    assert text.startswith('{\n  "structio_prompt": 1,')


def test_save_prompt_and_load_prompt_use_structio_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRUCTIO_HOME", str(tmp_path))
    path = sio.save_prompt(make())
    assert path == tmp_path / "prompts" / "question_generation.json"
    assert sio.load_prompt("question_generation", trust_endpoint=True) == make()
    # The file's endpoint is refused, as the error says, unless the caller gives the model.
    with pytest.raises(sio.ConfigurationError, match=r"load_prompt\(name, lm=my_lm\)"):
        sio.load_prompt("question_generation")
    mine = sio.FakeLM(["x"])
    assert sio.load_prompt("question_generation", lm=mine).lm is mine
    with pytest.raises(
        sio.ConfigurationError, match=r"no saved prompt named 'other'.*question_generation"
    ):
        sio.load_prompt("other")
    with pytest.raises(sio.ConfigurationError, match="needs a named prompt"):
        sio.save_prompt(sio.Predict("q -> a"))


def test_a_failed_save_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    make().save(path)
    before = path.read_text(encoding="utf-8")

    class Local(pydantic.BaseModel):
        x: int

    sig = sio.make_signature({"q": (Local, sio.InputField()), "a": (str, sio.OutputField())})
    with pytest.raises(sio.SignatureError, match="inside a function"):
        sio.Predict(sig).save(path)
    assert path.read_text(encoding="utf-8") == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]


def test_loading_bad_files_says_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    with pytest.raises(sio.ConfigurationError, match="cannot read saved prompt"):
        sio.Predict.load(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match="not valid JSON"):
        sio.Predict.load(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match="not a saved structio prompt"):
        sio.Predict.load(path)
    make().save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["signature"]["fields"][3]["type"] = "tests.gone_module:Level"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.SignatureError, match=r"'tests\.gone_module:Level' is not importable"):
        sio.Predict.load(path, allowed_modules=["tests"])


def test_to_string_is_the_whole_prompt_as_text() -> None:
    p = sio.Predict(
        QuestionGeneration,
        demos=[DEMO, {"context": "Two\nlines.", "question": "How many lines?"}],
    )
    assert p.to_string(context="Rome is in Italy.") == (
        "Write a question about the context.\n\n---\n\n"
        "context: Paris is the capital of France.\n"
        'source: {"url": "https://example.org", "year": 2020}\n'
        "question: What is the capital of France?\n"
        "level: easy\n"
        'tags: ["geography"]\n\n---\n\n'
        "context:\nTwo\nlines.\n"
        "question: How many lines?\n\n---\n\n"
        "context: Rome is in Italy.\n"
        "question:"
    )
    with pytest.raises(
        sio.FormatError, match="`question` is an output of QuestionGeneration, not an input"
    ):
        p.to_string(question="x")


def test_to_string_shows_history_turns() -> None:
    sig = sio.make_signature("question, history: History -> answer")
    text = sio.Predict(sig).to_string(
        question="And 3+3?", history=sio.History([{"question": "2+2?", "answer": "4"}])
    )
    assert text.endswith("question: 2+2?\nanswer: 4\n\n---\n\nquestion: And 3+3?\nanswer:")


def test_format_returns_the_chat_messages() -> None:
    p = sio.Predict(QuestionGeneration, demos=[DEMO])
    assert p.format(context="x") == sio.ChatAdapter().format(
        QuestionGeneration, p.demos, {"context": "x"}
    )
    assert p.format(context="x", adapter=sio.JSONAdapter())[0]["content"].startswith(
        "Your input fields are:"
    )


def test_a_saved_endpoint_is_used_only_when_the_caller_trusts_the_file(tmp_path: Path) -> None:
    # An edited file must not send the next request, and the API key from the environment,
    # to an address of its choosing.
    path = tmp_path / "qg.json"
    make().save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["lm"]["client"]["api_base"] == "http://127.0.0.1:9/v1"
    assert data["params"] == {"n": 2}
    with pytest.raises(sio.ConfigurationError, match="trust_endpoint=True") as error:
        sio.Predict.load(path)
    assert "api_base='http://127.0.0.1:9/v1'" in str(error.value)
    trusted = sio.Predict.load(path, trust_endpoint=True)
    assert isinstance(trusted.lm, sio.LM)
    assert trusted.lm.client["api_base"] == "http://127.0.0.1:9/v1"
    # The same rule for an endpoint among the call parameters (here under the key files
    # written before the rename hold).
    data["lm"] = None
    del data["params"]
    data["lm_kwargs"] = {"base_url": "http://attacker.invalid/v1"}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match="base_url"):
        sio.Predict.load(path)
    assert sio.Predict.load(path, trust_endpoint=True).params == {
        "base_url": "http://attacker.invalid/v1"
    }


# Where saved prompts live: the user data folder, not the cache folder.


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, with no STRUCTIO_HOME or XDG_DATA_HOME set."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("USERPROFILE", str(folder))
    monkeypatch.delenv("STRUCTIO_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return folder


def test_prompts_live_in_the_data_folder_not_the_cache(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert prompts_dir() == home / ".local" / "share" / "structio" / "prompts"
    path = sio.save_prompt(make())
    assert path == home / ".local" / "share" / "structio" / "prompts" / "question_generation.json"
    assert not (home / ".cache").exists()
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    assert prompts_dir() == home / "data" / "structio" / "prompts"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # invalid by the XDG spec: ignored
    assert prompts_dir() == home / ".local" / "share" / "structio" / "prompts"
    monkeypatch.setenv("STRUCTIO_HOME", str(home / "mine"))
    assert prompts_dir() == home / "mine" / "prompts"


def test_each_platform_has_its_data_folder(home: Path) -> None:
    assert _data_dir("darwin", {}) == home / "Library" / "Application Support"
    assert _data_dir("win32", {"APPDATA": str(home / "Roaming")}) == home / "Roaming"
    assert _data_dir("linux", {"XDG_DATA_HOME": str(home / "xdg")}) == home / "xdg"
    assert _data_dir("linux", {}) == home / ".local" / "share"


def old_folder(home: Path) -> Path:
    return home / ".cache" / "structio" / "prompts"


def test_prompts_saved_in_the_old_cache_folder_are_moved_and_read(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make().save(old_folder(home) / "question_generation.json")
    other = sio.Predict("q -> a", name="other")
    other.save(old_folder(home) / "other.json")
    with caplog.at_level(logging.WARNING, logger="structio"):
        loaded = sio.load_prompt("question_generation", trust_endpoint=True)
    assert loaded == make()
    assert sorted(p.name for p in prompts_dir().iterdir()) == [
        "other.json",
        "question_generation.json",
    ]
    assert list(old_folder(home).iterdir()) == []
    assert sio.load_prompt("other") == other
    moved = sorted(r.getMessage() for r in caplog.records if r.name == "structio")
    assert moved == [
        f"moved saved prompt {name} from the cache folder to {prompts_dir()}, where clearing "
        "the cache does not delete it"
        for name in ("other.json", "question_generation.json")
    ]


def test_an_old_prompt_never_replaces_one_saved_since(home: Path) -> None:
    sio.save_prompt(sio.Predict(sio.Signature("q -> a", "New."), name="p"))
    sio.Predict(sio.Signature("q -> a", "Old."), name="p").save(old_folder(home) / "p.json")
    assert sio.load_prompt("p").signature.instructions == "New."
    assert (old_folder(home) / "p.json").is_file()  # left for the user to delete


def test_an_old_prompt_that_cannot_be_moved_is_read_where_it_is(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = home / "data"
    (blocked / "structio").mkdir(parents=True)
    (blocked / "structio" / "prompts").write_text("a file where the folder should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))
    sio.Predict(sio.Signature("q -> a", "Old."), name="p").save(old_folder(home) / "p.json")
    with caplog.at_level(logging.WARNING, logger="structio"):
        assert sio.load_prompt("p").signature.instructions == "Old."
    [warning] = [r.getMessage() for r in caplog.records if r.name == "structio"]
    assert warning.startswith(f"saved prompt {old_folder(home) / 'p.json'} could not be moved")
    assert "clearing the cache folder would delete it" in warning
    assert (old_folder(home) / "p.json").is_file()


def test_structio_home_prompts_are_not_moved(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sio.Predict("q -> a", name="p").save(old_folder(home) / "p.json")
    monkeypatch.setenv("STRUCTIO_HOME", str(home / "mine"))
    with pytest.raises(sio.ConfigurationError, match=r"no saved prompt named 'p' in .*mine"):
        sio.load_prompt("p")
    assert (old_folder(home) / "p.json").is_file()
