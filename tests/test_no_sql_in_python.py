"""SQL lives in sql/: no .py file of the package holds SQL in its string literals.

Every string constant of every module under onlineeval/ (docstrings left out; the literal
parts of an f-string joined, with ``{}`` for each replacement field) is searched for the
shape of a statement or clause: SELECT, FROM, WHERE, JOIN, GROUP BY, ORDER BY, HAVING,
UNION, LIMIT, CREATE / INSERT / COPY / ATTACH / DESCRIBE / PRAGMA / SET VARIABLE, a CTE
(``WITH x AS (``), an aggregate FILTER, in upper case anywhere, and the statement shapes
(``select ... from``, ``create view``, ``left join``, ...) in any case.

Column conversions (one CAST / TRY_CAST / CASE of one quoted column, chosen by the source
column's type in ``onlineeval/logs/casting.py``) are expression fragments, not queries, and
are outside this check by design: they hold none of the words above.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "onlineeval"

_UPPER = re.compile(
    r"\b(SELECT|FROM|WHERE|JOIN|GROUP BY|ORDER BY|HAVING|UNION|LIMIT|INSERT|CREATE|COPY|"
    r"ATTACH|DESCRIBE|PRAGMA|SET VARIABLE)\b|\bWITH\s+\w+\s+AS\s*\(|FILTER\s*\(\s*WHERE"
)
_ANY_CASE = re.compile(
    r"\bselect\b.*\bfrom\b|\bcreate\s+(or\s+replace\s+)?(temp\w*\s+)?(table|view|macro)\b|"
    r"\binsert\s+into\b|\bfilter\s*\(\s*where\b|\bleft\s+join\b|\bunion\s+all\b",
    re.IGNORECASE | re.DOTALL,
)

#: (file, the function whose literals may hold SQL) -> why. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    ("queries.py", "create"): "the loader stores a rendered query as a temporary view or "
                              "table, binding a view's parameters into session variables",
    ("queries.py", "project"): "the loader's typed views: a source through the column "
                               "conversion expressions of logs/casting.py",
    ("queries.py", "view_parameters"): "reads back the session variables create() bound "
                                       "a view's parameters into",
    ("queries.py", "set_view_parameters"): "binds new values into the session variables "
                                           "create() bound a view's parameters into",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _strings(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, enclosing function, text) of every string literal but docstrings."""
    skip = _docstrings(tree)
    out = []

    def visit(node: ast.AST, func: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            func = node.name
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}"
                           for v in node.values)
            out.append((node.lineno, func, text))
            return
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in skip):
            out.append((node.lineno, func, node.value))
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(tree, "")
    return out


def sql_literals(path: Path) -> list[tuple[int, str, str]]:
    """The string literals of ``path`` that look like SQL: (line, function, text)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(line, func, text) for line, func, text in _strings(tree)
            if _UPPER.search(text) or _ANY_CASE.search(text)]


def test_no_sql_in_the_package_outside_the_allow_list():
    found = []
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, func, text in sql_literals(path):
            if (rel, func) in ALLOWED:
                used.add((rel, func))
                continue
            found.append(f"{rel}:{line} ({func or 'module'}): {text[:70]!r}")
    assert not found, "SQL in Python string literals (move it to sql/):\n" + "\n".join(found)
    assert used == set(ALLOWED), f"allow-list entries no longer needed: {set(ALLOWED) - used}"


@pytest.mark.parametrize("text", [
    "SELECT count(*) FROM t", "select a from t", "x FROM y", "count(*) FILTER (WHERE x)",
    "CREATE OR REPLACE TEMP VIEW v AS ", "create temp table t as", "GROUP BY a",
    "WITH per_user AS (", "a LEFT JOIN b", "DESCRIBE ", "SET VARIABLE x = 1",
])
def test_the_check_sees_sql(text, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(f"def g():\n    return f{text!r} + str(1)\n", encoding="utf-8")
    assert sql_literals(f), text


@pytest.mark.parametrize("text", [
    "choose one from the list", "the window start", "cannot group by 'x': no column",
    "a TIMESTAMP WITH TIME ZONE column", "CAST(x AS VARCHAR)", "where is the file?",
])
def test_prose_and_expressions_are_not_sql(text, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(f"X = {text!r}\n", encoding="utf-8")
    assert not sql_literals(f), text


def test_docstrings_are_not_checked(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""SELECT a FROM t"""\n\ndef g():\n    """GROUP BY x"""\n', encoding="utf-8")
    assert not sql_literals(f)
