from __future__ import annotations

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
