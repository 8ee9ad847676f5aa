"""Reading text logs: plain or gzip files, decoded as UTF-8, with errors naming file:line."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from onlineeval.errors import LogFormatError


def open_binary(path: Path) -> BinaryIO:
    """Open ``path`` for reading bytes; ``.gz`` files are decompressed on the fly."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_number, line_without_newline)`` for every line; 1-based numbers.

    Lines are decoded one by one, so a byte sequence that is not UTF-8 raises
    :class:`LogFormatError` with the number of the line that holds it.
    """
    number = 0
    try:
        with open_binary(path) as fh:
            for raw in fh:
                number += 1
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise LogFormatError(
                        path, number, f"the line is not valid UTF-8 text ({exc.reason}); "
                        "convert the file to UTF-8 first"
                    ) from None
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]  # a byte-order mark is not part of the first field
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError) as exc:
        raise LogFormatError(path, number + 1, f"cannot read the file: {exc}") from None
