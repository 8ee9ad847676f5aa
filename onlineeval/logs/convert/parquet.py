"""Canonical log tables in memory (:class:`LogTables`) and on disk (zstd Parquet via DuckDB).

Shared by the simulator and the format converters, so both write the same column types:
ids VARCHAR, ts TIMESTAMP, rank and n_results INTEGER, dwell_ms BIGINT. A column that is
entirely null is left out of the file, so readers see it as absent (e.g. ``ts`` of a log from a
source without times, ``team`` on plain A/B pages).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from onlineeval import queries
from onlineeval.atomic import temp_path
from onlineeval.progress import Progress
from onlineeval.queries import quote_ident

TABLE_NAMES: tuple[str, ...] = ("searches", "results", "clicks")

# canonical column -> SQL type written (other columns are written with their own type)
TYPES: dict[str, dict[str, str]] = {
    "searches": {
        "search_id": "VARCHAR", "user_id": "VARCHAR", "ts": "TIMESTAMP",
        "session_id": "VARCHAR", "query": "VARCHAR", "qid": "VARCHAR", "region": "VARCHAR",
        "experiment": "VARCHAR", "variant": "VARCHAR", "n_results": "INTEGER",
    },
    "results": {"search_id": "VARCHAR", "rank": "INTEGER", "doc_id": "VARCHAR", "team": "VARCHAR"},
    "clicks": {
        "search_id": "VARCHAR", "rank": "INTEGER", "doc_id": "VARCHAR", "ts": "TIMESTAMP",
        "dwell_ms": "BIGINT",
    },
    "events": {
        "user_id": "VARCHAR", "ts": "TIMESTAMP", "type": "VARCHAR", "value": "DOUBLE",
        "search_id": "VARCHAR", "doc_id": "VARCHAR",
    },
}


def _quote(name: object) -> str:
    return quote_ident(str(name))


@dataclass
class LogTables:
    """The canonical tables as pandas DataFrames (``results`` may be empty; ``events``, the
    optional table of downstream events, is None when the log has none)."""

    searches: pd.DataFrame
    results: pd.DataFrame
    clicks: pd.DataFrame
    events: pd.DataFrame | None = None

    @staticmethod
    def concat(parts: list[LogTables]) -> LogTables:
        """Stack several logs' tables (their ids must already be distinct)."""
        def cat(frames: list[pd.DataFrame]) -> pd.DataFrame:
            full = [f for f in frames if len(f)]
            if full:
                return pd.concat(full, ignore_index=True)
            return frames[0].iloc[0:0] if frames else pd.DataFrame()
        events = [p.events for p in parts if p.events is not None]
        return LogTables(
            cat([p.searches for p in parts]),
            cat([p.results for p in parts]),
            cat([p.clicks for p in parts]),
            cat(events) if events else None,
        )


class TableWriter:
    """Collects rows of canonical tables in chunks (in a DuckDB database that can spill to
    disk) and writes each table as one Parquet file at :meth:`finish`.

    Input order of rows is kept within a table. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, columns: dict[str, list[str]], chunk_rows: int = 200_000,
                 progress: Progress | None = None) -> None:
        from onlineeval.db import connect

        self.progress = progress  # counts searches rows (pages) as they are added
        self.columns = columns
        self.chunk_rows = chunk_rows
        self.con = connect()
        self.con.execute("SET preserve_insertion_order = true")
        self._rows: dict[str, list[tuple]] = {t: [] for t in columns}
        self._created: set[str] = set()
        self.counts: dict[str, int] = {t: 0 for t in columns}

    def add(self, table: str, row: tuple) -> None:
        buf = self._rows[table]
        buf.append(row)
        self.counts[table] += 1
        if self.progress is not None and table == "searches":
            self.progress.update()
        if len(buf) >= self.chunk_rows:
            self._flush(table)

    def add_frame(self, table: str, df: pd.DataFrame) -> None:
        """Append a whole DataFrame (columns as declared for ``table``)."""
        self._flush(table)
        if len(df):
            self._insert(table, df[self.columns[table]])
            self.counts[table] += len(df)

    def _flush(self, table: str) -> None:
        buf = self._rows[table]
        if not buf:
            return
        df = pd.DataFrame(buf, columns=self.columns[table])
        self._rows[table] = []
        self._insert(table, df)

    def _insert(self, table: str, df: pd.DataFrame) -> None:
        types = TYPES[table]
        exprs = []
        for c in df.columns:
            if c in types:
                exprs.append(f"CAST({_quote(c)} AS {types[c]}) AS {_quote(c)}")
            else:
                exprs.append(_quote(c))
        rel = self.con.from_df(df).project(", ".join(exprs))
        if table in self._created:
            rel.insert_into(table)
        else:
            rel.create(table)
            self._created.add(table)

    def finish(self, outdir: str | Path, skip_empty: tuple[str, ...] = ()) -> dict[str, Path]:
        """Write ``<table>.parquet`` for every table into ``outdir`` (each under a temporary
        name until complete, :func:`onlineeval.atomic.temp_path`); tables named in
        ``skip_empty`` are not written when they have no rows. Returns the written paths."""
        outdir = Path(outdir)
        written: dict[str, Path] = {}
        for table, cols in self.columns.items():
            self._flush(table)
            if table not in self._created:
                if table in skip_empty:
                    continue
                empty = pd.DataFrame({c: pd.Series([], dtype="string") for c in cols})
                self._insert(table, empty)
            rel = self.con.table(table)
            q = queries.load("logs/column_counts")
            *counts, total = self.con.execute(
                q.render(table=[table], columns=[str(c) for c in cols])).fetchall()[0]
            keep = cols
            if total:
                # a column that is entirely null is absent from the source: leave it out
                keep = [c for c, n in zip(cols, counts, strict=True) if n > 0]
            path = outdir / f"{table}.parquet"
            with temp_path(path) as tmp:
                rel.project(", ".join(_quote(c) for c in keep)).write_parquet(
                    str(tmp), compression="zstd"
                )
            written[table] = path
        return written

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_logs(tables: LogTables, outdir: str | Path) -> dict[str, Path]:
    """Write ``searches.parquet``, ``results.parquet`` and ``clicks.parquet`` into ``outdir``,
    and ``events.parquet`` when ``tables.events`` is not None (even empty: the log has an
    events table that holds no event).

    Rows are sorted by search id (stable, so clicks stay in click order and results in rank
    order when they came that way), which makes files compress well and diff stably; events
    are written in their given order (their search id is often NULL). An empty ``results``
    table is not written (the table is optional). Returns the paths written.
    """
    frames = {}
    for name in TABLE_NAMES:
        df = getattr(tables, name)
        if len(df) and "search_id" in df.columns:
            df = df.sort_values("search_id", kind="stable", ignore_index=True)
        frames[name] = df
    if tables.events is not None:
        frames["events"] = tables.events
    columns = {name: [str(c) for c in df.columns] for name, df in frames.items()}
    with TableWriter(columns) as writer:
        for name in frames:
            writer.add_frame(name, frames[name])
        return writer.finish(outdir, skip_empty=("results",))
