"""The API namespace: every dotted path README.md and docs/ show works after a plain
``import onlineeval``, and a name that is a module is that module in every import order
(callable where it shares its name with its main function; see onlineeval.namespace)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import onlineeval

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# the paths the issue names, whatever the README says today
NAMED = ["onlineeval.agreement.tau_matrix", "onlineeval.simulate.ClickModel",
         "onlineeval.offline.compare"]
# named by docs/architecture.md before they exist: the offline measures reference generator
# lands with the engine refactor (checked as soon as its module is there)
def readme_paths() -> list[str]:
    """Every ``onlineeval.x.y`` in README.md and docs/ (prose and code), and every name a
    ``from onlineeval.x import a, b`` line there imports, as a dotted path."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    paths = set(re.findall(r"(?<![\w./-])onlineeval(?:\.[A-Za-z_]\w*)+", text))
    for module, names in re.findall(r"from (onlineeval(?:\.\w+)*) import ([\w ,]+)", text):
        paths.update(f"{module}.{n.strip()}" for n in names.split(",") if n.strip())
    return sorted(paths)


def test_the_readme_shows_dotted_paths() -> None:
    paths = readme_paths()
    # the extraction works: the README shows these (else this test would check nothing)
    assert {"onlineeval.agreement.tau_matrix", "onlineeval.offline.compare",
            "onlineeval.interleaving.team_draft"} <= set(paths)
    assert len(paths) >= 20


def _resolve_code() -> str:
    paths = readme_paths() + NAMED
    return (
        "import json, onlineeval\n"
        "bad = {}\n"
        f"for path in {paths!r}:\n"
        "    obj = onlineeval\n"
        "    try:\n"
        "        for part in path.split('.')[1:]:\n"
        "            obj = getattr(obj, part)\n"
        "    except AttributeError as exc:\n"
        "        bad[path] = str(exc)\n"
        "print(json.dumps(bad))\n"
    )


_SHADOW_CODE = (
    "import importlib, json, pkgutil, sys\n"
    "{}\n"
    "import onlineeval\n"
    "names = [m.name for m in pkgutil.walk_packages(onlineeval.__path__, 'onlineeval.')\n"
    "         if not m.name.endswith('__main__')]\n"
    "for n in names:\n"
    "    importlib.import_module(n)\n"
    "bad = {{}}\n"
    "for n in names:\n"
    "    parent, _, leaf = n.rpartition('.')\n"
    "    got = getattr(sys.modules[parent], leaf)\n"
    "    if got is not sys.modules[n]:\n"
    "        bad[n] = type(got).__name__\n"
    "print(json.dumps(bad))\n"
)
# today's shadowing came from the order: a function bound first, or a package first
ORDERS = (
    "import onlineeval as oe; oe.simulate; oe.abtest; oe.agreement; oe.rbo; oe.convert",
    "from onlineeval import simulate, abtest, agreement\n"
    "from onlineeval.offline import compare, rbo\n"
    "from onlineeval.interleaving import team_draft, balanced",
    "import onlineeval.offline.compare as m\n"
    "import onlineeval.interleaving.team_draft",
)

_NAMED_CODE = (
    "import inspect, json, onlineeval as oe\n"
    "from onlineeval.interleaving import team_draft\n"
    "a = team_draft(['d1', 'd2', 'd3'], ['d2', 'd4', 'd1'], k=3, rng=42)\n"
    "b = oe.interleaving.team_draft.team_draft(['d1', 'd2', 'd3'], ['d2', 'd4', 'd1'],"
    " k=3, rng=42)\n"
    "ra, rb = {'q1': ['d1', 'd2', 'd3']}, {'q1': ['d1', 'd3', 'd2']}\n"
    "r1 = oe.offline.rbo(ra, rb, p=0.9).to_dict()\n"
    "r2 = oe.offline.rbo.rbo(ra, rb, p=0.9).to_dict()\n"
    "print(json.dumps([list(a.docs) == list(b.docs), list(a.teams) == list(b.teams),\n"
    "    str(r1) == str(r2),\n"
    "    list(inspect.signature(oe.abtest).parameters)[0],\n"
    "    list(inspect.signature(oe.simulate).parameters)[:2],\n"
    "    list(inspect.signature(oe.agreement).parameters)[0],\n"
    "    callable(oe.simulate), callable(oe.abtest), callable(oe.agreement),\n"
    "    oe.simulate.__name__]))\n"
)


@pytest.fixture(scope="module")
def fresh(fresh_interpreters) -> dict[str, object]:
    """The JSON printed by each snippet of this module, each run in an interpreter that has
    imported no onlineeval module (one launch for all of them: see fresh_interpreters)."""
    codes = {"resolve": _resolve_code(), "named": _NAMED_CODE,
             **{f"order{i}": _SHADOW_CODE.format(o) for i, o in enumerate(ORDERS)}}
    outs = fresh_interpreters(list(codes.values()))
    return {name: json.loads(out) for name, out in zip(codes, outs, strict=True)}


def test_every_readme_path_resolves_after_a_plain_import(fresh) -> None:
    assert fresh["resolve"] == {}


def test_no_function_shadows_a_module_in_any_import_order(fresh) -> None:
    # each order, then every module of the package: each ``parent.leaf`` attribute that is
    # not the module ``parent.leaf`` itself
    assert [fresh[f"order{i}"] for i in range(len(ORDERS))] == [{}, {}, {}]


def test_modules_named_like_their_function_call_it(fresh) -> None:
    assert fresh["named"] == [True, True, True, "logs", ["outdir", "seed"], "table",
                              True, True, True, "onlineeval.simulate"]


def test_every_export_resolves() -> None:
    for name in onlineeval._EXPORTS:
        assert callable(getattr(onlineeval, name)), name
    # a top-level function that is not a subpackage is the function itself
    assert type(onlineeval.rbo).__name__ == "function"
    assert type(onlineeval.convert).__name__ == "function"
    assert {"offline", "simulate", "logs", "rbo"} <= set(dir(onlineeval))
