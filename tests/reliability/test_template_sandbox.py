"""Templates cannot read outside their folder, and no render hangs or fills memory.

Includes are tried against real folders and packages on disk, with a secret file next to
them written as a valid part: a regression that lets an include through renders it instead
of raising. Templates that would run for minutes or allocate gigabytes render in a
subprocess with a generous time limit and a memory cap, so a regression fails this test
instead of hanging CI; nothing here asserts a speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import structio as sio
from structio.rendering import templates

SECRET = "TOP SECRET"  # noqa: S105 - what a leaked include would show
SECRET_PART = f"- name: secret\n  role: system\n  content: {SECRET}\n"
HEADER = "- name: a\n  content: hello\n"  # the include or the limit comes on line 3


# -- a folder and a package of templates, with a secret outside them ------------------------


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """``site/templates`` (parts, an inner link), ``site/outside`` (secrets, a folder)."""
    folder = tmp_path / "site" / "templates"
    (folder / "parts").mkdir(parents=True)
    (folder / "parts" / "intro.yml.j2").write_text(
        "- name: intro\n  role: system\n  content: Hello {{ who }}\n", encoding="utf-8"
    )
    outside = tmp_path / "site" / "outside"
    outside.mkdir()
    (outside / "secret.yml.j2").write_text(SECRET_PART, encoding="utf-8")
    (tmp_path / "site" / "secret.yml.j2").write_text(SECRET_PART, encoding="utf-8")
    # Links: one that stays inside the folder, one to a file outside, one to a folder outside.
    (folder / "inner.yml.j2").symlink_to(folder / "parts" / "intro.yml.j2")
    (folder / "leak.yml.j2").symlink_to(outside / "secret.yml.j2")
    (folder / "leaky_parts").symlink_to(outside, target_is_directory=True)
    return folder


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """An importable package ``<name>/prompts`` laid out as `site`, and its folder."""
    name = f"sio_templates_{uuid.uuid4().hex[:8]}"
    root = tmp_path / "packages" / name
    prompts = root / "prompts"
    (prompts / "parts").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (prompts / "parts" / "intro.yml.j2").write_text(
        "- name: intro\n  role: system\n  content: Hello {{ who }}\n", encoding="utf-8"
    )
    (root / "secret.yml.j2").write_text(SECRET_PART, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yml.j2").write_text(SECRET_PART, encoding="utf-8")
    (prompts / "inner.yml.j2").symlink_to(prompts / "parts" / "intro.yml.j2")
    (prompts / "leak.yml.j2").symlink_to(outside / "secret.yml.j2")
    (prompts / "leaky_parts").symlink_to(outside, target_is_directory=True)
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    yield name, prompts
    sys.modules.pop(name, None)


def _from_folder(folder: Path, body: str) -> sio.Template:
    (folder / "chat.yml.j2").write_text(body, encoding="utf-8")
    return sio.Template.from_file(folder / "chat.yml.j2")


def _loaders(site: Path, package: tuple[str, Path]) -> dict[str, Any]:
    name, prompts = package

    def from_package(body: str) -> sio.Template:
        (prompts / "chat.yml.j2").write_text(body, encoding="utf-8")
        return sio.Template.from_package(name, "prompts/chat.yml.j2")

    return {
        "from_file": lambda body: _from_folder(site, body),
        "search_path": lambda body: sio.Template(body, name="chat.yml.j2", search_path=site),
        "from_package": from_package,
    }


LOADERS = ["from_file", "search_path", "from_package"]


@pytest.mark.parametrize("loader", LOADERS)
def test_includes_inside_the_folder_still_work(
    loader: str, site: Path, package: tuple[str, Path]
) -> None:
    make = _loaders(site, package)[loader]
    body = (
        HEADER + '{% include "parts/intro.yml.j2" %}\n{% include "./inner.yml.j2" %}\n'
        "{% include name %}\n"
    )
    prompt = make(body).render({"who": "you", "name": "parts/./intro.yml.j2"})
    assert [part.content for part in prompt.parts] == ["hello", *["Hello you"] * 3]


ESCAPES = {
    "dot-dot": ("../secret.yml.j2", r"leaves the template folder"),
    "dot-dot deeper": ("parts/../../outside/secret.yml.j2", r"leaves the template folder"),
    "dot-dot behind a folder": ("parts/../../secret.yml.j2", r"leaves the template folder"),
    "absolute": ("{outside}/secret.yml.j2", r"is an absolute path"),
    "backslashes": ("parts\\..\\..\\secret.yml.j2", r"contains a backslash"),
    "a drive": ("C:/secret.yml.j2", r"names a drive"),
    "a link to a file outside": ("leak.yml.j2", r"resolves outside the template folder"),
    "a link to a folder outside": (
        "leaky_parts/secret.yml.j2",
        r"resolves outside the template folder",
    ),
}


def _escape(name: str, site: Path, package: tuple[str, Path], loader: str) -> str:
    outside = package[1].parent.parent.parent / "outside" if loader == "from_package" else None
    return name.replace("{outside}", str(outside or site.parent / "outside"))


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("include", "reason"), ESCAPES.values(), ids=ESCAPES.keys())
def test_an_include_written_in_the_template_cannot_leave_the_folder(
    include: str, reason: str, loader: str, site: Path, package: tuple[str, Path]
) -> None:
    include = _escape(include, site, package, loader)
    template = _loaders(site, package)[loader](HEADER + "{% include " + repr(include) + " %}\n")
    with pytest.raises(sio.TemplateError, match=reason) as info:
        template.render({})
    message = str(info.value)
    assert f"line 3: include {include!r} " in message
    assert "chat.yml.j2" in message
    assert SECRET not in message


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("include", "reason"), ESCAPES.values(), ids=ESCAPES.keys())
def test_an_include_name_from_the_data_cannot_leave_the_folder(
    include: str, reason: str, loader: str, site: Path, package: tuple[str, Path]
) -> None:
    include = _escape(include, site, package, loader)
    template = _loaders(site, package)[loader](HEADER + "{% include path_from_data %}\n")
    with pytest.raises(sio.TemplateError, match=reason):
        template.render({"path_from_data": include})


def test_every_way_to_load_another_file_is_confined(site: Path) -> None:
    outside = str(site.parent / "outside" / "secret.yml.j2")
    for statement in (
        "{% include path ignore missing %}",
        "{% include ['missing.yml.j2', path] %}",
        "{% import path as secrets %}",
        "{% from path import nothing %}",
        "{% extends path %}",
    ):
        for path in ("../secret.yml.j2", outside):
            template = _from_folder(site, HEADER + statement + "\n")
            with pytest.raises(sio.TemplateError, match="line 3: include") as info:
                template.render({"path": path})
            assert "missing" not in str(info.value), statement


def test_a_refusal_names_the_template_the_line_and_the_included_file(site: Path) -> None:
    (site / "parts" / "bad.yml.j2").write_text(
        "- name: b\n  content: x\n{% include '../secret.yml.j2' %}\n", encoding="utf-8"
    )
    template = sio.Template(
        '\n{% include "parts/bad.yml.j2" %}', name="chat.yml.j2", search_path=site
    )
    with pytest.raises(sio.TemplateError) as info:
        template.render({})
    assert str(info.value) == (
        "template chat.yml.j2 (in 'parts/bad.yml.j2'), line 3: include '../secret.yml.j2' "
        "leaves the template folder ('..')"
    )


def test_a_package_template_name_cannot_leave_the_package(package: tuple[str, Path]) -> None:
    name, prompts = package
    (prompts / "chat.yml.j2").write_text(HEADER, encoding="utf-8")
    assert sio.Template.from_package(name, "prompts/chat.yml.j2").render({}).parts
    for escape, reason in [
        ("../secret.yml.j2", "leaves the package"),
        ("prompts/../../secret.yml.j2", "leaves the package"),
        (str(prompts / "chat.yml.j2"), "is an absolute path"),
        ("prompts\\chat.yml.j2", "contains a backslash"),
        ("prompts/leak.yml.j2", "resolves outside the package"),
        ("prompts/leaky_parts/secret.yml.j2", "resolves outside the package"),
    ]:
        with pytest.raises(sio.TemplateError, match=reason):
            sio.Template.from_package(name, escape)


def test_the_folder_is_fixed_when_the_template_is_loaded(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site.parent)
    template = sio.Template(HEADER + '{% include "parts/intro.yml.j2" %}', search_path="templates")
    monkeypatch.chdir(tmp_path)
    assert template.render({"who": "me"}).parts[-1].content == "Hello me"


# -- resource limits: in a subprocess, with a time limit and a memory cap --------------------

WORKER = textwrap.dedent(
    """
    import itertools, json, sys
    try:  # a regression must fail with MemoryError, not exhaust the machine
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, resource.RLIM_INFINITY))
    except (ImportError, ValueError, OSError):
        pass
    import structio as sio

    case = json.loads(sys.stdin.read())
    data = case["data"]
    if case["endless"]:
        data["items"] = itertools.count()
    try:
        template = sio.Template(case["template"], name="chat.yml.j2", **case["options"])
        prompt = template.render(data)
    except sio.TemplateError as exc:
        outcome = {"error": "TemplateError", "message": str(exc)}
    except BaseException as exc:
        outcome = {"error": type(exc).__name__, "message": str(exc)[:300]}
    else:
        outcome = {"error": None, "message": str([len(p.content) for p in prompt.parts])}
    print(json.dumps(outcome))
    """
)
TIME_LIMIT_S = 60


def render_in_subprocess(
    template: str,
    data: dict[str, Any] | None = None,
    *,
    endless: bool = False,
    **options: int,
) -> dict[str, Any]:
    """Construct and render ``template`` in a fresh interpreter; its outcome."""
    case = {"template": template, "data": data or {}, "endless": endless, "options": options}
    try:
        done = subprocess.run(
            [sys.executable, "-c", WORKER],
            input=json.dumps(case),
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
            check=False,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the render did not stop within {TIME_LIMIT_S} s: {template!r}")
    assert done.returncode == 0, done.stderr[-2000:]
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


RUNAWAYS = {
    "nested loops of 10^10 iterations": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "max_iterations",
    ),
    "nested loops over the data": (
        "{% for i in xs %}{% for j in xs %}{% for k in xs %}{% endfor %}{% endfor %}{% endfor %}",
        "max_iterations",
    ),
    "a loop over an endless iterator": ("{% for i in items %}{% endfor %}", "max_iterations"),
    "a macro calling itself twice": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(60) }}",
        "max_iterations",
    ),
    "a filter over a range in a loop": (
        "{% for i in range(100000) %}{{ range(100000) | sum }}{% endfor %}",
        "max_iterations",
    ),
    "10 ** (10 ** 8)": ("{{ 10 ** (10 ** 8) }}", "max_int_bits"),
    "repeated squaring": (
        "{% set ns = namespace(n=3) %}{% for i in range(64) %}{% set ns.n = ns.n * ns.n %}"
        "{% endfor %}",
        "max_int_bits",
    ),
    "a 10 MB output from a loop": (
        "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
        "max_output",
    ),
    "a 10 MB output of the template's own text": (
        "{% for i in range(100000) %}" + "static text " * 20 + "{% endfor %}",
        "max_output",
    ),
    "a string repeated 10 ** 10 times": ("{{ 'x' * 10 ** 10 }}", "max_output"),
    "a list repeated 10 ** 10 times": ("{{ [0] * 10 ** 10 }}", "max_output"),
    "a string doubled with ~": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}",
        "max_output",
    ),
    "a string doubled with +": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}",
        "max_output",
    ),
    "a padding filter": ("{{ 'x' | center(10 ** 10) }}", "max_output"),
    "a padding filter on constants": ("{{ 'x' | center(10000000000) }}", "max_output"),
    "a padding method": ("{{ 'x'.rjust(10 ** 10) }}", "max_output"),
    "a % format width": ("{{ '%010000000000d' % 1 }}", "max_output"),
    "a % format width from the values": ("{{ '%*d' % (10 ** 10, 1) }}", "max_output"),
    "a str.format width": ("{{ '{:>{w}}'.format(1, w=10 ** 10) }}", "max_output"),
    "a join with a long separator": (
        "{{ range(100000) | join('x' * 1000000) }}",
        "max_output",
    ),
    "a replace that multiplies": (
        "{{ ('x' * 100000) | replace('x', 'y' * 100000) }}",
        "max_output",
    ),
    "indenting by 10 ** 10": ("{{ 'a\\nb' | indent(10 ** 10) }}", "max_output"),
    "lorem ipsum of 10 ** 10 paragraphs": ("{{ lipsum(10 ** 10) }}", "max_iterations"),
    "10 ** (10 ** 8) given to a filter that swallows errors": (
        "{{ (10 ** (10 ** 8)) | int }}",
        "max_int_bits",
    ),
}


@pytest.mark.parametrize(("body", "limit"), RUNAWAYS.values(), ids=RUNAWAYS.keys())
def test_a_runaway_template_stops_with_a_template_error(body: str, limit: str) -> None:
    outcome = render_in_subprocess(
        HEADER + body, {"xs": list(range(1000))}, endless="items" in body
    )
    assert outcome["error"] == "TemplateError", outcome
    assert outcome["message"].startswith("template chat.yml.j2, line 3: "), outcome
    assert f"pass {limit}= to Template" in outcome["message"], outcome


def test_the_limits_are_options_of_the_template() -> None:
    loop = HEADER + "{% for i in items %}{% endfor %}"
    assert sio.Template(loop, max_iterations=10).render({"items": range(10)}).parts
    with pytest.raises(sio.TemplateError, match=r"line 3: .*max_iterations \(10\) steps"):
        sio.Template(loop, max_iterations=10).render({"items": range(11)})
    output = HEADER + "- name: b\n  content: {{ text }}"
    assert sio.Template(output, max_output=200).render({"text": "x" * 100}).parts
    with pytest.raises(sio.TemplateError, match=r"line 4: .*max_output \(200 characters\)"):
        sio.Template(output, max_output=200).render({"text": "x" * 200})
    power = HEADER + "- name: b\n  content: {{ 2 ** n }}"
    assert sio.Template(power, max_int_bits=64).render({"n": 63}).parts[-1].content == str(2**63)
    with pytest.raises(sio.TemplateError, match=r"line 4: .*max_int_bits \(64\)"):
        sio.Template(power, max_int_bits=64).render({"n": 64})
    nested = HEADER + "{% for i in range(1000) %}{% for j in range(150) %}{% endfor %}{% endfor %}"
    with pytest.raises(sio.TemplateError, match=r"max_iterations \(100,000\) steps"):
        sio.Template(nested).render({})
    assert sio.Template(nested, max_iterations=200_000).render({}).parts
    assert templates.MAX_ITERATIONS == 100_000
    assert templates.MAX_OUTPUT == 10_000_000
    assert templates.MAX_INT_BITS == 4096


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10"])
def test_a_limit_must_be_a_positive_integer(value: Any) -> None:
    for option in ("max_iterations", "max_output", "max_int_bits"):
        with pytest.raises(sio.ConfigurationError, match=f"{option}= must be a positive"):
            sio.Template(HEADER, **{option: value})


def test_ordinary_templates_are_untouched_by_the_limits() -> None:
    chat = (
        "- name: system\n  role: system\n  content: {{ '%-6s|' % persona }}{{ 2 ** 10 }}\n"
        "{% for m in messages %}\n- name: m{{ loop.index }}_of_{{ loop.length }}\n"
        "  role: {{ m.role }}\n  content: {{ m.text | center(9) ~ '!' * 2 }}\n{% endfor %}"
    )
    messages = [{"role": "user", "text": f"hi {i}"} for i in range(5000)]
    prompt = sio.Template(chat).render({"persona": "poet", "messages": messages})
    assert prompt.parts[0].content == "poet  |1024"
    assert prompt.parts[-1].name == "m5000_of_5000"
    assert prompt.parts[-1].content == "hi 4999".center(9) + "!!"  # data keeps its spaces
