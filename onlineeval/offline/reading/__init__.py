"""Reading TREC qrels and runs: files, DataFrames and dicts, by trec_eval 10.0's rules.

Public readers
    ``read_qrels(source) -> DataFrame[qid: str, docno: str, rel: int64]``
    ``read_run(source)   -> DataFrame[qid: str, docno: str, rank: str, score: float64, tag: str]``

``source`` is a path (str / os.PathLike), a pandas DataFrame with the columns named above
(qrels: qid, docno, rel; run: qid, docno, score — other columns are ignored) or a dict
``{qid: {docno: value}}`` (value = relevance grade for qrels, score for runs). Every form is
validated the same way and comes back as a DataFrame in file / row order.

File formats (as trec_eval 10.0 reads them, ``get_qrels.c`` / ``get_trec_results.c``)
    qrels: ``qid iter docno rel`` — exactly four whitespace-separated fields; ``iter`` is
    ignored; ``rel`` is an integer grade, negative grades allowed (trec_eval treats a negative
    grade as "in the pool but unjudged"; see :mod:`onlineeval.offline.ranking`).
    run: ``qid iter docno rank score tag`` — at least six fields, anything after the sixth is
    ignored (trec_eval does the same); ``rank`` is NOT used for ranking (trec_eval ignores it);
    ``score`` must be a number. The run's id (printed by ``runid``) is the tag of the last
    line, as in trec_eval.
    Both: fields are separated by any run of ASCII whitespace (space, tab, \\v, \\f, \\r —
    C ``isspace``, as trec_eval; other Unicode whitespace such as U+00A0 belongs to the field);
    blank lines are skipped. Lines end at ``\\n`` only; a lone ``\\r`` is whitespace inside
    the line, as for trec_eval.

Comment lines (trec_eval 10.0's rules, which differ between the two formats)
    run (``te_get_trec_results`` in get_trec_results.c): a line whose first non-blank
    character is ``#`` is a comment, anywhere and any number of them. So no run line can
    have a qid that starts with ``#``.
    qrels (``te_get_qrels`` in get_qrels.c): a line is a comment only when ``#`` is its
    FIRST character (``   #x 0 d 1`` is a judgment of query ``#x``), and trec_eval then
    reads the next line as a judgment whatever it holds: of two comment lines in a row the
    second is data (query ``#...``), and a comment as the last line makes trec_eval read
    past the end of its buffer — onlineeval refuses that file (error on the comment line).
    trec_eval refuses blank lines in a qrels file ("Malformed line"); onlineeval skips them,
    i.e. it reads a qrels file as trec_eval reads it with the blank lines deleted.
    A ``#`` inside a line (``d#1``, or after the fields) is an ordinary character in both.
    A DataFrame or dict whose qid starts with ``#`` is refused (SchemaError naming the row):
    written to a file its line would be a comment, so trec_eval would not score it.

Text encoding
    The fields onlineeval keeps — qid and docno, and for :func:`read_run` also rank and tag
    (for the engine, the tag of the last line: the run id) — must be valid UTF-8; a field
    that is not is a :class:`~onlineeval.errors.LogFormatError` naming ``file:line`` and the
    field. trec_eval reads every field as raw bytes (its ``strcmp`` order is the byte
    order), so it would accept, say, Latin-1 docnos; onlineeval returns qids and docnos as
    Python text and pandas 3's string dtype cannot hold undecodable bytes, so such a file is
    refused rather than altered. trec_eval gives the same results on a Latin-1 file
    re-encoded as UTF-8 (``iconv -f latin1 -t utf-8``): the mapping is one-to-one and UTF-8
    keeps the byte order of Latin-1 text. Fields trec_eval ignores (iter, anything after
    the sixth field; in the engine also rank and all tags but the last) and comment lines
    are not checked.

Byte-order mark
    A UTF-8 byte-order mark (``EF BB BF``, U+FEFF) at the very start of a file — as Windows
    editors and Excel write them — is dropped on every reader path: the file is read as the
    same file without it (trec_eval would read the mark as part of the first qid, which
    invents a query or, in a run, loses the first query's first line). A U+FEFF at the start
    of a later line (files concatenated with their marks) is an error naming the line: no
    qid starts with it, so reading it would invent a query. A file that starts with a UTF-16
    or UTF-32 byte-order mark, or is gzip-compressed, is refused with a message saying how
    to convert it.

Where we are stricter than trec_eval (documented choices, each a clear error, never a silent
change of the numbers): a non-numeric or NaN score (trec_eval's ``atof`` would read it as 0 or
a prefix of it; a score or grade must be written in ASCII: Python reads ``1_0`` and
Arabic-Indic digits as numbers, ``atof``/``atol`` do not; a hexadecimal grade ``0x1``, which
pyarrow would read as 1 and ``atol`` reads as 0, is refused too), a non-integer grade (``atol``
would truncate ``1.5`` to 1), a qrels file that ends with a comment line and a DataFrame
qid that starts with ``#`` (see "Comment lines"), a kept field
that is not UTF-8 (see "Text encoding"), and a qrels line
with more than four fields or a run line with fewer than six (trec_eval also refuses these,
but names only a line count that skips comments). Errors are
:class:`~onlineeval.errors.LogFormatError` naming ``file:line``, what was expected and what was
found. Duplicates are not a reader error; :func:`onlineeval.offline.ranking.prepare` refuses
them exactly where trec_eval does.

Modules (each one job)
    :mod:`~.sources`       the readers: ``read_qrels`` / ``read_run`` (DataFrames) and
                           ``load_qrels`` / ``load_run`` (:class:`~.columns.Columns` for the
                           engine), choosing the reader for each source
    :mod:`~.arrow_reader`  the fast reader (pyarrow's CSV reader) for regular files
    :mod:`~.byte_check`    the check of every byte that decides a file is regular
    :mod:`~.dictionary`    dictionary encoding of text columns (through runs of equal values)
    :mod:`~.line_scanner`  the line-by-line reader: every other file, and every file:line error
    :mod:`~.text_rules`    whitespace, byte-order marks, UTF-8 and the file checks both use
    :mod:`~.frames`        validation of DataFrames and dicts
"""

from onlineeval.offline.reading.columns import Columns, Labelled
from onlineeval.offline.reading.sources import (
    QRELS_COLUMNS,
    RUN_COLUMNS,
    load_qrels,
    load_run,
    read_qrels,
    read_run,
)

__all__ = ["QRELS_COLUMNS", "RUN_COLUMNS", "Columns", "Labelled", "load_qrels", "load_run",
           "read_qrels", "read_run"]
