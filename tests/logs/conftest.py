from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

TINY = Path(__file__).resolve().parent.parent / "data" / "logs" / "tiny"


@pytest.fixture
def tiny_dir() -> Path:
    return TINY


def _tiny_frames() -> dict[str, pd.DataFrame]:
    return {t: pd.read_csv(TINY / f"{t}.csv", dtype=str, keep_default_na=False).replace("", None)
            for t in ("searches", "results", "clicks")}


def _rows(logs, view: str) -> list[tuple]:
    cols = {"searches": "search_id", "results": "search_id, rank", "clicks": "search_id, rank"}
    return logs.con.execute(f"SELECT * FROM {view} ORDER BY {cols[view]}").fetchall()


@pytest.fixture
def tiny_frames():
    """Function returning the tiny log as DataFrames of text (as read from its CSV files)."""
    return _tiny_frames


@pytest.fixture
def rows():
    """Function returning the rows of a view of a loaded log, in a fixed order."""
    return _rows


def _write_frames(frames, directory, fmt):
    """Write each DataFrame of ``frames`` as ``directory/<name>.<fmt>`` (``parts``: a folder
    of two Parquet parts per name, with a ``_SUCCESS`` marker)."""
    directory.mkdir(parents=True, exist_ok=True)
    for t, df in frames.items():
        if fmt == "csv":
            df.to_csv(directory / f"{t}.csv", index=False)
        elif fmt == "csv.gz":
            with gzip.open(directory / f"{t}.csv.gz", "wt") as fh:
                df.to_csv(fh, index=False)
        elif fmt == "tsv":
            df.to_csv(directory / f"{t}.tsv", index=False, sep="\t")
        elif fmt == "parquet":
            df.to_parquet(directory / f"{t}.parquet", index=False)
        elif fmt == "jsonl":
            df.to_json(directory / f"{t}.jsonl", orient="records", lines=True)
        elif fmt == "parts":
            # a folder of parts per table, plus the marker files Spark leaves behind
            part_dir = directory / t
            part_dir.mkdir()
            half = len(df) // 2
            df.iloc[:half].to_parquet(part_dir / "part-0.parquet", index=False)
            df.iloc[half:].to_parquet(part_dir / "part-1.parquet", index=False)
            (part_dir / "_SUCCESS").write_text("")
        else:
            raise AssertionError(fmt)


@pytest.fixture
def write_frames():
    """Function writing DataFrames as the files of a log in a format (see _write_frames)."""
    return _write_frames
