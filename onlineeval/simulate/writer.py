"""Writing simulated logs: the canonical Parquet writer shared with the format converters.

``write_logs(tables, outdir)`` writes ``searches/results/clicks.parquet`` with the contract's
column types (see :mod:`onlineeval.logs.convert.parquet`).
"""

from __future__ import annotations

from onlineeval.logs.convert.parquet import LogTables, write_logs

__all__ = ["LogTables", "write_logs"]
