"""A column mapping written as text: the command line's ``--columns`` and ``--columns-file``.

Both are read into the ``columns=`` mapping of :func:`onlineeval.load_logs` (a
:class:`~onlineeval.logs.mapping.ColumnMap` remembering where each entry was written), so
the command line and the API follow one set of rules (:mod:`onlineeval.logs.mapping`).

``--columns searches.uid=user_id,searches.arm=variant,clicks.position=rank``
    Comma-separated ``TABLE.SOURCE=CANONICAL`` entries; ``SOURCE=CANONICAL`` without a table
    applies to every table having that column (the API's flat form); ``TABLE.SOURCE=`` with
    nothing after ``=`` leaves the column out (the API's ``None``). The option may be repeated.
``--columns-file mapping.toml``
    One TOML table per log table, ``source = "canonical"`` lines (``""`` leaves it out);
    top-level lines are flat entries::

        [searches]
        uid = "user_id"
        arm = "variant"

        [clicks]
        position = "rank"

A name holding a comma or ``=`` can be written in the file only (TOML quotes it).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from onlineeval.errors import InputError, SchemaError
from onlineeval.logs.mapping import ColumnMap, Spelling
from onlineeval.logs.schema import TABLES

OPTION = "--columns"
FILE_OPTION = "--columns-file"
SYNTAX = "TABLE.SOURCE=CANONICAL entries separated by commas, e.g. searches.uid=user_id"


def _merge(entries: dict[str, Any], places: dict[tuple[str | None, str], str],
           table: str | None, source: str, target: str | None, place: str) -> None:
    key = (table, source)
    if key in places:
        shown = f"{table}.{source}" if table else source
        raise SchemaError(
            f"{place}: {shown} is mapped twice (also by {places[key]}); keep one of the two"
        )
    places[key] = place
    if table is None:
        entries[source] = target
    else:
        existing = entries.setdefault(table, {})
        if not isinstance(existing, dict):  # a flat entry named like the table
            raise SchemaError(f"{place}: {table!r} is both a table and a flat entry's column")
        existing[source] = target


def _option_entries(texts: Sequence[str], entries: dict[str, Any],
                    places: dict[tuple[str | None, str], str]) -> None:
    for text in texts:
        for item in (p.strip() for p in text.split(",")):
            if not item:
                continue
            where = f"{OPTION} {item}"
            name, sep, target = item.partition("=")
            name, target = name.strip(), target.strip()
            if not sep or not name:
                raise SchemaError(f"{OPTION}: {item!r} is not an entry; write {SYNTAX} (a "
                                  f"name holding ',' or '=' goes in a {FILE_OPTION})")
            table, dot, source = name.partition(".")
            if not dot or table not in TABLES:
                table, source = None, name  # a flat entry (a dotted name of no table too)
            if not source:
                raise SchemaError(f"{where}: no source column after {table}.; write {SYNTAX}")
            _merge(entries, places, table, source, target or None, where)


def _lines(text: str) -> dict[tuple[str | None, str], int]:
    """``(table or None, key) -> line number`` of the simple ``key = value`` lines of a TOML
    mapping file, to name the line of an entry the loader refuses (tomllib gives no
    positions). Quoted and dotted keys are understood; anything fancier gets no line."""
    found: dict[tuple[str | None, str], int] = {}
    section: str | None = None
    key = r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+'
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.fullmatch(rf"\[\s*({key})\s*\]\s*(#.*)?", stripped)
        if header:
            section = _unquote(header.group(1))
            continue
        m = re.match(rf"({key})\s*(?:\.\s*({key})\s*)?=", stripped)
        if m:
            if m.group(2):
                found.setdefault((_unquote(m.group(1)), _unquote(m.group(2))), n)
            else:
                found.setdefault((section, _unquote(m.group(1))), n)
    return found


def _unquote(key: str) -> str:
    if key[:1] == '"':
        return tomllib.loads(f"k = {key}")["k"]
    if key[:1] == "'":
        return key[1:-1]
    return key


def _file_entries(path: str | os.PathLike[str], entries: dict[str, Any],
                  places: dict[tuple[str | None, str], str]) -> None:
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"{FILE_OPTION} {name}: cannot read it ({exc.strerror or exc})"
                         ) from None
    try:
        text = raw.decode("utf-8-sig")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{name}: not UTF-8 text (byte {exc.start + 1}); save the mapping "
                          "file as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line L, column C)"
        reason = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)$", reason)
        where = f"{name}:{m.group(1)}" if m else name
        detail = reason[:m.start()].strip() if m else reason
        col = f" column {m.group(2)}:" if m else ""
        raise SchemaError(
            f"{where}:{col} not valid TOML ({detail}); write one [table] per log table with "
            f'lines source = "canonical", e.g. [searches] then uid = "user_id"'
        ) from None
    lines = _lines(text)

    def place(table: str | None, source: str) -> str:
        n = lines.get((table, source))
        return f"{name}:{n}" if n else f"{name} ({table + '.' if table else ''}{source})"

    _table_entries(data, place, entries, places)


def _table_entries(data: dict[str, Any], place: Any, entries: dict[str, Any],
                   places: dict[tuple[str | None, str], str]) -> None:
    """The entries of a parsed mapping file (``place(table, source)`` says where each was
    written)."""
    for key, value in data.items():
        if isinstance(value, dict):
            if key not in TABLES:
                raise SchemaError(
                    f"{place(None, key)}: [{key}] is not a log table; the tables are "
                    f"{', '.join(TABLES)}"
                )
            for source, target in value.items():
                _file_value(place(key, source), key, source, target)
                _merge(entries, places, key, source, target or None, place(key, source))
        else:
            _file_value(place(None, key), None, key, value)
            _merge(entries, places, None, key, value or None, place(None, key))


def _file_value(where: str, table: str | None, source: str, target: Any) -> None:
    if not isinstance(target, str):
        under = f" under [{table}]" if table else ""
        raise SchemaError(
            f"{where}: the value of {source!r}{under} must be a canonical column name in "
            f'quotes (or "" to leave the column out); got {target!r}'
        )


def parse(options: Sequence[str] | None = None,
          files: Sequence[str | os.PathLike[str]] | None = None) -> ColumnMap:
    """The ``columns=`` mapping written by ``--columns`` options and ``--columns-file``
    files; empty when neither is given, but still spelled the command line's way, so that
    the loader's advice to map a column shows the option."""
    entries: dict[str, Any] = {}
    places: dict[tuple[str | None, str], str] = {}
    for f in files or ():
        _file_entries(f, entries, places)
    _option_entries(options or (), entries, places)
    return ColumnMap(entries, Spelling(cli=True, places=places))


def from_table(data: dict[str, Any], where: str) -> ColumnMap:
    """The mapping written as a TOML table inside another file (a study file's
    ``[columns]``: the format of a ``--columns-file``); ``where`` names that table in errors
    (``study.toml: columns``)."""
    entries: dict[str, Any] = {}
    places: dict[tuple[str | None, str], str] = {}

    def place(table: str | None, source: str) -> str:
        return f"{where}.{table + '.' if table else ''}{source}"

    _table_entries(data, place, entries, places)
    return ColumnMap(entries, Spelling(cli=True, places=places))
