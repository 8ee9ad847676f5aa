"""The ``columns=`` argument of :func:`onlineeval.load_logs`: rename source columns.

Two forms are accepted:

* per table: ``{"searches": {"qid": "search_id"}, "clicks": {"qid": "search_id"}}``;
* flat: ``{"qid": "search_id", "time": "ts"}`` — applied to every table that has the source
  column (and for which the target is a canonical column).

Keys are source column names, values canonical names (or ``None`` to ignore a source column).
A mapping that names a source column no table has, or a target that is not a canonical
column, is a :class:`~onlineeval.errors.SchemaError`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from onlineeval.errors import SchemaError
from onlineeval.logs.schema import SCHEMA, TABLES, column_names

ALL_CANONICAL = frozenset(c.name for cols in SCHEMA.values() for c in cols)


def _hint(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_pairs(where: str, mapping: Any) -> dict[str, str | None]:
    if not isinstance(mapping, Mapping):
        raise SchemaError(
            f"columns={where}: expected a dict of source column -> canonical column; "
            f"got {type(mapping).__name__}"
        )
    out: dict[str, str | None] = {}
    for src, dst in mapping.items():
        if not isinstance(src, str) or not (dst is None or isinstance(dst, str)):
            raise SchemaError(
                f"columns={where}: keys and values must be column names (str); "
                f"got {src!r}: {dst!r}"
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
    if not isinstance(columns, Mapping):
        raise SchemaError(f"columns= must be a dict; got {type(columns).__name__}")
    keys = set(columns)
    table_keys = keys & set(TABLES)
    nested = all(isinstance(v, Mapping) for v in columns.values())
    if table_keys and nested and table_keys == keys:
        for table, mapping in columns.items():
            pairs = _check_pairs(f"{{{table!r}: ...}}", mapping)
            if table not in available:
                raise SchemaError(
                    f"columns= maps columns of table {table!r}, but no {table} table was given"
                )
            label, cols = available[table]
            canon = list(column_names(table))
            for src, dst in pairs.items():
                if src not in cols:
                    raise SchemaError(
                        f"{label}: columns= maps {table} column {src!r} to {dst!r}, but the "
                        f"{table} table has no column {src!r}{_hint(src, cols)}; its columns "
                        f"are: {', '.join(cols)}"
                    )
                if dst is not None and dst not in canon:
                    raise SchemaError(
                        f"columns= maps {table} column {src!r} to {dst!r}, which is not a "
                        f"canonical {table} column{_hint(dst, canon)}; canonical columns are: "
                        f"{', '.join(canon)}"
                    )
            result[table] = pairs
        return result
    if table_keys and nested:
        raise SchemaError(
            f"columns= mixes per-table entries ({', '.join(sorted(table_keys))}) with other "
            "keys; use either {'searches': {'src': 'dst'}, ...} or one flat {'src': 'dst'}"
        )
    pairs = _check_pairs("{...}", columns)
    for src, dst in pairs.items():
        if dst is not None and dst not in ALL_CANONICAL:
            raise SchemaError(
                f"columns= maps column {src!r} to {dst!r}, which is not a canonical column"
                f"{_hint(dst, sorted(ALL_CANONICAL))}; canonical columns are: "
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
                f"columns= maps column {src!r} to {dst!r}, but no table has a column {src!r} "
                f"where {dst!r} is canonical. Columns found — {where}"
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
                f"{dst!r} (SQL names ignore case); map one of them elsewhere or to None "
                f"(columns={{{table!r}: {{{src!r}: None}}}})"
            )
        seen[dst.lower()] = src
        out[dst] = src
    return out
