"""The package's layers: no module outside ``onlineeval.cli`` imports the CLI, no import cycle
among the subpackages, and every import goes to the importer's layer or a lower one.

Imports are read from the source (the AST of every module, imports inside functions
included: a lazy import is still a dependency). ``from onlineeval import name`` counts as an
import of the module that defines ``name`` (the package's lazy re-exports,
``onlineeval._EXPORTS``), so the package's front door is no way around the layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import onlineeval

PACKAGE = Path(onlineeval.__file__).resolve().parent
ROOT = "onlineeval"

#: the layers, lowest first. A module may import its own layer and the ones below. Each
#: top-level module or subpackage of onlineeval is in exactly one (a new one must be placed:
#: the test says so). "onlineeval" is the package's own __init__ (__version__).
LAYERS: tuple[frozenset[str], ...] = (
    # foundation: errors, registries, text and number formatting, SQL loading, safe writes
    frozenset({"onlineeval", "errors", "registry", "namespace", "terminal", "interrupt",
               "progress", "window", "queries", "db", "atomic", "formatting", "levels"}),
    # statistics on arrays; loading click logs; the engines the loaded logs run on
    frozenset({"stats", "logs", "engines"}),
    # the measurements: offline measures, online metrics, interleaving, click models
    frozenset({"offline", "online", "interleaving", "clickmodels"}),
    # analyses built on them
    frozenset({"abtest", "counterfactual", "simulate", "agreement"}),
    # the experiment readout (A/B, interleaving, offline prediction)
    frozenset({"readout"}),
    frozenset({"study"}),
    frozenset({"report"}),
    # the command line and its entry point
    frozenset({"cli", "__main__"}),
)


def module_name(path: Path, package: Path) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, package: Path, exports: Mapping[str, str]) -> set[str]:
    """Every ``onlineeval...`` module the file imports (relative imports resolved)."""
    name = module_name(path, package)
    is_package = path.name == "__init__.py"
    here = name if is_package else name.rpartition(".")[0]
    root = package.name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == root:
                for alias in node.names:
                    # a submodule, a lazily re-exported name, or the package's own attribute
                    if (package / alias.name).is_dir() or (package / f"{alias.name}.py").is_file():
                        found.add(f"{root}.{alias.name}")
                    elif alias.name in exports:
                        found.add(exports[alias.name])
                    else:
                        found.add(root)
            else:
                found.add(module)
                # `from package import submodule` imports the submodule too
                sub = package.parent.joinpath(*module.split("."))
                found.update(f"{module}.{a.name}" for a in node.names
                             if (sub / a.name).is_dir() or (sub / f"{a.name}.py").is_file())
    return {m for m in found if m == root or m.startswith(root + ".")}


def top(module: str) -> str:
    """The layer unit of a module: its top-level module or subpackage of the package."""
    parts = module.split(".")
    return parts[0] if len(parts) == 1 else parts[1]


def import_graph(package: Path, exports: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the package modules it imports, for every module of the package."""
    return {module_name(p, package): imports_of(p, package, exports)
            for p in sorted(package.rglob("*.py"))}


def unit_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        src = top(module)
        units.setdefault(src, set())
        units[src].update(t for t in map(top, targets) if t != src)
    return units


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer_violations(units: Mapping[str, Iterable[str]],
                     layers: tuple[frozenset[str], ...]) -> list[str]:
    level = {u: i for i, layer in enumerate(layers) for u in layer}
    out = [f"{u} is in no layer: place it in LAYERS (tests/test_layers.py)"
           for u in sorted(units) if u not in level]
    for src in sorted(units):
        for dst in sorted(units[src]):
            if src in level and dst in level and level[dst] > level[src]:
                out.append(f"{src} (layer {level[src]}) imports {dst} (layer {level[dst]})")
    return out


def cli_importers(graph: Mapping[str, Iterable[str]], root: str = ROOT) -> list[str]:
    cli = f"{root}.cli"
    allowed = {f"{root}.__main__"}
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if not (module == cli or module.startswith(cli + ".")) and module not in allowed
        for target in targets if target == cli or target.startswith(cli + ".")
    )


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(PACKAGE, onlineeval._EXPORTS)


def test_the_graph_reads_every_module_and_its_imports(graph):
    # the reading works (else the tests below would check nothing)
    assert len(graph) > 100
    assert "onlineeval.report.build" in graph["onlineeval.cli.report"] or any(
        t.startswith("onlineeval.report") for t in graph["onlineeval.cli.report"])
    assert "onlineeval.cli" in graph["onlineeval.__main__"]
    # a lazy re-export resolves to its module: report.build's `from onlineeval import
    # load_logs`
    assert "onlineeval.logs" in graph["onlineeval.report.build"]


def test_no_module_outside_the_cli_imports_the_cli(graph):
    assert cli_importers(graph) == []


def test_no_import_cycle_among_the_subpackages(graph):
    assert cycles(unit_graph(graph)) == []


def test_every_import_goes_to_its_own_layer_or_a_lower_one(graph):
    assert layer_violations(unit_graph(graph), LAYERS) == []


def test_every_layer_unit_exists():
    # a name in LAYERS that is no module is a typo that would leave a module unplaced
    for layer in LAYERS:
        for unit in layer - {"onlineeval"}:
            assert (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file(), unit


# --- the checks find what they look for ---------------------------------------------------

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "onlineeval"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_checks_catch_a_cli_import_a_cycle_and_an_upward_import(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "cli/__init__.py": "from onlineeval.stats import t\n",
        "cli/_output.py": "",
        # a lower layer reaching for the CLI's private helper, lazily, inside a function
        "stats/__init__.py": "def f():\n    from onlineeval.cli._output import emit\n",
        "stats/t.py": "from . import u\nfrom ..errors import E\n",
        "stats/u.py": "",
        "logs/__init__.py": "from onlineeval import load\n",  # a lazy re-export of offline
        "offline/__init__.py": "import onlineeval.logs\n",
        "__main__.py": "from onlineeval.cli import main\n",
    })
    g = import_graph(pkg, {"load": "onlineeval.offline"})
    assert g["onlineeval.stats.t"] == {"onlineeval.stats", "onlineeval.stats.u",
                                       "onlineeval.errors"}
    assert cli_importers(g) == ["onlineeval.stats imports onlineeval.cli._output"]
    units = unit_graph(g)
    assert cycles(units) == [["cli", "stats"], ["logs", "offline"]]
    layers = (frozenset({"onlineeval", "errors"}), frozenset({"stats", "logs"}),
              frozenset({"offline"}), frozenset({"cli", "__main__"}))
    assert layer_violations(units, layers) == [
        "logs (layer 1) imports offline (layer 2)",
        "stats (layer 1) imports cli (layer 3)",
    ]
    unplaced = (frozenset({"onlineeval"}), *layers[1:])
    assert layer_violations(units, unplaced)[0] == \
        "errors is in no layer: place it in LAYERS (tests/test_layers.py)"
