"""Converters from public click-log formats to the canonical Parquet tables.

``convert(input, outdir, format)`` reads ``input`` (a file, a ``.gz`` file, or a directory of
such files read in name order) and writes ``searches.parquet``, ``clicks.parquet`` and, when
the format shows result lists, ``results.parquet`` into ``outdir``. It returns a
:class:`ConvertReport`: rows written per table, and counts of everything noteworthy the
converter decided (e.g. clicks on documents that were not in the shown list). A malformed
input line raises :class:`~onlineeval.errors.LogFormatError` naming ``file:line``.

Formats live in :data:`FORMATS` (a :class:`~onlineeval.registry.Registry`); each is a module
of this package with a ``convert(paths, writer) -> dict[str, int]`` function:

``aol``
    The AOL query log (2006): tab-separated ``AnonID Query QueryTime ItemRank ClickURL``.
    See :mod:`onlineeval.logs.convert.aol`.
``yandex-wscd``
    The Yandex WSCD 2014 click sample as distributed with PyClick: ``;``-separated records
    ``<query>_<region>\\t<doc>,...,<doc> : <clicked doc>, ...``.
    See :mod:`onlineeval.logs.convert.yandex_wscd`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from onlineeval.atomic import Output
from onlineeval.errors import InputError, OutputError
from onlineeval.logs.convert import aol, yandex_wscd
from onlineeval.logs.convert.parquet import TABLE_NAMES, LogTables, TableWriter, write_logs
from onlineeval.progress import Progress
from onlineeval.registry import Registry


@dataclass(frozen=True)
class Format:
    """A registered input format: its converter, the tables it writes, and a description."""

    name: str
    description: str
    columns: dict[str, list[str]]
    run: Callable[..., dict[str, int]]
    notes: str = ""


#: the files a conversion writes (and, with overwrite, replaces)
_OUTPUT_NAMES = tuple(f"{t}.parquet" for t in TABLE_NAMES)

FORMATS: Registry[Format] = Registry("log format")
FORMATS.register("aol", Format("aol", aol.DESCRIPTION, aol.COLUMNS, aol.convert, aol.NOTES))
FORMATS.register(
    "yandex-wscd",
    Format("yandex-wscd", yandex_wscd.DESCRIPTION, yandex_wscd.COLUMNS, yandex_wscd.convert,
           yandex_wscd.NOTES),
    aliases=("yandex", "wscd"),
)


@dataclass
class ConvertReport:
    """What a conversion did: rows written per table and counted decisions."""

    format: str
    inputs: list[str]
    outdir: str
    rows: dict[str, int]
    counts: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    notes: str = ""

    def summary(self) -> str:
        """Human-readable lines: rows per table, then the counted decisions."""
        lines = [f"converted {len(self.inputs)} file(s) from {self.format} into {self.outdir}"]
        for table, n in self.rows.items():
            where = self.files.get(table)
            lines.append(f"  {table}: {n} rows" + (f" -> {where}" if where else " (not written)"))
        for key, n in self.counts.items():
            lines.append(f"  {key.replace('_', ' ')}: {n}")
        if self.notes:
            lines.append(f"  note: {self.notes}")
        return "\n".join(lines)


def input_files(path: str | Path) -> list[Path]:
    """The files to read: ``path`` itself, or the regular files of a directory in name order."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        if not files:
            raise InputError(f"{p}: the input directory holds no files; give a log file or a "
                             "directory of log files")
        return files
    if not p.exists():
        raise InputError(f"{p}: no such file or directory; give the path of the log to convert")
    return [p]


def _check_outdir(outdir: Path, overwrite: bool) -> None:
    """Tables already in ``outdir`` are an error unless ``overwrite`` and converted earlier
    (``.parquet`` tables); tables in another form would be read together with the new ones."""
    if not outdir.exists():
        return
    if not outdir.is_dir():
        raise OutputError(f"{outdir} is a file; expected a directory for the output")
    found = sorted(p for t in TABLE_NAMES for p in outdir.glob(f"{t}.*"))
    found += sorted(p for t in TABLE_NAMES if (p := outdir / t).is_dir())
    if not found:
        return
    ours = [p for p in found if p.name in _OUTPUT_NAMES]
    others = [p for p in found if p not in ours]
    if others:
        raise OutputError(
            f"{outdir} already holds log tables that the converter does not write "
            f"({', '.join(p.name for p in others)}); a loader reading the directory would mix "
            "them with the converted ones. Choose an empty output directory."
        )
    if not overwrite:
        raise OutputError(
            f"{outdir} already holds converted tables ({', '.join(p.name for p in ours)}); "
            "pass overwrite=True (CLI: --force) to replace them, or choose another directory"
        )


def convert(input: str | Path, outdir: str | Path, format: str,  # noqa: A002
            chunk_rows: int = 200_000, overwrite: bool = False) -> ConvertReport:
    """Convert a log in ``format`` (see :data:`FORMATS`) to canonical Parquet in ``outdir``.

    ``outdir`` must not already hold ``searches``/``results``/``clicks`` tables unless
    ``overwrite``. The tables are built in a temporary directory next to ``outdir`` and moved
    into it only when all are complete (:class:`onlineeval.atomic.Output`); only then are
    the old ``.parquet`` tables replaced, including a ``results`` table this format does not
    write (it would be read with the new tables). Other files in ``outdir`` stay. An input
    without a single record is an error.
    """
    fmt = FORMATS.get(format)
    files = input_files(input)
    shown = Path(outdir)
    _check_outdir(shown, overwrite)
    # a big log takes minutes: count pages on a terminal (silent otherwise)
    with Output(inputs=[input, *files]) as out, \
            Progress(f"converting {fmt.name}: pages") as bar, \
            TableWriter(fmt.columns, chunk_rows=chunk_rows, progress=bar) as writer:
        stage = out.directory(shown, overwrite=overwrite, replaces=_OUTPUT_NAMES)
        counts = fmt.run(files, writer)
        if writer.counts["searches"] == 0:
            raise InputError(
                f"found no {fmt.name} records in {', '.join(map(str, files))}; expected "
                f"{fmt.description}"
            )
        written = writer.finish(stage, skip_empty=("results",))
        rows = dict(writer.counts)
    return ConvertReport(
        format=fmt.name, inputs=[str(f) for f in files], outdir=str(shown), rows=rows,
        counts=counts, files={t: str(shown / p.name) for t, p in written.items()},
        notes=fmt.notes,
    )


__all__ = ["FORMATS", "ConvertReport", "Format", "LogTables", "convert", "input_files",
           "write_logs"]
