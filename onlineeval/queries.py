"""Load the SQL files of ``sql/`` by name.

Each file holds one query: a header of ``-- key: value`` comment lines followed by a chain of
named CTEs. The header documents what the query computes, its grain, its parameters and the
columns it needs; two keys are also machine-read:

``-- params: a, b``
    named bind parameters, written ``$a`` in the SQL. Values are always bound, never pasted.
``-- identifiers: by``
    lists of column names the caller chooses (e.g. the group-by columns). They are the only
    text ever substituted, always double-quoted with :func:`quote_ident`:
    ``{{by}}`` → ``"a", "b"``; ``{{by:s.}}`` → ``s."a", s."b"``; a trailing comma inside the
    braces (``{{by,}}``, ``{{by:s.,}}``) puts a comma after every item, so an empty list
    leaves nothing behind.

The loader checks, when a file is read, that the declared parameters and identifiers are the
ones the body uses. Files are found in the installed package (``onlineeval/sql``, where the
wheel puts them) or, in a source checkout, in the repository's top-level ``sql/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from onlineeval.errors import InvalidParameterError, UnknownNameError

_PARAM = re.compile(r"(?<![\w$])\$([A-Za-z_]\w*)")
_IDENT = re.compile(r"\{\{(\w+)(?::([\w.]+))?(,?)\}\}")
_HEADER = re.compile(r"^--\s*([a-z_]+):\s*(.*)$")


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
class Query:
    """One SQL file: its name (path below ``sql/`` without ``.sql``), header and body."""

    name: str
    path: Path
    text: str
    meta: dict[str, str] = field(default_factory=dict)
    params: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()

    @property
    def doc(self) -> str:
        """The header comment, as documentation."""
        lines = []
        for line in self.text.splitlines():
            if not line.startswith("--"):
                break
            lines.append(line[2:].strip())
        return "\n".join(lines)

    def render(self, **identifiers: list[str] | tuple[str, ...]) -> str:
        """Return the SQL text with identifier placeholders filled with quoted names."""
        missing = set(self.identifiers) - set(identifiers)
        extra = set(identifiers) - set(self.identifiers)
        if missing or extra:
            raise InvalidParameterError(
                f"query {self.name!r} takes identifiers {sorted(self.identifiers)}; "
                f"got {sorted(identifiers)}"
            )

        def fill(m: re.Match[str]) -> str:
            names = identifiers[m.group(1)]
            prefix = m.group(2) or ""
            items = [prefix + quote_ident(n) for n in names]
            if m.group(3):
                return ", ".join(items) + "," if items else ""
            return ", ".join(items)

        # Comment lines are documentation (they may mention {{by}}); they are left out of the
        # rendered SQL so a quoted name holding a newline can never end up inside a comment.
        return _IDENT.sub(fill, _sql_lines(self.text))

    def bind(self, **values: Any) -> dict[str, Any]:
        """Check that exactly the declared parameters are given; return them for execute()."""
        missing = set(self.params) - set(values)
        extra = set(values) - set(self.params)
        if missing or extra:
            raise InvalidParameterError(
                f"query {self.name!r} takes parameters {sorted(self.params)}; "
                f"got {sorted(values)}"
            )
        return dict(values)


def _sql_lines(text: str) -> str:
    """The query without its comment lines (the header and any comment-only line)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(v.strip().lstrip("$") for v in value.split(",") if v.strip())


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
    used_idents = {m.group(1) for m in _IDENT.finditer(body)}
    if used_idents != set(idents):
        raise InvalidParameterError(
            f"{path}: header declares identifiers {sorted(idents)} but the query uses "
            f"{sorted(used_idents)}"
        )
    return Query(name=name, path=path, text=text, meta=meta, params=params, identifiers=idents)


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
