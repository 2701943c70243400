"""The layers of ARCHITECTURE.md hold: every import in src/ goes down, and none makes a cycle.

Every ``import`` counts: at the top of a module, inside a function, under ``TYPE_CHECKING``.
The layer table is read from ARCHITECTURE.md itself, so the document and the code cannot
drift apart. Two more rules keep modules to one job each: a private module inside a package
(``structio.lm._http``) is imported only from inside that package, and no module is longer
than `MAX_LINES`. `scripts/check` runs this file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = "structio"

Graph = dict[str, set[str]]

MAX_LINES = 800
"""The most lines a module in src/ may have: past it, a module does more than one job."""


def read_layers(text: str) -> dict[str, int]:
    """Layer number of each top-level module or package named in the document's table."""
    layers: dict[str, int] = {}
    for match in re.finditer(r"^\| (\d+) \| ([^|]+) \|", text, re.MULTILINE):
        for name in re.findall(r"`([\w.]+)`", match.group(2)):
            if name in layers:
                raise AssertionError(f"{name} is in two layers of the table")
            layers[name] = int(match.group(1))
    return layers


def modules(src: Path) -> dict[str, Path]:
    """Every module under ``src``, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(src: Path) -> Graph:
    """Module -> the structio modules it imports anywhere in its source."""
    known = modules(src)
    graph: Graph = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from pkg import sub` imports the submodule `pkg.sub` when there is one.
                candidates = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                    for alias in node.names
                ]
            else:
                continue
            for target in candidates:
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                while target not in known:
                    target = target.rpartition(".")[0]
                if target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def unit(module: str) -> str:
    """The top-level unit a module belongs to: ``structio.parsing.read`` -> ``parsing``."""
    if module == PACKAGE:
        return PACKAGE
    return module.split(".")[1]


def violations(graph: Mapping[str, Iterable[str]], layers: Mapping[str, int]) -> list[str]:
    """Every import that does not go down a layer (or stay inside its own package)."""
    problems = []
    for module in sorted(graph):
        if unit(module) not in layers:
            problems.append(f"{module} is in no layer of ARCHITECTURE.md; add it to the table")
            continue
        for target in sorted(graph[module]):
            here, there = unit(module), unit(target)
            if here == there and here != PACKAGE:
                continue  # inside one package
            if unit(target) not in layers:
                continue  # reported for the target itself
            if layers[there] >= layers[here]:
                problems.append(
                    f"{module} (layer {layers[here]}) imports {target} "
                    f"(layer {layers[there]}): imports must go down"
                )
    return problems


def private_part(module: str) -> str | None:
    """The package a private module of ``module``'s path belongs to, or None if none is private.

    ``structio.lm._http`` -> ``structio.lm``; ``structio.lm._http.pool`` -> ``structio.lm``.
    A private top-level unit (``structio._util``, ``structio._demos``) is a layer of its own
    in the table, imported as any unit is: only names inside a package count.
    """
    parts = module.split(".")
    for depth in range(2, len(parts)):
        if parts[depth].startswith("_"):
            return ".".join(parts[:depth])
    return None


def private_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of a private module from outside the package that holds it."""
    problems = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            owner = private_part(target)
            if owner is None or module == owner or module.startswith(owner + "."):
                continue
            problems.append(
                f"{module} imports {target}, private to {owner}: import what {owner} "
                "exports, or make the module public"
            )
    return problems


def line_counts(src: Path) -> dict[str, int]:
    """Lines of every module under ``src``, by its path relative to ``src``'s parent."""
    return {
        path.relative_to(src.parent).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules(src).values()
    }


def oversized(sizes: Mapping[str, int], limit: int = MAX_LINES) -> list[str]:
    """Every module longer than ``limit`` lines, largest first."""
    return [
        f"{path} has {lines} lines, more than {limit}: split it along its nouns "
        "(one job per module, a cohesive group of functions into a sibling module)"
        for path, lines in sorted(sizes.items(), key=lambda item: (-item[1], item[0]))
        if lines > limit
    ]


@pytest.fixture(scope="module")
def layers() -> dict[str, int]:
    return read_layers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))


def test_the_table_names_every_part_of_the_package(layers: dict[str, int]) -> None:
    units = {unit(m) for m in modules(SRC)}
    assert units - set(layers) == set(), "modules missing from the ARCHITECTURE.md table"
    assert set(layers) - units == set(), "the table names modules that do not exist"


def test_there_is_no_import_cycle() -> None:
    assert cycles(imports(SRC)) == []


def test_every_import_goes_down_a_layer(layers: dict[str, int]) -> None:
    assert violations(imports(SRC), layers) == []


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    assert private_imports(imports(SRC)) == []


def test_no_module_is_over_the_size_limit() -> None:
    assert oversized(line_counts(SRC)) == []


def test_only_lm_imports_litellm() -> None:
    for name, path in modules(SRC).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "litellm" or n.startswith("litellm.") for n in names):
                assert name == "structio.lm._litellm", f"{name} imports litellm"


# -- the checker itself finds what it must ---------------------------------------------------


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    src = write_tree(
        tmp_path,
        {
            "structio/__init__.py": "",
            "structio/a.py": "from structio import b\n",
            "structio/b.py": "def f():\n    from structio.a import x\n",
        },
    )
    assert cycles(imports(src)) == [["structio.a", "structio.b"]]


def test_the_checker_finds_an_upward_import_under_type_checking(tmp_path: Path) -> None:
    src = write_tree(
        tmp_path,
        {
            "structio/__init__.py": "",
            "structio/low.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from structio.high.mod import X\n"
            ),
            "structio/high/__init__.py": "",
            "structio/high/mod.py": "from . import other\nfrom ..low import y\n",
            "structio/high/other.py": "",
        },
    )
    graph = imports(src)
    assert graph["structio.high.mod"] == {"structio.high.other", "structio.low"}
    table = read_layers("| 0 | `low` | x |\n| 1 | `high` | y |\n| 2 | `structio` | z |\n")
    assert violations(graph, table) == [
        "structio.low (layer 0) imports structio.high.mod (layer 1): imports must go down"
    ]
    siblings = read_layers("| 0 | `low`, `high` | x |\n| 2 | `structio` | z |\n")
    assert len(violations(graph, siblings)) == 2  # same layer, two packages: both ways refused


def test_the_checker_finds_a_private_module_imported_from_another_package(tmp_path: Path) -> None:
    src = write_tree(
        tmp_path,
        {
            "structio/__init__.py": "",
            "structio/_util.py": "",
            "structio/lm/__init__.py": "from structio.lm import _http\n",
            "structio/lm/_http.py": "from structio import _util\n",
            "structio/lm/base.py": "from ._http import send\n",
            "structio/lm/_inner/__init__.py": "",
            "structio/lm/_inner/deep.py": "",
            "structio/call.py": (
                "from structio._util import x\n"
                "def f():\n    from structio.lm._http import send\n"
                "import structio.lm._inner.deep\n"
            ),
        },
    )
    assert private_imports(imports(src)) == [
        "structio.call imports structio.lm._http, private to structio.lm: import what "
        "structio.lm exports, or make the module public",
        "structio.call imports structio.lm._inner.deep, private to structio.lm: import what "
        "structio.lm exports, or make the module public",
    ]


def test_private_part_names_the_package_a_private_module_belongs_to() -> None:
    assert private_part("structio.lm._http") == "structio.lm"
    assert private_part("structio.lm._inner.deep") == "structio.lm"
    assert private_part("structio.lm.models") is None
    assert private_part("structio._util.files") is None  # a top-level unit of its own
    assert private_part("structio") is None


def test_the_checker_finds_a_module_over_the_size_limit(tmp_path: Path) -> None:
    src = write_tree(
        tmp_path / "src",
        {
            "structio/__init__.py": "",
            "structio/small.py": "x = 1\n" * 800,
            "structio/big/__init__.py": "",
            "structio/big/huge.py": "x = 1\n" * 801,
        },
    )
    sizes = line_counts(src)
    assert sizes["src/structio/small.py"] == 800
    assert oversized(sizes) == [
        "src/structio/big/huge.py has 801 lines, more than 800: split it along its nouns "
        "(one job per module, a cohesive group of functions into a sibling module)"
    ]
    assert oversized({"a.py": 12, "b.py": 30, "c.py": 5}, limit=10) == [
        "b.py has 30 lines, more than 10: split it along its nouns (one job per module, "
        "a cohesive group of functions into a sibling module)",
        "a.py has 12 lines, more than 10: split it along its nouns (one job per module, "
        "a cohesive group of functions into a sibling module)",
    ]
