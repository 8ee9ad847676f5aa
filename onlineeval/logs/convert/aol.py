"""The AOL query log (2006) -> canonical tables.

Input: tab-separated lines ``AnonID  Query  QueryTime  ItemRank  ClickURL`` (a header line with
these names is skipped when it is a file's first line). A line is either a query without a click
(ItemRank and ClickURL empty or missing) or one click (both present). QueryTime is
``YYYY-MM-DD HH:MM:SS``.

What is written:

- ``searches``: one row per *page*: consecutive lines of one file with the same AnonID, Query
  and QueryTime are one page. ``search_id`` = ``a<N>`` (N counts pages from 1 across the
  input files), ``user_id`` = AnonID, ``ts`` = QueryTime, ``query`` = Query (kept verbatim,
  including AOL's ``-`` for an empty query). ``n_results`` is absent: the log does not say
  how many results were shown, so metrics that need it (abandonment, zero-result rate) are not
  computable, and ``session_id`` is absent (derived by the loader from the 30-minute gap).
- ``clicks``: one row per click line: ``rank`` = ItemRank, ``doc_id`` = ClickURL; no click
  time and no dwell (the log records only the query time).
- ``results``: not written; AOL does not record the shown lists, so position CTR cannot be
  computed.

Malformed lines (fewer than 3 or more than 5 fields, empty AnonID, an unparsable QueryTime, an
ItemRank that is not a whole number from 1 to 2,147,483,647 in ASCII digits, ItemRank without
ClickURL or the reverse) raise :class:`~onlineeval.errors.LogFormatError` with ``file:line``.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from onlineeval.errors import LogFormatError
from onlineeval.logs.convert._text import numbered_lines
from onlineeval.logs.convert.parquet import TableWriter

DESCRIPTION = "AOL query log: tab-separated AnonID, Query, QueryTime, ItemRank, ClickURL"
NOTES = ("AOL has no shown result lists (no results table, no n_results) and no click times; "
         "sessions are derived by the loader")
HEADER = ("AnonID", "Query", "QueryTime", "ItemRank", "ClickURL")
COLUMNS: dict[str, list[str]] = {
    "searches": ["search_id", "user_id", "ts", "query"],
    "results": ["search_id", "rank", "doc_id"],
    "clicks": ["search_id", "rank", "doc_id"],
}
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_DIGITS = re.compile(r"[0-9]+")
_MAX_RANK = 2_147_483_647  # largest value of the INTEGER rank column


def _parse(path: Path, number: int, line: str) -> tuple[str, str, datetime, int | None, str]:
    fields = line.split("\t")
    if not 3 <= len(fields) <= 5:
        raise LogFormatError(
            path, number, f"expected 3 to 5 tab-separated fields (AnonID, Query, QueryTime, "
            f"ItemRank, ClickURL); found {len(fields)}"
        )
    fields += [""] * (5 - len(fields))
    anon, query, when, rank_text, url = fields
    if not anon.strip():
        raise LogFormatError(path, number, "AnonID (field 1) is empty; every line needs a user")
    try:
        ts = datetime.strptime(when.strip(), _TIME_FORMAT)
    except ValueError:
        raise LogFormatError(
            path, number, f"QueryTime (field 3) {when!r} is not a time like 2006-03-01 07:17:12"
        ) from None
    rank_text, url = rank_text.strip(), url.strip()
    if bool(rank_text) != bool(url):
        raise LogFormatError(
            path, number, "ItemRank and ClickURL (fields 4-5) must both be present (a click) "
            f"or both empty (a query without a click); got {rank_text!r} and {url!r}"
        )
    rank: int | None = None
    if rank_text:
        # ASCII digits only: str.isdigit() also accepts '²' (int() then fails) and other
        # scripts' digits; and the rank must fit the INTEGER column it is written to
        if (not _DIGITS.fullmatch(rank_text) or not 1 <= int(rank_text) <= _MAX_RANK):
            raise LogFormatError(
                path, number, f"ItemRank (field 4) must be a positive integer (1 to "
                f"{_MAX_RANK:,}, digits 0-9); got {rank_text!r}"
            )
        rank = int(rank_text)
    return anon.strip(), query, ts, rank, url


def convert(paths: list[Path], writer: TableWriter) -> dict[str, int]:
    """Read AOL files into ``writer``; return counts (lines, pages, clicks, headers)."""
    counts = {"input_lines": 0, "header_lines_skipped": 0, "blank_lines_skipped": 0,
              "pages": 0, "pages_with_clicks": 0, "clicks": 0}
    n_page = 0
    for path in paths:
        page_key: tuple[str, str, datetime] | None = None
        page_clicked = False
        for number, line in numbered_lines(path):
            counts["input_lines"] += 1
            if number == 1 and tuple(f.strip() for f in line.split("\t")) == HEADER:
                counts["header_lines_skipped"] += 1
                continue
            if not line.strip():
                counts["blank_lines_skipped"] += 1
                continue
            anon, query, ts, rank, url = _parse(path, number, line)
            key = (anon, query, ts)
            if key != page_key:
                n_page += 1
                page_key = key
                page_clicked = False
                writer.add("searches", (f"a{n_page}", anon, ts, query))
                counts["pages"] += 1
            if rank is not None:
                writer.add("clicks", (f"a{n_page}", rank, url))
                counts["clicks"] += 1
                if not page_clicked:
                    counts["pages_with_clicks"] += 1
                    page_clicked = True
    return counts
