"""The line-by-line reader of TREC files: reads any file trec_eval reads, or names the line.

Every rule of :mod:`onlineeval.offline.reading` is applied here line by line: fields split on
runs of ASCII whitespace, trec_eval 10.0's comment rules (which differ between qrels and
runs), the byte-order mark, UTF-8 for the kept fields, integer grades and numeric scores as
C's ``atol``/``atof`` would read them whole. The pyarrow reader hands every file that is not
plainly regular to this scanner, so the messages with ``file:line`` all come from here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

from onlineeval.errors import LogFormatError
from onlineeval.offline.reading.text_rules import (
    BOM,
    FIELD_SEP,
    MID_FILE_BOM,
    WHITESPACE,
    check_text,
)

# (index, name) of the fields that must be valid UTF-8 (see "Text encoding" in the package doc)
_QRELS_TEXT = ((0, "qid (1st field)"), (2, "docno (3rd field)"))
_RUN_TEXT = ((0, "qid (1st field)"), (2, "docno (3rd field)"))
_RUN_TEXT_FULL = _RUN_TEXT + ((3, "rank (4th field)"), (5, "tag (6th field)"))
_RUNID = ((0, "tag (6th field) of the last line, the run id,"),)

# an integer as C's atol reads it whole: ASCII digits only (Python's int() would also take
# "1_0" as 10 and other scripts' digits, which atol reads as 1 and 0)
_GRADE = re.compile("[+-]?[0-9]+")


def content_lines(path: Path, qrels: bool = False) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each content line, skipping blank and comment lines.

    The comment rule is trec_eval 10.0's, which differs between the formats (package
    docstring, "Comment lines"): a run line is a comment when its first non-blank character
    is ``#``; a qrels line only when ``#`` is its very first character and the line before
    it (blank lines aside) is not a comment — trec_eval skips one comment line and then
    reads the next line as a judgment whatever it holds.
    """
    # the callers have run check_file on path
    # newline="\n": a line ends at \n only, as in trec_eval (a lone \r is whitespace; with
    # universal newlines it would split the line and change what is read)
    comment_line = 0   # qrels: the comment line just skipped (0: the last line was data)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
        for lineno, raw in enumerate(fh, 1):
            if raw.startswith(BOM):
                if lineno == 1:
                    raw = raw[1:]
                else:
                    raise LogFormatError(path, lineno, MID_FILE_BOM)
            text = raw.strip(WHITESPACE)
            if not text:
                continue
            if text[0] == BOM:
                raise LogFormatError(path, lineno, MID_FILE_BOM)
            if qrels:
                if raw[0] == "#" and not comment_line:
                    comment_line = lineno
                    continue
                comment_line = 0
            elif text[0] == "#":
                continue
            if "\x00" in text:
                raise LogFormatError(path, lineno, "line contains a NUL character")
            yield lineno, FIELD_SEP.split(text)
    if comment_line:
        raise LogFormatError(
            path, comment_line,
            "the qrels file ends with this '#' comment line. trec_eval 10.0 (get_qrels.c) "
            "reads the line after a comment line as a judgment, so after a final comment "
            "it reads past the end of the file (undefined behaviour) and onlineeval cannot "
            "match it; delete the line or move it above a judgment line",
        )


def scan_qrels(path: Path) -> tuple[list[str], list[str], list[int]]:
    """(qids, docnos, grades) of a qrels file, or the LogFormatError of its first bad line."""
    qid: list[str] = []
    docno: list[str] = []
    rel: list[int] = []
    for lineno, parts in content_lines(path, qrels=True):
        if len(parts) != 4:
            raise LogFormatError(
                path, lineno,
                f"expected 4 whitespace-separated fields 'qid iter docno rel', found "
                f"{len(parts)}: {' '.join(parts)[:120]!r}{_hash_hint(parts)}",
            )
        if not (parts[0].isascii() and parts[2].isascii()):
            check_text(path, lineno, parts, _QRELS_TEXT)
        grade = int(parts[3]) if _GRADE.fullmatch(parts[3]) else None
        if grade is None or not -(2**63) <= grade < 2**63:
            raise LogFormatError(
                path, lineno,
                f"relevance grade must be an integer (4th field) that fits in 64 bits, "
                f"found {parts[3]!r}{_hash_hint(parts)}",
            )
        qid.append(parts[0])
        docno.append(parts[2])
        rel.append(grade)
    if not qid:
        raise LogFormatError(path, None, "no qrels lines (only blank or comment lines)")
    return qid, docno, rel


def _hash_hint(parts: list[str]) -> str:
    """Why a qrels line starting with '#' was read as a judgment, for its error message."""
    if not parts[0].startswith("#"):
        return ""
    return (" (this line is a judgment, not a comment: trec_eval 10.0 skips a qrels line "
            "as a comment only when '#' is its first character and the line before it is "
            "not a comment; it reads the line after a comment line as a judgment)")


def scan_run(path: Path, full: bool = True,
             ) -> tuple[list[str], list[str], list[str], list[float], list[str]]:
    """(qids, docnos, ranks, scores, tags) of a run file, or its first bad line's error.

    ``full``: rank and tag are returned to the user, so they must be text too (otherwise
    only the last tag, the run id, is used and checked).
    """
    qid: list[str] = []
    docno: list[str] = []
    rank: list[str] = []
    score: list[float] = []
    tag: list[str] = []
    text_fields = _RUN_TEXT_FULL if full else _RUN_TEXT
    last = 0
    for lineno, parts in content_lines(path):
        if len(parts) < 6:
            raise LogFormatError(
                path, lineno,
                f"expected 6 whitespace-separated fields 'qid iter docno rank score tag', "
                f"found {len(parts)}: {' '.join(parts)[:120]!r}",
            )
        if not (parts[0].isascii() and parts[2].isascii()
                and (not full or parts[3].isascii() and parts[5].isascii())):
            check_text(path, lineno, parts, text_fields)
        value = parse_score(parts[4])
        if value is None:
            raise LogFormatError(
                path, lineno,
                f"score (5th field) must be a number, found {parts[4]!r}",
            )
        qid.append(parts[0])
        docno.append(parts[2])
        rank.append(parts[3])
        score.append(value)
        tag.append(parts[5])
        last = lineno
    if not qid:
        raise LogFormatError(path, None, "no run lines (only blank or comment lines)")
    if not full:
        check_text(path, last, tag[-1:], _RUNID)
    return qid, docno, rank, score, tag


def parse_score(text: str) -> float | None:
    """The score a run field holds, or None when it is not a number C's atof reads whole."""
    # Python's float() also takes 1_000 and other scripts' digits; C's atof and pyarrow
    # do not (atof would read a different number)
    if "_" in text or not text.isascii():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value
