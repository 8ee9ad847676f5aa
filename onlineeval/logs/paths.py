"""Which files hold a log table, and how to name each one to DuckDB.

A table is given as a file, a folder of part files, or a glob pattern. A path is taken as
written whenever it exists, even when its name holds ``*``, ``?`` or ``[`` (``exp[1]/`` is that
folder, never the sibling ``exp1/``); a pattern is expanded only when no such path exists.

DuckDB reads every path it is given as a glob pattern, even an item of a list of files, so
:func:`duckdb_path` is the one way a file's name reaches DuckDB's readers.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import duckdb

from onlineeval import queries
from onlineeval.errors import SchemaError

_FORMATS: tuple[tuple[str, str], ...] = (
    (".parquet", "parquet"),
    (".pq", "parquet"),
    (".csv.gz", "csv"),
    (".csv", "csv"),
    (".tsv.gz", "tsv"),
    (".tsv", "tsv"),
    (".jsonl.gz", "json"),
    (".jsonl", "json"),
    (".ndjson.gz", "json"),
    (".ndjson", "json"),
    (".json.gz", "json"),
    (".json", "json"),
)
EXTENSIONS: tuple[str, ...] = tuple(ext for ext, _ in _FORMATS)

_GLOB_CHARS = "*?["


def file_format(path: str | os.PathLike[str]) -> str | None:
    """The format of ``path`` by its extension, or None when the extension is not known."""
    name = os.fspath(path).lower()
    for ext, fmt in _FORMATS:
        if name.endswith(ext):
            return fmt
    return None


def duckdb_path(con: duckdb.DuckDBPyConnection, path: str) -> str:
    """How to name the existing file ``path`` (absolute) to DuckDB so that it reads that file.

    Each ``*``, ``?`` and ``[`` becomes a one-character class (``[*]``, ``[?]``, ``[[]``),
    which DuckDB's glob matches literally; DuckDB's own ``glob()`` confirms that the result
    finds exactly ``path``. It cannot when the path also holds a backslash (DuckDB's glob
    splits paths there), and then the file is refused rather than another one read.
    """
    if not any(ch in path for ch in _GLOB_CHARS):
        return path
    escaped = "".join(f"[{ch}]" if ch in _GLOB_CHARS else ch for ch in path)
    try:
        q = queries.load("logs/glob")
        found = [row[0] for row in con.execute(q.render(), q.bind(p=escaped)).fetchall()]
    except duckdb.Error:
        found = []
    if found != [path]:
        raise SchemaError(
            f"{path}: DuckDB reads *, ? and [ in a path as a pattern, and this path "
            "cannot be given to it literally (it also holds a backslash, or a folder on the "
            "way cannot be listed); rename the file or folder, or load the table into a "
            "DataFrame and pass that"
        )
    return escaped


def duckdb_paths(con: duckdb.DuckDBPyConnection, files: list[str]) -> str | list[str]:
    """:func:`duckdb_path` of each file: one name, or a list for several files."""
    names = [duckdb_path(con, f) for f in files]
    return names if len(names) > 1 else names[0]


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in _GLOB_CHARS) and not os.path.exists(text)


# Table formats whose folders hold Parquet files of every version of the table, next to the
# log saying which files make up the current one: reading all the files would count rows
# deleted or rewritten long ago.
_LAKES = (
    ("a Delta Lake", "_delta_log/", "deltalake", "deltalake.DeltaTable(path)"),
    ("an Apache Iceberg", "metadata/", "pyiceberg", "pyiceberg's catalog.load_table(...)"),
    ("an Apache Hudi", ".hoodie/", "Hudi's reader (e.g. Spark)", "a snapshot query exported to "
     "Parquet"),
)


_ICEBERG = 1


def _lake_marker(folder: Path) -> int | None:
    """Index into _LAKES of the table format ``folder`` is the root of, or None."""
    if (folder / "_delta_log").is_dir():
        return 0
    meta = folder / "metadata"
    if meta.is_dir():
        try:
            names = [p.name for p in meta.iterdir()]
        except OSError:
            names = []
        if any(".metadata.json" in n or n == "version-hint.text" for n in names):
            return _ICEBERG
    if (folder / ".hoodie").is_dir():
        return 2
    return None


def refuse_lake_folder(folder: Path, what: str, argument: str,
                       checked: dict[Path, int | None] | None = None) -> None:
    """A SchemaError when ``folder`` or a folder above it is a Delta, Iceberg or Hudi table;
    ``what`` says what the folder was to be read as, ``argument`` what to pass instead."""
    checked = {} if checked is None else checked
    for candidate in (folder, *folder.parents):
        if candidate not in checked:
            checked[candidate] = _lake_marker(candidate)
        found = checked[candidate]
        if found is None:
            continue
        if found == _ICEBERG and candidate != folder and \
                folder.relative_to(candidate).parts[0] != "data":
            # a folder holding metadata/ is an Iceberg table for what lies in its data/; a
            # log elsewhere below it is not part of the table
            continue
        name, marker, package, reader = _LAKES[found]
        raise SchemaError(
            f"{candidate}: this folder is {name} table (it holds {marker}), read here as "
            f"{what}; its data files include old versions of the table, so reading them would "
            f"count rows it no longer has. Read the current version with {package} ({reader}) "
            f"and pass it as {argument} (the table object itself, or a pyarrow Table or "
            f"Dataset), or "
            "export it to plain Parquet first"
        )


def _part_files(folder: Path, table: str) -> list[str]:
    """The part files under ``folder``. Names starting with ``_`` or ``.`` are skipped, at any
    depth: markers such as ``_SUCCESS`` and ``.crc`` files, and folders such as Spark's
    ``_temporary/`` whose attempt files would repeat rows. Any other file must have a known
    extension: one that is skipped silently would drop its rows."""
    found, unknown = [], []
    for p in sorted(folder.rglob("*")):
        inside = p.relative_to(folder).parts
        if not p.is_file() or any(part.startswith((".", "_")) for part in inside):
            continue
        (found if file_format(p) else unknown).append(str(p))
    if unknown:
        raise SchemaError(
            f"{folder}: the folder of table {table!r} holds file(s) without a known extension "
            f"({', '.join(EXTENSIONS)}): {', '.join(unknown[:3])}"
            f"{f' and {len(unknown) - 3} more' if len(unknown) > 3 else ''}; their rows would "
            "not be read. Rename them, or move them out of the folder (names starting with _ "
            "or . are skipped)"
        )
    return found


def find_table(directory: Path, table: str) -> Path | None:
    """The file or folder for ``table`` inside a log directory (``searches.parquet``, ...)."""
    candidates = [directory / f"{table}{ext}" for ext in EXTENSIONS]
    candidates.append(directory / table)
    present = [c for c in candidates if c.exists()]
    if len(present) > 1:
        raise SchemaError(
            f"{directory}: several files hold table {table!r}: "
            f"{', '.join(p.name for p in present)}; keep exactly one"
        )
    return present[0] if present else None


def resolve_files(spec: str | os.PathLike[str], table: str) -> tuple[str, list[str]]:
    """Expand a table path (file, folder of parts, or glob) to its format and file list."""
    text = os.fspath(spec)
    path = Path(text)
    what = f"the parts of table {table!r}"
    checked: dict[Path, int | None] = {}
    if path.is_dir():
        refuse_lake_folder(path.resolve(), what, f"{table}=", checked)
        files = _part_files(path.resolve(), table)
        if not files:
            raise SchemaError(
                f"{path}: folder for table {table!r} holds no part files with a known "
                f"extension ({', '.join(EXTENSIONS)})"
            )
    elif path.is_file():
        files = [os.path.abspath(text)]
    elif _is_glob(text):
        files = sorted(
            os.path.abspath(f) for f in glob.glob(text, recursive=True) if os.path.isfile(f)
        )
        if not files:
            raise SchemaError(f"{text}: the pattern for table {table!r} matches no file")
    else:
        raise SchemaError(f"{text}: no such file or folder (table {table!r})")
    for folder in sorted({os.path.dirname(f) for f in files}):
        refuse_lake_folder(Path(folder), what, f"{table}=", checked)
    formats = {file_format(f) for f in files}
    if None in formats:
        bad = next(f for f in files if file_format(f) is None)
        raise SchemaError(
            f"{bad}: cannot tell the format of table {table!r} from the file name; "
            f"use one of the extensions {', '.join(EXTENSIONS)}"
        )
    if len(formats) > 1:
        raise SchemaError(
            f"{text}: the parts of table {table!r} mix formats ({', '.join(sorted(formats))}); "
            "all parts must have one format"
        )
    for f in files:
        if os.path.getsize(f) == 0:
            raise SchemaError(
                f"{f}: the file is empty; table {table!r} needs at least its column names "
                "(a header line for CSV)"
            )
    return formats.pop(), files  # type: ignore[return-value]
