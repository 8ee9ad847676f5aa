"""Load the SQL files of ``sql/`` by name, and bind what callers choose.

Each file holds one query: a header of ``-- key: value`` comment lines followed by a chain of
named CTEs. The header documents what the query computes, its grain, its parameters and the
columns it needs; three keys are also machine-read:

``-- params: a, b``
    named bind parameters, written ``$a`` in the SQL. Values are always bound, never pasted.
``-- identifiers: by``
    lists of column (or view) names the caller chooses, e.g. the group-by columns. They are
    the only text ever substituted, always double-quoted with :func:`quote_ident`:

    * ``{{by}}`` → ``"a", "b"``; a trailing comma inside the braces (``{{by,}}``) puts a comma
      after every item, so an empty list leaves nothing behind;
    * ``{{by:s.}}`` → ``s."a", s."b"`` (a prefix);
    * ``{{by:sum(@) AS @}}`` → ``sum("a") AS "a", sum("b") AS "b"``: a template written in the
      SQL file, repeated per item with ``@`` standing for the quoted name. An item may be a
      tuple of names (``@1``, ``@2``, ... stand for its parts; ``@`` is ``@1``);
    * ``{{by:TEMPLATE|SEP}}`` joins the items with SEP instead of ``", "`` (SEP may be empty
      when the template carries its own connective, e.g. ``{{c:@ IS NULL OR |}}``).

    So a query whose shape follows the caller's column list is still written in its file.
``-- switches: dup``
    booleans the caller chooses: ``{{#dup}} ... {{/dup}}`` is kept only when ``dup`` is true,
    ``{{^dup}} ... {{/dup}}`` only when it is false. They select which variant of the query
    runs (e.g. leave out the anti-join against a table of bad keys when there are none).
    A section may also be named after an identifier: ``{{#by}} GROUP BY {{by}} {{/by}}`` is
    kept only when the list ``by`` is not empty (explicit group lists instead of
    ``GROUP BY ALL``, which is outside the portable subset).
``-- duckdb_only: name``
    switches that turn on a DuckDB-only optimisation (``docs/sql-portability.md``); the
    query with them off is the definition, which every engine runs.
``-- engines: duckdb (why)``
    the whole file is DuckDB-only (the loader's file readers); the others are in the
    portable subset (:mod:`onlineeval.engines.dialects` checks both).

The loader checks, when a file is read, that the declared parameters, identifiers and
switches are the ones the body uses. Files are found in the installed package
(``onlineeval/sql``, where the wheel puts them) or, in a source checkout, in the
repository's top-level ``sql/``.

This module is the one place in the package that writes SQL text around a query: the
quoting of identifiers and :func:`create`, which stores a rendered query as a temporary view
or table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from onlineeval.errors import InvalidParameterError, UnknownNameError

_PARAM = re.compile(r"(?<![\w$])\$([A-Za-z_]\w*)")
# {{name}}, {{name,}}, {{name:MOD}}, {{name:MOD,}}, {{name:MOD|SEP}}; MOD and SEP never hold "}}"
_IDENT = re.compile(r"\{\{(\w+)(?::((?:(?!\}\})[^|])*?))?(?:\|((?:(?!\}\}).)*?))?(,?)\}\}")
_SECTION = re.compile(r"\{\{([#^])(\w+)\}\}(.*?)\{\{/\2\}\}", re.S)
_SECTION_TAG = re.compile(r"\{\{[#^/](\w+)\}\}")
_ITEM = re.compile(r"@([1-9]?)")
_HEADER = re.compile(r"^--\s*([a-z_]+):\s*(.*)$")
# an output column documented in the header: "--   * name TYPE[, tag, ...]: description"
_COLUMN = re.compile(r"^--\s+\*\s+(\w+)\s+([A-Z][A-Z ]*[A-Z])((?:,\s*\w+)*):\s*(.*)$")


def quote_ident(name: str) -> str:
    """Quote an SQL identifier for DuckDB: wrap in double quotes, double any inside."""
    if not isinstance(name, str) or name == "" or "\x00" in name:
        raise InvalidParameterError(f"a column name must be a non-empty string; got {name!r}")
    return '"' + name.replace('"', '""') + '"'


def sql_dir() -> Path:
    """Directory holding the SQL files: inside the installed package, else the checkout's."""
    packaged = resources.files("onlineeval") / "sql"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "sql"


@dataclass(frozen=True)
class Column:
    """An output column documented in a query's header (``--   * name TYPE, tags: text``)."""

    name: str
    type: str
    tags: frozenset[str]
    doc: str


@dataclass(frozen=True)
class Query:
    """One SQL file: its name (path below ``sql/`` without ``.sql``), header and body."""

    name: str
    path: Path
    text: str
    meta: dict[str, str] = field(default_factory=dict)
    params: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    #: the output columns the header documents as ``--   * name TYPE, tags: text`` lines
    columns: tuple[Column, ...] = ()

    @property
    def portable(self) -> bool:
        """False when the header says ``engines: duckdb`` (a DuckDB-only file)."""
        return self.meta.get("engines", "").split(" ", 1)[0] != "duckdb"

    @property
    def duckdb_only(self) -> tuple[str, ...]:
        """The switches the header's ``duckdb_only`` names: DuckDB-only optimisations."""
        return _split_list(self.meta.get("duckdb_only", "").split("(", 1)[0])

    def tagged(self, tag: str) -> tuple[str, ...]:
        """Names of the documented output columns carrying ``tag``, in order."""
        return tuple(c.name for c in self.columns if tag in c.tags)

    @property
    def doc(self) -> str:
        """The header comment, as documentation."""
        lines = []
        for line in self.text.splitlines():
            if not line.startswith("--"):
                break
            lines.append(line[2:].strip())
        return "\n".join(lines)

    def render(self, **chosen: Sequence[str | tuple[str, ...]] | bool) -> str:
        """Return the SQL text with the switches applied and the identifier placeholders
        filled with quoted names: ``render(by=["a"], dup=True)``."""
        key = _render_key(self, chosen)
        text = _RENDERED.get(key) if key is not None else None
        if text is None:
            text = self._render(chosen)
            if key is not None:
                if len(_RENDERED) >= _RENDERED_MAX:
                    _RENDERED.clear()
                _RENDERED[key] = text
        return text

    def _render(self, chosen: dict[str, Any]) -> str:
        declared = set(self.identifiers) | set(self.switches)
        if set(chosen) != declared:
            raise InvalidParameterError(
                f"query {self.name!r} takes identifiers {sorted(self.identifiers)}"
                + (f" and switches {sorted(self.switches)}" if self.switches else "")
                + f"; got {sorted(chosen)}"
            )
        for name in self.switches:
            if not isinstance(chosen[name], bool):
                raise InvalidParameterError(
                    f"switch {name!r} of query {self.name!r} must be True or False; "
                    f"got {chosen[name]!r}"
                )
        for name in self.identifiers:
            if isinstance(chosen[name], str | bool):
                raise InvalidParameterError(
                    f"identifier {name!r} of query {self.name!r} takes a list of names; "
                    f"got {chosen[name]!r}"
                )
        # Comment lines are documentation (they may mention {{by}}); they are left out of the
        # rendered SQL so a quoted name holding a newline can never end up inside a comment.
        text = _apply_switches(_sql_lines(self.text), chosen)
        return _IDENT.sub(lambda m: _fill(m, chosen[m.group(1)]), text)

    def bind(self, sql: str | None = None, /, **values: Any) -> dict[str, Any]:
        """Check that exactly the declared parameters are given; return them for execute().

        With the rendered ``sql``, only the parameters that text uses are returned (a
        switched-off section may drop some, and DuckDB refuses unused ones).
        """
        missing = set(self.params) - set(values)
        extra = set(values) - set(self.params)
        if missing or extra:
            raise InvalidParameterError(
                f"query {self.name!r} takes parameters {sorted(self.params)}; "
                f"got {sorted(values)}"
            )
        if sql is None:
            return dict(values)
        used = set(_PARAM.findall(sql))
        return {k: v for k, v in values.items() if k in used}


#: rendered texts by query and choices: a small log's load renders the same few dozen
#: queries each time, and rendering (comments out, switches, quoting) costs as much as a
#: cheap query; bounded, as identifiers hold user column names
_RENDERED: dict[tuple[Any, ...], str] = {}
_RENDERED_MAX = 4096


def _render_key(query: Query, chosen: dict[str, Any]) -> tuple[Any, ...] | None:
    """A hashable key for rendering ``query`` with ``chosen``, or None when a choice is not
    a bool or a list of names (render then refuses or renders it uncached)."""
    items = []
    for name, value in sorted(chosen.items()):
        if isinstance(value, bool):
            items.append((name, value))
        elif isinstance(value, list | tuple) and all(
                isinstance(v, str) or (isinstance(v, tuple) and all(isinstance(p, str) for p in v))
                for v in value):
            items.append((name, type(value).__name__, tuple(value)))
        else:
            return None
    return (query.name, query.text, tuple(items))


def _sql_lines(text: str) -> str:
    """The query without its comment lines (the header and any comment-only line)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def _apply_switches(text: str, chosen: dict[str, Any]) -> str:
    """Keep or drop each ``{{#name}}...{{/name}}`` / ``{{^name}}...{{/name}}`` section,
    innermost first (sections may nest)."""
    while True:
        new = _SECTION.sub(
            lambda m: m.group(3) if bool(chosen[m.group(2)]) == (m.group(1) == "#") else "",
            text)
        if new == text:
            return new
        text = new


def _fill(m: re.Match[str], names: Any) -> str:
    """One identifier placeholder with its quoted names (see the module docstring)."""
    mod, sep, trailing = m.group(2) or "", m.group(3), m.group(4)
    items = []
    for item in names:
        parts = (item,) if isinstance(item, str) else tuple(item)
        quoted = [quote_ident(part) for part in parts]
        if "@" in mod:
            used = [int(k or 1) for k in _ITEM.findall(mod)]
            if max(used) > len(quoted):
                raise InvalidParameterError(
                    f"placeholder {m.group(0)!r} uses @{max(used)} but an item has "
                    f"{len(quoted)} part(s): {parts!r}"
                )
            items.append(_ITEM.sub(lambda x, q=quoted: q[int(x.group(1) or 1) - 1], mod))
        else:
            if len(quoted) != 1:
                raise InvalidParameterError(
                    f"placeholder {m.group(0)!r} takes single names; got {parts!r}"
                )
            items.append(mod + quoted[0])
    joined = (", " if sep is None else sep).join(items)
    return joined + "," if trailing and items else joined


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(v.strip().lstrip("$") for v in value.split(",") if v.strip())


def _columns(text: str) -> tuple[Column, ...]:
    """The header's ``--   * name TYPE, tags: text`` lines (deeper-indented lines after one
    continue its text)."""
    found: list[list] = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        m = _COLUMN.match(line)
        if m:
            tags = [t.strip() for t in m.group(3).split(",") if t.strip()]
            found.append([m.group(1), m.group(2), frozenset(tags), m.group(4).strip()])
        elif found and re.match(r"^--\s{4,}\S", line) and not _HEADER.match(line):
            found[-1][3] += " " + line[2:].strip()
        elif found and not line[2:].startswith("   "):
            break
    return tuple(Column(*c) for c in found)


def parse(name: str, path: Path, text: str) -> Query:
    meta: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        m = _HEADER.match(line)
        if m:
            key = m.group(1)
            meta[key] = m.group(2).strip()
        elif key is not None:
            meta[key] += " " + line[2:].strip()
    columns = _columns(text)
    params = _split_list(meta.get("params", "")) if meta.get("params", "none") != "none" else ()
    idents = (
        _split_list(meta.get("identifiers", ""))
        if meta.get("identifiers", "none") != "none" else ()
    )
    body = _sql_lines(text)
    used = set(_PARAM.findall(body))
    if used != set(params):
        raise InvalidParameterError(
            f"{path}: header declares parameters {sorted(params)} but the query uses "
            f"{sorted(used)}"
        )
    for line in body.splitlines():
        if "--" in line and _IDENT.search(line.split("--", 1)[1]):
            raise InvalidParameterError(
                f"{path}: an identifier placeholder stands inside a trailing comment "
                f"({line.strip()!r}); placeholders belong in SQL text or header lines only"
            )
    switches = (
        _split_list(meta.get("switches", ""))
        if meta.get("switches", "none") != "none" else ()
    )
    # a section may also be named after an identifier list: kept when the list is not empty
    tags = set(_SECTION_TAG.findall(body)) - set(idents)
    if tags != set(switches):
        raise InvalidParameterError(
            f"{path}: header declares switches {sorted(switches)} but the query uses "
            f"{sorted(tags)}"
        )
    if _SECTION_TAG.search(_apply_switches(body, dict.fromkeys((*switches, *idents), True))):
        raise InvalidParameterError(
            f"{path}: a {{{{#switch}}}} section is not closed by its {{{{/switch}}}}"
        )
    used_idents = {m.group(1) for m in _IDENT.finditer(body)}
    if used_idents != set(idents):
        raise InvalidParameterError(
            f"{path}: header declares identifiers {sorted(idents)} but the query uses "
            f"{sorted(used_idents)}"
        )
    return Query(name=name, path=path, text=text, meta=meta, params=params,
                 identifiers=idents, switches=switches, columns=columns)


@cache
def load(name: str) -> Query:
    """Load ``sql/<name>.sql`` (``name`` may contain ``/``), checking its header."""
    base = sql_dir()
    path = (base / f"{name}.sql").resolve()
    if base.resolve() not in path.parents or not path.is_file():
        raise UnknownNameError(
            f"no SQL query named {name!r} in {base}; known: {', '.join(available())}"
        )
    return parse(name, path, path.read_text(encoding="utf-8"))


def available() -> list[str]:
    """Names of every SQL query shipped with the package."""
    base = sql_dir()
    return sorted(str(p.relative_to(base).with_suffix("")) for p in base.rglob("*.sql"))


def _variable(view: str, key: str) -> str:
    """The session variable holding the bound parameter ``key`` of the view ``view``."""
    return f"{view}__{key}"


def create(con: Any, name: str, sql: str, *, table: bool = False,
           params: dict[str, Any] | None = None) -> str:
    """Store the rendered query ``sql`` as the temporary view (or, with ``table``, table)
    ``name`` in ``con``, replacing one of that name; return the name.

    A view runs its query each time it is read. DuckDB cannot store a bound parameter in a
    view, so each one is bound into a session variable of the view's own
    (``SET VARIABLE``, a bound value, never pasted) that the view reads with
    ``getvariable``; DuckDB folds it into the plan as a constant, as it would the bound
    value. (A view made from a parameterised relation instead would be a persistent one,
    written into a file-backed database.)
    """
    params = dict(params or {})
    if _other_engine(con):
        return con.create(name, sql, table=table, params=params)
    if table:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {quote_ident(name)} AS {sql}", params)
        return name
    names = {key: _variable(name, key) for key in params}
    set_view_parameters(con, name, **params)

    def variable(m: re.Match[str]) -> str:
        if m.group(1) not in names:
            raise InvalidParameterError(f"view {name!r}: no value bound for ${m.group(1)}")
        return "getvariable(" + _text_literal(names[m.group(1)]) + ")"

    con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS "
                + _PARAM.sub(variable, sql))
    return name


@contextmanager
def registered(con: Any, name: str, table: Any) -> Iterator[str]:
    """The small table ``table`` (a pyarrow Table: typed columns) registered in ``con`` as
    ``name`` while the block runs: how a query gets a list of values (requests, a calendar)
    in every engine, where only DuckDB could unnest a bound list. Unregistered afterwards."""
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def set_view_parameters(con: Any, name: str, **params: Any) -> None:
    """Bind new values to parameters of the view ``name`` made by :func:`create` (DuckDB):
    its next reads answer for them."""
    for key, value in params.items():
        con.execute(f"SET VARIABLE {quote_ident(_variable(name, key))} = $value", {"value": value})


def drop_table(con: Any, name: str) -> None:
    """Drop the temporary table ``name`` (made by :func:`create`) if it exists."""
    con.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")


def view_parameters(con: Any, name: str, keys: Sequence[str]) -> dict[str, Any]:
    """The values bound to the parameters ``keys`` of the view ``name`` made by
    :func:`create` (None for a key it did not bind): what the view currently answers for."""
    if _other_engine(con):
        return con.view_parameters(name, keys)
    names = [_variable(name, key) for key in keys]
    row = con.execute("SELECT " + ", ".join(f"getvariable(${i + 1})" for i in range(len(names))),
                      names).fetchone()
    return dict(zip(keys, row, strict=True))


def project(con: Any, name: str, source: str, expressions: Sequence[str]) -> str:
    """Store the temporary view ``name`` = the rows of ``source`` through the column
    ``expressions``; return the name. For the loader's typed views only: their expressions
    convert one quoted source column each and are chosen by its type
    (:mod:`onlineeval.logs.casting`, where every conversion is written)."""
    sql = f"SELECT {', '.join(expressions)} FROM {quote_ident(source)}"
    if _other_engine(con):
        return con.create(name, sql)
    con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS " + sql)
    return name


def _other_engine(con: Any) -> bool:
    """A connection of another engine (:mod:`onlineeval.engines`, which names its engine in
    ``con.engine``) stores views its own way; a DuckDB connection has no ``engine``."""
    return getattr(con, "engine", "duckdb") != "duckdb"


def _text_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
