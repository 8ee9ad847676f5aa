"""Open one log table (a file, a folder or glob of parts, or a DataFrame) as a DuckDB relation.

Files are read by DuckDB's relational API (``con.read_parquet`` and friends), so paths are
passed as data and never pasted into SQL text. The format is decided by the file extension:

=====================================  ===========================
extension                              format
=====================================  ===========================
``.parquet``, ``.pq``                  Parquet
``.csv``, ``.csv.gz``                  CSV with a header line
``.tsv``, ``.tsv.gz``                  tab-separated, header line
``.jsonl``, ``.ndjson``, ``.json``     JSON lines (``.gz`` too)
=====================================  ===========================

Parts of one table are matched by column name (a column missing from some parts is NULL
there), never by position. JSON columns that DuckDB would type as dates or times (from a
sample of the first rows) are read as text too, and converted by the loader. CSV and TSV are
read with every column as text; the loader converts and validates each
canonical column itself, so a bad value is reported with its file and column. A folder of parts
written partitioned (``searches/variant=control/part-0.parquet``) gets the partition columns.
"""

from __future__ import annotations

import csv
import glob
import gzip
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from onlineeval.errors import LogFormatError, SchemaError

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


@dataclass
class Source:
    """One opened table: where it came from (for messages), its format and relation."""

    table: str
    label: str
    format: str
    relation: duckdb.DuckDBPyRelation
    files: tuple[str, ...] = ()


def file_format(path: str | os.PathLike[str]) -> str | None:
    """The format of ``path`` by its extension, or None when the extension is not known."""
    name = os.fspath(path).lower()
    for ext, fmt in _FORMATS:
        if name.endswith(ext):
            return fmt
    return None


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[") and not os.path.exists(text)


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
    if path.is_dir():
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


def _hive(files: list[str], root: str) -> bool:
    # parts in key=value folders (Spark/DuckDB partitioned writes) carry a column in the path
    return any(
        "=" in part for f in files for part in Path(os.path.relpath(f, root)).parts[:-1]
    )


def _read(con: duckdb.DuckDBPyConnection, fmt: str, files: list[str],
          hive: bool) -> duckdb.DuckDBPyRelation:
    arg: Any = files if len(files) > 1 else files[0]
    extra: dict[str, Any] = {"hive_partitioning": True} if hive else {}
    if len(files) > 1 and fmt != "json":
        # Parts are matched by column name: by default DuckDB takes the columns of the first
        # part and reads the others by position, so a part with its columns in another order
        # would swap values silently, and a column only some parts have would be dropped.
        # (JSON lines are always matched by name.)
        extra["union_by_name"] = True
    if fmt == "parquet":
        return con.read_parquet(arg, **extra)
    if fmt in ("csv", "tsv"):
        # A fixed delimiter: left to guess, the sniffer reads a file with a ragged line as
        # one single text column instead of failing.
        # skiprows=0: the header is the first line, never a guessed later one.
        # Standard double-quote quoting, fixed: left to guess, the sniffer picks "no quoting"
        # for a file with one unterminated quote and then keeps the quotes of every properly
        # quoted value ('"s1"' instead of 's1'), silently.
        return con.read_csv(arg, header=True, all_varchar=True, skiprows=0,
                            sep="\t" if fmt == "tsv" else ",", quotechar='"', escapechar='"',
                            **extra)
    rel = con.read_json(arg, format="auto", **extra)
    # DuckDB types a JSON column TIMESTAMP or DATE from a sample of the first rows; a later
    # row is then parsed without its zone ('... 12:00:00+02:00' and '... 12:00:00 EST' both
    # become 12:00, '01:00:00 PM' becomes 01:00). Such columns are read as text instead, so
    # the loader converts every value itself (see casting.py) and refuses what it cannot read.
    partitions = _partition_names(files) if hive else set()
    types = {c: str(t) for c, t in zip(rel.columns, rel.types, strict=True)
             if c not in partitions}
    if not any(t.startswith(_TEMPORAL) for t in types.values()):
        return rel
    columns = {c: "VARCHAR" if t.startswith(_TEMPORAL) else t for c, t in types.items()}
    return con.read_json(arg, format="auto", columns=columns, **extra)


_TEMPORAL = ("TIMESTAMP", "DATE", "TIME", "INTERVAL")


def _partition_names(files: list[str]) -> set[str]:
    return {part.split("=", 1)[0] for f in files for part in Path(f).parts[:-1] if "=" in part}


def open_table(
    con: duckdb.DuckDBPyConnection, table: str, spec: Any,
) -> Source:
    """Open ``spec`` (path, folder, glob or pandas DataFrame) as table ``table``."""
    if isinstance(spec, pd.DataFrame):
        if len(spec.columns) == 0:
            raise SchemaError(f"the DataFrame given as {table}= has no columns")
        bad = [c for c in spec.columns if not isinstance(c, str)]
        if bad:
            raise SchemaError(
                f"the DataFrame given as {table}= has non-text column names {bad!r}; "
                "column names must be strings"
            )
        lowered: dict[str, str] = {}
        for c in spec.columns:
            if c.lower() in lowered:
                raise SchemaError(
                    f"the DataFrame given as {table}= has columns {lowered[c.lower()]!r} and "
                    f"{c!r}, which SQL cannot tell apart (names ignore case); rename one"
                )
            lowered[c.lower()] = c
        return Source(table, f"DataFrame {table}=", "dataframe", con.from_df(spec))
    if not isinstance(spec, str | os.PathLike):
        raise SchemaError(
            f"{table}= must be a path (str or pathlib.Path) or a pandas DataFrame; "
            f"got {type(spec).__name__}"
        )
    fmt, files = resolve_files(spec, table)
    label = files[0] if len(files) == 1 else f"{os.fspath(spec)} ({len(files)} parts)"
    given = Path(os.fspath(spec))
    root = str(given.resolve()) if given.is_dir() else os.path.dirname(files[0])
    if fmt in ("csv", "tsv"):
        for f in files:
            _check_header(f, "\t" if fmt == "tsv" else ",", table)
    try:
        rel = _read(con, fmt, files, _hive(files, root))
    except duckdb.Error as exc:
        locate_error(con, fmt, files)
        hint = {
            "csv": " (check that every line has as many comma-separated fields as the header)",
            "tsv": " (check that every line has as many tab-separated fields as the header)",
        }.get(fmt, "")
        file, line, reason = read_error(exc)
        raise LogFormatError(
            one_line(file) if file and line is not None else label, line,
            f"cannot read as {fmt}{hint}: {reason}",
        ) from None
    if fmt == "json" and list(rel.columns) == ["json"]:
        locate_error(con, fmt, files)
        # DuckDB falls back to one column 'json' when the lines are not all JSON objects
        raise LogFormatError(
            label, None, "cannot read as JSON lines: every line must be one JSON object "
            "({\"search_id\": ..., ...}); some line is an array or a bare value"
        )
    return Source(table, label, fmt, rel, tuple(files))


_CSV_LINE = re.compile(r"CSV Error on Line: (\d+)")
_JSON_ERROR = re.compile(r'Malformed JSON in file "(.*)", at byte \d+ in [^:]*: ([^.]*)')
_JSON_TYPE_ERROR = re.compile(r'JSON transform error in file "(.*)", in line \d+: (.*)')
_COLUMN_COUNT = re.compile(r"Expected Number of Columns: (\d+) Found: \d+$")
_ERROR_FILE = re.compile(r"^\s*file = (.+)$", re.MULTILINE)


def read_error(exc: BaseException, sep: str = ",") -> tuple[str | None, int | None, str]:
    """(file, line, reason) of a DuckDB read error, the reason on one line.

    DuckDB's CSV errors span many lines (the line number, the line, the problem, then
    possible fixes and the reader's settings); the file and line are returned apart so the
    message can name them, and the reason keeps the problem and the start of the bad line.
    """
    text = str(exc).strip()
    if not text:
        return None, None, type(exc).__name__
    found = _ERROR_FILE.search(text)
    file = found.group(1).strip() if found else None
    bad_json = _JSON_ERROR.search(text)
    if bad_json:
        # DuckDB's JSON line numbers are off by one (and absent for the first line):
        # locate_error finds the line itself
        return bad_json.group(1), None, one_line(f"malformed JSON: {bad_json.group(2)}")
    bad_type = _JSON_TYPE_ERROR.search(text)
    if bad_type and "has duplicate key" in bad_type.group(2):
        return bad_type.group(1), None, one_line(
            f"a JSON object names one key twice ({bad_type.group(2)}); give each key once")
    if bad_type:
        # DuckDB's line number here is not the line's (it counts within a buffer)
        return bad_type.group(1), None, one_line(
            f"a value does not have the type DuckDB chose for its column from the file's first "
            f"rows ({bad_type.group(2)}); give each column one JSON type in every row "
            '(e.g. every id a string: "search_id": "7")')
    line = _CSV_LINE.search(text)
    if line is None:
        return file, None, one_line(text.splitlines()[0])
    # the problem is stated before DuckDB's suggestions and its list of reader settings
    body = re.split(r"Possible fixes:|Possible Solution:|^\s*file = ", text, maxsplit=1,
                    flags=re.MULTILINE)[0]
    head = [x.strip() for x in body.splitlines()[1:] if x.strip()]
    original = next((x.removeprefix("Original Line:").strip() for x in head
                     if x.startswith("Original Line:")), None)
    reason = head[-1] if head and not head[-1].startswith("Original Line:") else "malformed line"
    reason = one_line(reason).rstrip(".")
    width = _COLUMN_COUNT.match(reason)
    if width and original is not None:
        # DuckDB's "Found:" stops counting one past the header's width: count them ourselves
        found = len(next(csv.reader([original], delimiter=sep), []))
        reason = f"the line has {found} fields, the header {width.group(1)}"
    if original is not None:
        reason += f"; the line starts {original[:80]!r}"
    return file, int(line.group(1)), reason


def locate_error(con: duckdb.DuckDBPyConnection, fmt: str, files: Sequence[str]) -> None:
    """After DuckDB failed to read ``files``: raise LogFormatError naming the first bad line
    when one can be found (CSV/TSV by a strict read, JSON lines by parsing each line)."""
    for f in files:
        if fmt in ("csv", "tsv", "json"):
            _locate_utf8_error(f)
        if fmt in ("csv", "tsv"):
            _locate_csv_error(con, f, "\t" if fmt == "tsv" else ",")
        elif fmt == "json":
            _locate_json_error(f)


def _locate_utf8_error(file: str) -> None:
    """Raise LogFormatError naming the first line of ``file`` that is not UTF-8 text.

    DuckDB names a wrong line (and shows the header) for a file in another encoding."""
    try:
        with _opener(file)(file, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise LogFormatError(
                        one_line(file), number,
                        f"the line is not valid UTF-8 text ({exc.reason} at byte "
                        f"{exc.start + 1} of the line); text files must be UTF-8: convert it "
                        "first (e.g. iconv -f latin1 -t utf-8)",
                    ) from None
    except (OSError, EOFError):
        return


def _opener(file: str) -> Any:
    return gzip.open if file.endswith(".gz") else open


def _open_text(file: str) -> Any:
    return _opener(file)(file, "rt", encoding="utf-8", newline="")


def _locate_json_error(file: str) -> None:
    try:
        with _open_text(file) as fh:
            for number, text in enumerate(fh, start=1):
                if number == 1 and not text.lstrip().startswith("{"):
                    return  # not JSON lines (e.g. one JSON array): no line to blame
                if not text.strip():
                    continue
                try:
                    value = json.loads(text.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    reason = f"malformed JSON ({exc.msg} at column {exc.colno})"
                else:
                    if isinstance(value, dict):
                        continue
                    reason = f"the line is a JSON {type(value).__name__}, not an object"
                raise LogFormatError(
                    one_line(file), number,
                    f"cannot read as JSON lines: {reason}; every line must be one JSON object",
                ) from None
    except (OSError, UnicodeDecodeError, EOFError):
        return


def _check_header(file: str, sep: str, table: str) -> None:
    """A header naming one column twice is an error (DuckDB would rename the second copy,
    and the loader would silently use the first)."""
    try:
        with _open_text(file) as fh:
            header = next(csv.reader(fh, delimiter=sep), None)
    except (OSError, UnicodeDecodeError, EOFError, csv.Error):
        return  # DuckDB's reader reports unreadable files
    seen: dict[str, str] = {}
    for name in header or []:
        if name.lower() in seen:
            raise SchemaError(
                f"{one_line(file)}: the header of table {table!r} names column "
                f"{one_line(repr(seen[name.lower()]))} twice"
                f"{'' if name == seen[name.lower()] else f' (as {one_line(repr(name))})'}"
                "; SQL cannot tell them apart (names ignore case): rename or drop one"
            )
        seen[name.lower()] = name


def _locate_csv_error(con: duckdb.DuckDBPyConnection, file: str, sep: str) -> None:
    """Raise LogFormatError naming the first malformed line of ``file``, if a strict read
    with the standard dialect (header line, double quotes) finds one."""
    try:
        with _open_text(file) as fh:
            header = next(csv.reader(fh, delimiter=sep), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return
    if not header or len(set(header)) != len(header):
        return
    try:
        con.read_csv(file, header=True, auto_detect=False, sep=sep, quotechar='"',
                     escapechar='"', columns=dict.fromkeys(header, "VARCHAR"),
                     ).aggregate("count(*)").fetchall()
    except duckdb.Error as exc:
        _, line, reason = read_error(exc, sep)
        if line is not None:
            raise LogFormatError(one_line(file), line, f"cannot read as csv: {reason}") from None


def one_line(text: str) -> str:
    """``text`` with line breaks, tabs and other control characters escaped (``\\n``), so a
    message naming a path or column that holds them stays on one line."""
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
