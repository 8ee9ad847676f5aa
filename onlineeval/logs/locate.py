"""Where in the input a problem is: the file, the line, the column.

DuckDB's errors name a file only sometimes, and a line number rarely (or a wrong one). After
DuckDB fails, these functions find the place themselves: the first malformed line of a text
file, the line or row holding a bad value, or — when a damaged file is met only by a later
query, since the views read their files lazily — which of the files read cannot be read.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

from onlineeval import queries
from onlineeval.db import connect
from onlineeval.errors import InputError, LogFormatError
from onlineeval.logs import readers
from onlineeval.logs.paths import duckdb_paths
from onlineeval.terminal import escape


def one_line(text: str) -> str:
    """``text`` with line breaks, tabs and other control characters escaped (``\\n``), so a
    message naming a path or column that holds them stays on one line."""
    return escape(text)


def _opener(file: str) -> Any:
    return gzip.open if file.endswith(".gz") else open


def open_text(file: str) -> Any:
    """``file`` (gzip too) opened as UTF-8 text; a byte-order mark at its start is dropped,
    as DuckDB's readers drop it."""
    return _opener(file)(file, "rt", encoding="utf-8-sig", newline="")


# --- DuckDB's message --------------------------------------------------------------------------

_CSV_LINE = re.compile(r"CSV Error on Line: (\d+)")
_JSON_ERROR = re.compile(r'Malformed JSON in file "(.*)", at byte \d+ in [^:]*: ([^.]*)')
_JSON_TYPE_ERROR = re.compile(r'JSON transform error in file "(.*)", in line \d+: (.*)')
_JSON_CASE_KEYS = re.compile(r"the keys ('[^']*' and '[^']*') differ only in case")
_COLUMN_COUNT = re.compile(r"Expected Number of Columns: (\d+) Found: \d+$")
_ERROR_FILE = re.compile(r"^\s*file = (.+)$", re.MULTILINE)
# what DuckDB says about a file it cannot decode: compressed streams cut short, Parquet
# footers or page headers that do not parse, checksums that do not match
_DAMAGE = re.compile(
    r"GZIP|gzip|magic bytes|don't know what type|[Cc]orrupt|truncated|[Dd]ecompress|snappy|"
    r"zstd|ZSTD|Snappy|checksum|thrift|Thrift|Invalid (?:page|column|dictionary)|"
    r"[Uu]nexpected end|Could not read|out of buffer|Failed to read|TProtocol|size limit"
)


_DAMAGED = "the file is damaged or cut short"


def damage_reason(text: str) -> str | None:
    """The reason to give when DuckDB's message ``text`` says a file could not be decoded."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if not _DAMAGE.search(first):
        return None
    return one_line(f"{_DAMAGED} ({first}); restore it from its source or write it again")


def read_error(exc: BaseException, sep: str = ",", files: Sequence[str] = (),
               ) -> tuple[str | None, int | None, str]:
    """(file, line, reason) of a DuckDB read error, the reason on one line.

    DuckDB's CSV errors span many lines (the line number, the line, the problem, then
    possible fixes and the reader's settings); the file and line are returned apart so the
    message can name them, and the reason keeps the problem and the start of the bad line.
    A message naming none of its settings' ``file = ...`` is searched for one of ``files``.
    """
    text = str(exc).strip()
    if not text:
        return None, None, type(exc).__name__
    found = _ERROR_FILE.search(text)
    file = found.group(1).strip() if found else next((f for f in files if f in text), None)
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
    case_keys = _JSON_CASE_KEYS.search(text)
    if case_keys:
        return file, None, one_line(
            f"the JSON objects hold keys {case_keys.group(1)}, which SQL cannot tell apart "
            "(names ignore case); rename or drop one")
    damaged = damage_reason(text)
    if damaged:
        return file, None, damaged
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
        found_fields = len(next(csv.reader([original], delimiter=sep), []))
        reason = f"the line has {found_fields} fields, the header {width.group(1)}"
    if original is not None:
        reason += f"; the line starts {original[:80]!r}"
    return file, int(line.group(1)), reason


# --- the first bad line of a text file ----------------------------------------------------------

def locate_error(con: duckdb.DuckDBPyConnection, fmt: str, files: Sequence[str]) -> None:
    """After DuckDB failed to read ``files``: raise LogFormatError naming the first bad line
    when one can be found (CSV/TSV by a strict read, JSON lines by parsing each line)."""
    for f in files:
        if fmt in ("csv", "tsv", "json"):
            _locate_utf8_error(f)
        if fmt in ("csv", "tsv"):
            _locate_csv_error(con, f, readers.separator(fmt))
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


def json_lines(file: str) -> Iterable[tuple[int, str]]:
    """(line number, text) of the non-blank lines of a JSON-lines file; nothing when the file
    is not JSON lines (e.g. one JSON array), which has no line to blame."""
    with open_text(file) as fh:
        for number, text in enumerate(fh, start=1):
            if number == 1 and not text.lstrip().startswith("{"):
                return
            if text.strip():
                yield number, text.rstrip("\r\n")


def _locate_json_error(file: str) -> None:
    try:
        for number, text in json_lines(file):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                reason = f"malformed JSON ({exc.msg} at column {exc.colno})"
            else:
                if isinstance(value, dict):
                    _check_keys(file, number, value)
                    continue
                reason = f"the line is a JSON {type(value).__name__}, not an object"
            raise LogFormatError(
                one_line(file), number,
                f"cannot read as JSON lines: {reason}; every line must be one JSON object",
            ) from None
    except (OSError, UnicodeDecodeError, EOFError):
        return


def _check_keys(file: str, number: int, obj: dict[str, Any]) -> None:
    seen: dict[str, str] = {}
    for key in obj:
        if key.lower() in seen:
            raise LogFormatError(
                one_line(file), number,
                f"cannot read as JSON lines: the object holds keys {seen[key.lower()]!r} and "
                f"{key!r}, which SQL cannot tell apart (names ignore case); rename or drop one")
        seen[key.lower()] = key


def _locate_csv_error(con: duckdb.DuckDBPyConnection, file: str, sep: str) -> None:
    """Raise LogFormatError naming the first malformed line of ``file``, if a strict read
    with the standard dialect (header line, double quotes) finds one."""
    try:
        with open_text(file) as fh:
            header = next(csv.reader(fh, delimiter=sep), None)
    except (OSError, UnicodeDecodeError, EOFError, csv.Error):
        return
    if not header or len(set(header)) != len(header):
        return
    try:
        readers.read_strict_csv(con, file, sep, header).aggregate("count(*)").fetchall()
    except duckdb.Error as exc:
        _, line, reason = read_error(exc, sep)
        if line is not None:
            raise LogFormatError(one_line(file), line, f"cannot read as csv: {reason}") from None


# --- the line holding a bad value ------------------------------------------------------------

def _json_text(value: Any) -> str:
    """A JSON value as DuckDB shows it cast to text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"))


def value_place(fmt: str, files: Sequence[str], column: str, examples: Sequence[str],
                ) -> tuple[str, str, str] | None:
    """(file, "line N" or "row N", example) of the first place in ``files`` holding one of
    ``examples`` (values of ``column`` as DuckDB shows them as text), or None."""
    wanted = set(examples)
    try:
        if fmt in ("csv", "tsv"):
            for f in files:
                with open_text(f) as fh:
                    reader = csv.reader(fh, delimiter=readers.separator(fmt))
                    header = next(reader, [])
                    if column not in header:
                        continue
                    at = header.index(column)
                    start = reader.line_num + 1
                    for row in reader:
                        if at < len(row) and row[at] in wanted:
                            return f, f"line {start}", row[at]
                        start = reader.line_num + 1
        elif fmt == "json":
            for f in files:
                for number, text in json_lines(f):
                    obj = json.loads(text)
                    value = obj.get(column) if isinstance(obj, dict) else None
                    if value is not None and _json_text(value) in wanted:
                        return f, f"line {number}", _json_text(value)
        elif fmt == "parquet":
            return _parquet_row(files, column, list(wanted))
    except (OSError, UnicodeDecodeError, EOFError, csv.Error, ValueError, duckdb.Error):
        return None
    return None


def _parquet_row(files: Sequence[str], column: str, wanted: list[str],
                 ) -> tuple[str, str, str] | None:
    con = connect()
    try:
        rel = con.read_parquet(duckdb_paths(con, list(files)), filename=True,
                               file_row_number=True, union_by_name=len(files) > 1)
        con.register("_oe_values", rel)
        q = queries.load("logs/value_row")
        got = con.execute(q.render(source=["_oe_values"], column=[column]),
                          q.bind(wanted=wanted)).fetchall()
    finally:
        con.close()
    return (got[0][0], f"row {got[0][1] + 1:,}", got[0][2]) if got else None


# --- which file is damaged --------------------------------------------------------------------

# Errors file contents can cause while DuckDB reads them (a bad value, a damaged page, a
# compressed stream cut short; thrift decoding failures come as the base class itself).
DATA_ERRORS = (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException,
               duckdb.OutOfRangeException, duckdb.SerializationException,
               duckdb.InternalException)

# what DuckDB raises for a value or a line it cannot read
_READ_ERRORS = (duckdb.IOException, duckdb.InvalidInputException, duckdb.ConversionException,
                duckdb.OutOfRangeException)

#: (format, files) of the tables opened lately, newest last: a damaged file may be met only by
#: a query long after the load, whose error does not name it
_OPENED: deque[tuple[str, tuple[str, ...]]] = deque(maxlen=16)


def remember(fmt: str, files: Sequence[str]) -> None:
    """Note that a table of ``files`` was opened (see :func:`file_error`)."""
    entry = (fmt, tuple(files))
    if entry in _OPENED:
        _OPENED.remove(entry)
    _OPENED.append(entry)


def recently_opened() -> list[tuple[str, tuple[str, ...]]]:
    """(format, files) of the tables opened lately, newest first."""
    return list(reversed(_OPENED))


def may_be_data(exc: BaseException) -> bool:
    """Could reading a file's contents have raised ``exc``?"""
    return isinstance(exc, DATA_ERRORS) or type(exc) is duckdb.Error


def _unreadable(fmt: str, file: str) -> str | None:
    """Why DuckDB cannot read every value of ``file``, or None when it can."""
    con = connect()
    try:
        rel = readers.read(con, fmt, [file])
        con.register("_oe_file", rel)
        q = queries.load("logs/read_all")
        con.execute(q.render(source=["_oe_file"], columns=list(rel.columns))).fetchall()
    except duckdb.Error as exc:
        _, _, reason = read_error(exc, readers.separator(fmt), [file])
        return reason
    except InputError:
        return None
    finally:
        con.close()
    return None


def damaged_file(exc: BaseException, tables: Iterable[tuple[str, Sequence[str]]],
                 ) -> tuple[str, str] | None:
    """(file, reason) of the file behind DuckDB error ``exc``, among ``tables`` ((format,
    files) pairs): the one the message names, else the first that cannot be read again."""
    if not may_be_data(exc):
        return None
    tables = list(tables)
    text = str(exc)
    for fmt, files in tables:
        named = next((f for f in files if f in text), None)
        if named is not None:
            return named, read_error(exc, readers.separator(fmt), [named])[2]
    for fmt, files in tables:
        for f in files:
            reason = _unreadable(fmt, f)
            if reason is not None:
                return f, reason
    return None


def read_failure(con: duckdb.DuckDBPyConnection, exc: BaseException, fmt: str,
                 files: Sequence[str], label: str, doing: str, hint: str = "",
                 ) -> LogFormatError:
    """The error to raise for DuckDB error ``exc``, met while ``doing`` something (e.g. "read
    as csv") with ``files`` (shown as ``label``): a malformed line is named by its line
    (raised from here), a damaged file by its name, ``hint`` (on how to fix a malformed line)
    is added unless the file is damaged."""
    return _failure(con, exc, fmt, files, label, doing, hint, blame_needed=False) \
        or LogFormatError(label, None, f"cannot {doing}: {read_error(exc)[2]}")


def query_failure(con: duckdb.DuckDBPyConnection, exc: BaseException, fmt: str,
                  files: Sequence[str], label: str, doing: str) -> LogFormatError | None:
    """:func:`read_failure` for an error met by a query over the opened files; None when
    nothing points at the files — the error is not one DuckDB raises for what a file holds,
    and no file is found damaged — so that a bug of ours surfaces as one."""
    return _failure(con, exc, fmt, files, label, doing, "", blame_needed=True)


def _failure(con: duckdb.DuckDBPyConnection, exc: BaseException, fmt: str,
             files: Sequence[str], label: str, doing: str, hint: str, blame_needed: bool,
             ) -> LogFormatError | None:
    locate_error(con, fmt, files)
    file, line, reason = read_error(exc, readers.separator(fmt), files)
    if file is None:
        # the message names no file: find the one that cannot be read, among these files
        # first, then the other tables opened lately (the query may have joined them)
        found = damaged_file(exc, [(fmt, files), *recently_opened()])
        if found is not None:
            file, reason = found
            if file not in files:
                doing = "read the file"
        elif blame_needed and not isinstance(exc, _READ_ERRORS):
            return None
    if not reason.startswith(_DAMAGED):
        doing += hint
    return LogFormatError(one_line(file) if file else label, line, f"cannot {doing}: {reason}")


def file_error(exc: BaseException) -> InputError | None:
    """The error to show instead of DuckDB error ``exc`` when it comes from a log file that
    cannot be read (a damaged page or a file cut short, found by a query after the load):
    a LogFormatError naming the file; None when no file opened lately is to blame.

    Call it where a command ends on an unexpected exception; it re-reads the files opened
    lately to find the damaged one when DuckDB's message names none.
    """
    found = damaged_file(exc, recently_opened())
    if found is None:
        return None
    file, reason = found
    return LogFormatError(one_line(file), None, f"cannot read the file: {reason}")
