"""Writing an output file whole or not at all, and never over an input."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from onlineeval.errors import InputError


def check_not_input(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]
                    ) -> None:
    """Refuse an output path that is (or is inside) one of ``inputs``, or is a directory."""
    out = Path(output)
    if out.is_dir():
        raise InputError(f"{out}: the output is a directory; give a file name")
    target = out.resolve()
    for item in inputs:
        src = Path(item).resolve()
        # inside a log directory a new file could be read back as one of its tables
        if target == src or src in target.parents:
            raise InputError(
                f"{out}: refusing to write over or inside the input {item}; choose a path "
                "outside it")


def write_text_atomic(output: str | os.PathLike[str], text: str,
                      inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Write ``text`` to ``output`` through a temporary file in the same directory renamed
    into place, so a reader (or an interrupted run) never sees half a file."""
    check_not_input(output, inputs)
    out = Path(output)
    directory = out.parent if str(out.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{out}: the directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
