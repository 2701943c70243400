"""Saved files import only what the caller allows, and check before they import.

A ``module:QualName`` in a saved prompt is an import, and an import runs the module's code:
a file naming ``antigravity:x`` would open a browser. Loads allow structio, the standard
modules of plain types, the module the signature was saved from (once this program has
imported it), ``allowed_modules=`` and ``trust_types=True``; nothing else is imported.
"""

from __future__ import annotations

import datetime
import enum
import http
import json
import sys
from collections.abc import Iterator, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

import structio as sio
from structio._util.refs import ImportPolicy

REFUSED = "antigravity"  # importing it opens a web browser


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Ticket(pydantic.BaseModel):
    title: str
    opened: datetime.date | None = None


class Triage(sio.Signature):
    """Route a ticket."""

    ticket: Ticket = sio.InputField()
    when: datetime.date = sio.InputField()
    steps: sio.NumberedList[str] = sio.OutputField()
    level: Level = sio.OutputField()


class Quiet(sio.ChatAdapter):
    """A custom adapter defined in this (imported) module."""


class _Recorder(MetaPathFinder):
    """Records every module an import statement tries to find (and finds none itself)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        self.names.append(fullname)
        return None


@pytest.fixture
def attempted_imports() -> Iterator[list[str]]:
    """The names of the modules imports tried to find while the test ran."""
    recorder = _Recorder()
    sys.meta_path.insert(0, recorder)
    try:
        yield recorder.names
    finally:
        sys.meta_path.remove(recorder)


@pytest.fixture
def never_imported() -> Iterator[None]:
    """The refused module is not imported before the test, nor by it."""
    assert REFUSED not in sys.modules
    yield
    assert REFUSED not in sys.modules


def saved_file(tmp_path: Path, type_text: str, *, module: str | None = "keep") -> Path:
    """A saved prompt whose output field ``a`` has type ``type_text``."""
    path = tmp_path / f"prompt{len(list(tmp_path.glob('prompt*.json')))}.json"
    sio.Predict("q -> a").save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["signature"]["fields"][1]["type"] = type_text
    if module is None:
        data["signature"].pop("module", None)
    elif module != "keep":
        data["signature"]["module"] = module
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- refused: nothing imported -----------------------------------------------------------


@pytest.mark.usefixtures("never_imported")
def test_a_file_naming_an_unknown_module_is_refused_before_any_import(
    tmp_path: Path, attempted_imports: list[str]
) -> None:
    path = saved_file(tmp_path, f"{REFUSED}:x")
    with pytest.raises(sio.SignatureError) as info:
        sio.Predict.load(path)
    message = str(info.value)
    assert f"type '{REFUSED}:x'" in message
    assert f"module '{REFUSED}' is not allowed" in message
    assert f"allowed_modules=['{REFUSED}']" in message
    assert "trust_types=True" in message
    assert REFUSED not in attempted_imports


@pytest.mark.usefixtures("never_imported")
def test_every_way_of_loading_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attempted_imports: list[str]
) -> None:
    path = saved_file(tmp_path, f"list[{REFUSED}:x] | None")
    data = json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(sio.SignatureError, match=f"module '{REFUSED}' is not allowed"):
        sio.Predict.from_dict(data)
    with pytest.raises(sio.SignatureError, match=f"module '{REFUSED}' is not allowed"):
        sio.Signature.from_dict(data["signature"])
    monkeypatch.setenv("STRUCTIO_HOME", str(tmp_path))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.SignatureError, match=f"module '{REFUSED}' is not allowed"):
        sio.load_prompt("p")
    # Other options do not open the door: trusting the endpoint is not trusting the types.
    with pytest.raises(sio.SignatureError, match=f"module '{REFUSED}' is not allowed"):
        sio.Predict.load(path, trust_endpoint=True, allowed_modules=["tests"])
    assert REFUSED not in attempted_imports


@pytest.mark.usefixtures("never_imported")
def test_a_saved_adapter_class_is_refused_before_any_import(
    tmp_path: Path, attempted_imports: list[str]
) -> None:
    with pytest.raises(sio.ConfigurationError) as info:
        sio.Adapter.from_dict({"type": f"{REFUSED}:Adapter"})
    assert f"module '{REFUSED}' is not allowed" in str(info.value)
    assert f"allowed_modules=['{REFUSED}']" in str(info.value)
    path = tmp_path / "p.json"
    sio.Predict("q -> a").save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["adapter"] = {"type": f"{REFUSED}.sub:Adapter"}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(sio.ConfigurationError, match=f"module '{REFUSED}.sub' is not allowed"):
        sio.Predict.load(path)
    assert not any(name.startswith(REFUSED) for name in attempted_imports)


@pytest.mark.usefixtures("never_imported")
def test_a_file_cannot_allow_a_module_by_saying_it_was_saved_from_it(tmp_path: Path) -> None:
    # The recorded module allows only a module this program has imported: its code has run.
    path = saved_file(tmp_path, f"{REFUSED}:x", module=REFUSED)
    with pytest.raises(sio.SignatureError) as info:
        sio.Predict.load(path)
    assert f"module '{REFUSED}' is not allowed" in str(info.value)
    assert "has not imported it" in str(info.value)


def test_a_name_cannot_reach_a_class_of_another_module_through_an_allowed_one(
    tmp_path: Path,
) -> None:
    # uuid imports os (on every supported Python; pathlib stopped holding it in 3.13);
    # os.PathLike is os's class, and os is not allowed.
    with pytest.raises(sio.SignatureError, match="module 'os' is not allowed"):
        sio.Predict.load(saved_file(tmp_path, "uuid:os.PathLike"))
    with pytest.raises(sio.SignatureError, match="not importable"):
        sio.Predict.load(saved_file(tmp_path, "datetime:__builtins__"))
    with pytest.raises(sio.SignatureError, match="is not a class"):
        sio.Predict.load(saved_file(tmp_path, "builtins:eval"))


# -- allowed ------------------------------------------------------------------------------


def test_allowed_modules_allow_a_module_and_its_submodules(tmp_path: Path) -> None:
    path = saved_file(tmp_path, "http:HTTPStatus")
    with pytest.raises(sio.SignatureError, match="module 'http' is not allowed"):
        sio.Predict.load(path)
    loaded = sio.Predict.load(path, allowed_modules=["http"])
    assert loaded.signature.output_fields["a"].annotation is http.HTTPStatus
    # A single name is one module, not its letters.
    assert sio.Predict.load(path, allowed_modules="http") == loaded
    # A name allows its submodules, never its parent or a sibling.
    client = saved_file(tmp_path, "http.client:HTTPResponse")
    read = sio.Predict.load(client, allowed_modules=["http"])
    assert read.signature.output_fields["a"].annotation.__name__ == "HTTPResponse"
    with pytest.raises(sio.SignatureError, match="module 'http' is not allowed"):
        sio.Predict.load(path, allowed_modules=["http.client"])
    with pytest.raises(sio.SignatureError, match="module 'http' is not allowed"):
        sio.Predict.load(path, allowed_modules=["htt"])


def test_allowed_modules_must_be_module_names(tmp_path: Path) -> None:
    path = saved_file(tmp_path, "http:HTTPStatus")
    with pytest.raises(sio.SignatureError, match="not a module name"):
        sio.Predict.load(path, allowed_modules=["http; rm -rf"])
    with pytest.raises(sio.ConfigurationError, match="not a module name"):
        sio.Adapter.from_dict({"type": "x:Y"}, allowed_modules=[""])


def test_trust_types_allows_any_module(tmp_path: Path) -> None:
    path = saved_file(tmp_path, "dict[str, http:HTTPStatus]")
    loaded = sio.Predict.load(path, trust_types=True)
    assert loaded.signature.output_fields["a"].annotation == dict[str, http.HTTPStatus]
    assert sio.Signature.from_dict(loaded.signature.to_dict(), trust_types=True) == (
        loaded.signature
    )


def test_structio_and_the_standard_modules_of_plain_types_are_always_allowed(
    tmp_path: Path,
) -> None:
    for text, expected in [
        ("datetime:date", datetime.date),
        ("decimal:Decimal", __import__("decimal").Decimal),
        ("uuid:UUID", __import__("uuid").UUID),
        ("pathlib:Path", Path),
        ("structio:History", sio.History),
        ("list[structio:NumberedList[int]]", list[sio.NumberedList[int]]),
    ]:
        loaded = sio.Predict.load(saved_file(tmp_path, text))
        assert loaded.signature.output_fields["a"].annotation == expected, text


def test_the_module_a_signature_was_saved_from_is_allowed_once_imported(tmp_path: Path) -> None:
    data = Triage.to_dict()
    assert data["module"] == __name__
    path = tmp_path / "triage.json"
    original = sio.Predict(
        Triage,
        adapter=Quiet(),
        demos=[
            {
                "ticket": {"title": "Down"},
                "when": "2024-05-01",
                "steps": ["look"],
                "level": "high",
            }
        ],
    )
    original.save(path)
    loaded = sio.Predict.load(path)  # no option: everything is from here, or safe
    assert loaded == original
    assert loaded.signature == Triage
    assert loaded.demos[0]["ticket"] == Ticket(title="Down")
    assert isinstance(loaded.adapter, Quiet)
    # The loaded signature keeps the module it was saved from, so saving it again does too.
    assert loaded.signature.__module__ == __name__
    assert loaded.signature.to_dict() == data


def test_an_already_defined_adapter_class_is_found_without_an_import() -> None:
    data = Quiet(fallback=None).to_dict()
    assert data["type"] == f"{__name__}:Quiet"
    assert sio.Adapter.from_dict(data) == Quiet(fallback=None)


# -- old files ----------------------------------------------------------------------------


def test_old_files_without_a_module_still_load(tmp_path: Path) -> None:
    plain = saved_file(tmp_path, "structio.formatting:NumberedList[datetime:date]", module=None)
    assert "module" not in json.loads(plain.read_text(encoding="utf-8"))["signature"]
    loaded = sio.Predict.load(plain)
    assert loaded.signature.output_fields["a"].annotation == sio.NumberedList[datetime.date]
    # A class of the caller's own code needs the caller's word when the file does not say
    # where it was saved from.
    own = saved_file(tmp_path, f"{__name__}:Ticket", module=None)
    with pytest.raises(sio.SignatureError, match=f"module '{__name__}' is not allowed"):
        sio.Predict.load(own)
    again = sio.Predict.load(own, allowed_modules=["tests.reliability"])
    assert again.signature.output_fields["a"].annotation is Ticket


def test_a_malformed_module_entry_is_an_error(tmp_path: Path) -> None:
    path = saved_file(tmp_path, "str", module="../../etc")
    with pytest.raises(sio.SignatureError, match="dotted module name"):
        sio.Predict.load(path)


def test_the_policy_says_why() -> None:
    policy = ImportPolicy(["myapp.models"], saved_from=__name__)
    assert policy.refusal("myapp.models.sub") is None
    assert policy.refusal("structio.rendering") is None
    assert policy.refusal(__name__) is None  # imported: this very module
    refusal = policy.refusal("myapp")
    assert refusal is not None
    assert "module 'myapp' is not allowed" in refusal
    assert ImportPolicy(trust=True).refusal(REFUSED) is None
    checked: Any = ImportPolicy(saved_from="not a module")
    assert checked.saved_from is None
