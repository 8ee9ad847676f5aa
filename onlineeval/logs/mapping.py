"""The ``columns=`` argument of :func:`onlineeval.load_logs`: rename source columns.

Two forms are accepted:

* per table: ``{"searches": {"qid": "search_id"}, "clicks": {"qid": "search_id"}}``;
* flat: ``{"qid": "search_id", "time": "ts"}`` — applied to every table that has the source
  column (and for which the target is a canonical column).

Keys are source column names, values canonical names (or ``None`` to ignore a source column).
A mapping that names a source column no table has, or a target that is not a canonical
column, is a :class:`~onlineeval.errors.SchemaError`.

The command line's ``--columns`` and ``--columns-file`` are parsed (by
:mod:`onlineeval.logs.mapping_text`) into this same mapping, a :class:`ColumnMap` that also
remembers where each entry was written; the rules below are then the same for both, and
their errors name the option or file line and show the fix in the spelling the user wrote.
"""

from __future__ import annotations

import contextvars
import difflib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from onlineeval.errors import SchemaError
from onlineeval.logs.schema import SCHEMA, TABLES, column_names

ALL_CANONICAL = frozenset(c.name for cols in SCHEMA.values() for c in cols)


@dataclass(frozen=True)
class Spelling:
    """How a column mapping is written where the user wrote it: the API's ``columns=`` or the
    command line's options. Errors about the mapping name ``where`` an entry was written and
    show a fix with :meth:`fix`."""

    cli: bool = False
    #: (table or None for a flat entry, source column) -> where that entry was written
    places: Mapping[tuple[str | None, str], str] = field(default_factory=dict)

    def where(self, table: str | None, source: str | None = None) -> str:
        """The option or file line that wrote the entry (``columns=`` in the API)."""
        if not self.cli:
            return "columns="
        for key in ((table, source), (None, source)):
            if key in self.places:
                return self.places[key]
        return "--columns"

    def fix(self, table: str, source: str, target: str | None) -> str:
        """The entry mapping ``table.source`` to ``target`` (None: leave it out), as the user
        would write it."""
        if not self.cli:
            return f"columns={{{table!r}: {{{source!r}: {target!r}}}}}"
        value = "" if target is None else target
        toml_value = '""' if target is None else f'"{target}"'
        return (f"--columns {table}.{source}={value} (or the line {_toml_key(source)} = "
                f"{toml_value} under [{table}] of a --columns-file)")


API = Spelling()


def _toml_key(name: str) -> str:
    bare = name.replace("_", "").replace("-", "").isalnum() and name.isascii()
    return name if bare else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ColumnMap(dict):  # type: ignore[type-arg]
    """A ``columns=`` mapping read from the command line: a plain dict for the loader, plus
    the :class:`Spelling` its errors use."""

    def __init__(self, entries: Mapping[str, Any], spelling: Spelling) -> None:
        super().__init__(entries)
        self.spelling = spelling


_SPELLING: contextvars.ContextVar[Spelling] = contextvars.ContextVar("spelling", default=API)


@contextmanager
def spelled_as(columns: Any) -> Iterator[Spelling]:
    """While loading with ``columns``, advice about mappings is written its way."""
    token = _SPELLING.set(getattr(columns, "spelling", API))
    try:
        yield _SPELLING.get()
    finally:
        _SPELLING.reset(token)


def spelling() -> Spelling:
    """The spelling of the mapping being loaded (the API's outside :func:`spelled_as`)."""
    return _SPELLING.get()


def _hint(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_pairs(where: str, mapping: Any, table: str | None = None) -> dict[str, str | None]:
    sp = spelling()
    if not isinstance(mapping, Mapping):
        raise SchemaError(
            f"{sp.where(table)}{where}: expected a dict of source column -> canonical column; "
            f"got {type(mapping).__name__}"
        )
    out: dict[str, str | None] = {}
    for src, dst in mapping.items():
        if not isinstance(src, str) or not (dst is None or isinstance(dst, str)):
            raise SchemaError(
                f"{sp.where(table, src if isinstance(src, str) else None)}{where}: keys and "
                f"values must be column names (str); got {src!r}: {dst!r}"
            )
        out[src] = dst
    return out


def per_table(
    columns: Mapping[str, Any] | None, available: dict[str, tuple[str, list[str]]],
) -> dict[str, dict[str, str | None]]:
    """Normalize ``columns`` to ``{table: {source: canonical or None}}``.

    ``available`` maps each opened table to ``(label, source column names)``; it is used to
    check that every named source column exists.
    """
    result: dict[str, dict[str, str | None]] = {t: {} for t in available}
    if not columns:
        return result
    sp = spelling()
    if not isinstance(columns, Mapping):
        raise SchemaError(f"columns= must be a dict; got {type(columns).__name__}")
    keys = set(columns)
    table_keys = keys & set(TABLES)
    nested = [k for k, v in columns.items() if isinstance(v, Mapping)]
    if table_keys and len(nested) == len(keys) and table_keys == keys:
        for table, mapping in columns.items():
            pairs = _check_pairs(f"{{{table!r}: ...}}" if not sp.cli else "", mapping, table)
            if table not in available:
                raise SchemaError(
                    f"{sp.where(table, next(iter(pairs), None))} maps columns of table "
                    f"{table!r}, but no {table} table was given"
                )
            label, cols = available[table]
            canon = list(column_names(table))
            for src, dst in pairs.items():
                if src not in cols:
                    raise SchemaError(
                        f"{label}: {sp.where(table, src)} maps {table} column {src!r} to "
                        f"{dst!r}, but the {table} table has no column {src!r}"
                        f"{_hint(src, cols)}; its columns are: {', '.join(cols)}"
                    )
                if dst is not None and dst not in canon:
                    raise SchemaError(
                        f"{sp.where(table, src)} maps {table} column {src!r} to {dst!r}, which "
                        f"is not a canonical {table} column{_hint(dst, canon)}; canonical "
                        f"columns are: {', '.join(canon)}"
                    )
            result[table] = pairs
        return result
    if table_keys and nested:
        how = ("write every entry as TABLE.SOURCE=CANONICAL (searches.uid=user_id) or none "
               "with a table" if sp.cli else
               "use either {'searches': {'src': 'dst'}, ...} or one flat {'src': 'dst'}")
        raise SchemaError(
            f"{'--columns/--columns-file' if sp.cli else 'columns='} mixes per-table entries "
            f"({', '.join(sorted(table_keys))}) with other keys; {how}"
        )
    pairs = _check_pairs("{...}" if not sp.cli else "", columns)
    for src, dst in pairs.items():
        if dst is not None and dst not in ALL_CANONICAL:
            raise SchemaError(
                f"{sp.where(None, src)} maps column {src!r} to {dst!r}, which is not a "
                f"canonical column{_hint(dst, sorted(ALL_CANONICAL))}; canonical columns are: "
                f"{', '.join(sorted(ALL_CANONICAL))}"
            )
        used = False
        for table, (_, cols) in available.items():
            if src in cols and (dst is None or dst in column_names(table)):
                result[table][src] = dst
                used = True
        if not used:
            where = "; ".join(
                f"{label}: {', '.join(cols)}" for label, cols in available.values()
            )
            raise SchemaError(
                f"{sp.where(None, src)} maps column {src!r} to {dst!r}, but no table has a "
                f"column {src!r} where {dst!r} is canonical. Columns found — {where}"
            )
    return result


def resolve(
    table: str, label: str, source_columns: list[str], mapping: dict[str, str | None],
) -> dict[str, str]:
    """``{output name: source column}`` for one table after applying its mapping.

    Canonical columns come from the mapping, from a source column of the same name, or — when
    neither exists — from a source column whose name differs only in case (``Search_ID``); the
    remaining source columns keep their names. Two source columns ending up with one name (SQL
    names ignore case) is an error.
    """
    canon = set(column_names(table))
    explicit = {dst for src, dst in mapping.items() if dst is not None}
    present = explicit | {c for c in source_columns if c in canon and c not in mapping}
    by_lower = {c.lower(): c for c in canon - present}
    out: dict[str, str] = {}
    seen: dict[str, str] = {}  # lower-cased output name -> source column
    for src in source_columns:
        if src in mapping:
            dst = mapping[src]
            if dst is None:
                continue
        elif src not in canon and src.lower() in by_lower:
            dst = by_lower.pop(src.lower())
        else:
            dst = src
        if dst.lower() in seen:
            raise SchemaError(
                f"{label}: both {seen[dst.lower()]!r} and {src!r} would become {table} column "
                f"{dst!r} (SQL names ignore case); map one of them elsewhere or leave it out "
                f"({spelling().fix(table, src, None)})"
            )
        seen[dst.lower()] = src
        out[dst] = src
    return out
