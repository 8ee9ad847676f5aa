"""What a TREC file's bytes may be: whitespace, byte-order marks, UTF-8 and file checks.

Shared by the line scanner and the pyarrow reader, so both apply the very same rules (the
rules themselves are described in :mod:`onlineeval.offline.reading`).
"""

from __future__ import annotations

import re
from pathlib import Path

from onlineeval.errors import LogFormatError

# trec_eval splits fields with C isspace(): ASCII whitespace only (str.split() would also
# split on NBSP, U+2000.., and \x1c-\x1f)
WHITESPACE = " \t\r\n\v\f"
FIELD_SEP = re.compile("[" + re.escape(WHITESPACE) + "]+")
# what a field cannot hold: the separators, and NUL, which the line scanner refuses
NOT_IN_FIELD = WHITESPACE + "\x00"

BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")

MID_FILE_BOM = (
    "the line starts with a byte-order mark (U+FEFF, bytes EF BB BF), which belongs only at "
    "the start of a file (were files concatenated with their marks?); no qid starts with it. "
    "Remove it, e.g. sed -i 's/^\\xEF\\xBB\\xBF//' FILE"
)

# leading bytes of files that are not UTF-8 text (UTF-32 LE before UTF-16 LE: FF FE 00 00)
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip -k FILE)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian byte-order mark FF FE 00 00)",
     "re-encode it, e.g. iconv -f UTF-32 -t UTF-8 OLD > NEW"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian byte-order mark 00 00 FE FF)",
     "re-encode it, e.g. iconv -f UTF-32 -t UTF-8 OLD > NEW"),
    (b"\xff\xfe", "UTF-16 (little-endian byte-order mark FF FE)",
     "re-encode it, e.g. iconv -f UTF-16 -t UTF-8 OLD > NEW"),
    (b"\xfe\xff", "UTF-16 (big-endian byte-order mark FE FF)",
     "re-encode it, e.g. iconv -f UTF-16 -t UTF-8 OLD > NEW"),
)


def check_file(path: Path) -> None:
    """A LogFormatError unless ``path`` is a non-empty file that may be UTF-8 text."""
    if not path.exists():
        raise LogFormatError(path, None, "file not found; give the path of a TREC file")
    if path.is_dir():
        raise LogFormatError(path, None, "is a directory; give the path of a TREC file")
    if path.stat().st_size == 0:
        raise LogFormatError(path, None, "file is empty; a TREC file needs at least one line")
    with open(path, "rb") as fh:
        head = fh.read(4)
    for magic, what, fix in _NOT_TEXT:
        if head.startswith(magic):
            raise LogFormatError(path, None, f"the file is {what}; onlineeval reads TREC "
                                             f"files as plain UTF-8 text: {fix}")


def is_text(value: str) -> bool:
    """False when ``value`` holds undecodable bytes (surrogates from ``surrogateescape``)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(path: Path, lineno: int, parts: list[str],
               fields: tuple[tuple[int, str], ...]) -> None:
    """LogFormatError at ``path:lineno`` for the first of ``fields`` that is not UTF-8."""
    for index, name in fields:
        if not is_text(parts[index]):
            raw = parts[index].encode("utf-8", errors="surrogateescape")
            raise LogFormatError(
                path, lineno,
                f"{name} is not valid UTF-8: {raw!r}. onlineeval reads qids, docnos and "
                f"tags as UTF-8 text (trec_eval compares raw bytes); re-encode the file as "
                f"UTF-8, e.g. iconv -f latin1 -t utf-8 OLD > NEW for a Latin-1 file",
            )
