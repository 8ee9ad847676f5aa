"""The Yandex WSCD 2014 click sample (as distributed with PyClick) -> canonical tables.

Input: records separated by ``;`` (with any surrounding whitespace or line breaks), each

    <query_id>_<region> TAB <doc1>,<doc2>,...,<docN> : <clicked doc> , <clicked doc> , ...

Documents are listed in rank order 1..N; clicks in click order (possibly none, possibly the
same document twice). The sample has no users, sessions or times.

What is written (one *page* per record, numbered N = 1, 2, ... across the input files):

- ``searches``: ``search_id`` = ``p<N>`` (6+ digits), ``user_id`` = ``u<N>`` (each page its
  own user: the sample does not say who searched), ``query`` = query_id, ``region`` = region
  (an extra column), ``n_results`` = number of shown documents. No ``ts`` and no
  ``session_id``: time-based metrics (sessions, time to first click, reformulation) cannot be
  computed, and none is made up.
- ``results``: one row per shown document, ``rank`` 1..N.
- ``clicks``: one row per listed click, in click order; ``rank`` = the position of the
  clicked document in the shown list. A clicked id that is **not among the shown documents**
  (a click on another page element) is written with ``rank`` NULL and ``doc_id`` = the id, so
  the evidence is kept and the loader excludes it as a click not on the page, counted in its
  report; the converter counts these too (``clicks_on_unshown_documents``).

Malformed records (no tab, no ``:``, a query token without ``_region``, an empty or
space-containing document id, the same document shown twice, an empty clicked id) raise
:class:`~onlineeval.errors.LogFormatError` with ``file:line`` of the record's start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from onlineeval.errors import LogFormatError
from onlineeval.logs.convert._text import numbered_lines
from onlineeval.logs.convert.parquet import TableWriter

DESCRIPTION = ("Yandex WSCD 2014 sample (PyClick format): ';'-separated records "
               "'<query>_<region>\\t<docs> : <clicks>'")
NOTES = ("no users, sessions or times: each page is its own user, no ts; clicks on documents "
         "not shown are kept with rank NULL (the loader excludes and counts them)")
COLUMNS: dict[str, list[str]] = {
    "searches": ["search_id", "user_id", "query", "region", "n_results"],
    "results": ["search_id", "rank", "doc_id"],
    "clicks": ["search_id", "rank", "doc_id"],
}


def records(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_of_record_start, record_text)`` for every non-blank ``;``-separated record."""
    pieces: list[str] = []
    start: int | None = None
    for number, line in numbered_lines(path):
        parts = line.split(";")
        for i, part in enumerate(parts):
            if start is None and part.strip():
                start = number
            pieces.append(part)
            if i < len(parts) - 1:
                text = "".join(pieces)
                if text.strip():
                    yield start or number, text
                pieces, start = [], None
        pieces.append("\n")
    text = "".join(pieces)
    if text.strip():
        yield start or 1, text


def _ids(path: Path, line: int, text: str, what: str) -> list[str]:
    ids = [t.strip() for t in text.split(",")]
    for t in ids:
        if not t or any(ch.isspace() for ch in t):
            raise LogFormatError(
                path, line, f"{what} must be comma-separated ids without spaces inside; "
                f"found {t!r} in {text.strip()!r}"
            )
    return ids


def parse_record(path: Path, line: int, text: str) -> tuple[str, str, list[str], list[str]]:
    """Parse one record into (query_id, region, shown documents, clicked ids)."""
    record = text.strip()
    token, tab, rest = record.partition("\t")
    if not tab:
        raise LogFormatError(
            path, line, "expected '<query>_<region>' TAB '<docs> : <clicks>'; found no tab in "
            f"{record[:60]!r}"
        )
    query, underscore, region = token.strip().rpartition("_")
    if not underscore or not query or not region or any(ch.isspace() for ch in token.strip()):
        raise LogFormatError(path, line, f"the query token must look like 12345_2 "
                             f"(<query_id>_<region>); got {token!r}")
    docs_text, colon, clicks_text = rest.partition(":")
    if not colon:
        raise LogFormatError(path, line, "expected ' : ' between the shown documents and the "
                             f"clicks; found no ':' in {rest[:60]!r}")
    docs = _ids(path, line, docs_text, "shown documents")
    if len(set(docs)) != len(docs):
        dup = next(d for d in docs if docs.count(d) > 1)
        raise LogFormatError(path, line, f"document {dup!r} is shown twice on one page; each "
                             "shown document needs its own rank")
    clicks = _ids(path, line, clicks_text, "clicked documents") if clicks_text.strip() else []
    return query, region, docs, clicks


def convert(paths: list[Path], writer: TableWriter) -> dict[str, int]:
    """Read the sample's files into ``writer``; return the counted decisions."""
    counts = {"pages": 0, "pages_with_clicks": 0, "pages_with_clicks_on_shown_documents": 0,
              "clicks": 0, "clicks_on_shown_documents": 0, "clicks_on_unshown_documents": 0,
              "repeated_clicks": 0}
    n = 0
    for path in paths:
        for line, text in records(path):
            query, region, docs, clicks = parse_record(path, line, text)
            n += 1
            sid = f"p{n:06d}"
            writer.add("searches", (sid, f"u{n:06d}", query, region, len(docs)))
            rank_of = {d: r + 1 for r, d in enumerate(docs)}
            for r, d in enumerate(docs):
                writer.add("results", (sid, r + 1, d))
            seen: set[str] = set()
            shown_clicked = False
            for c in clicks:
                rank = rank_of.get(c)
                writer.add("clicks", (sid, rank, c))
                if rank is None:
                    counts["clicks_on_unshown_documents"] += 1
                else:
                    counts["clicks_on_shown_documents"] += 1
                    shown_clicked = True
                if c in seen:
                    counts["repeated_clicks"] += 1
                seen.add(c)
            counts["pages"] += 1
            counts["clicks"] += len(clicks)
            counts["pages_with_clicks"] += bool(clicks)
            counts["pages_with_clicks_on_shown_documents"] += shown_clicked
    return counts
