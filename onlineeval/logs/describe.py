"""What a loaded log holds, for ``onlineeval validate``: its schema as found, time range,
experiments and variants with their units, and the load report.

Per table each canonical column is *provided* (read from the source, named after which source
column), *derived* (computed from other columns, saying how) or *absent*; the rules for
derived columns are the loader's and the online metrics' (:mod:`onlineeval.logs.validate`,
``sql/logs/clicks/clean.sql``, :mod:`onlineeval.online.facts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from onlineeval import queries
from onlineeval.errors import SchemaError
from onlineeval.logs.coerce import as_logs
from onlineeval.logs.report import REASONS
from onlineeval.logs.schema import TABLES, column_names


def _derived(logs: Any, table: str, column: str) -> str | None:
    """How ``table.column`` is derived when the source lacks it, or None (absent)."""
    has = logs.has
    if table == "searches" and column == "n_results" and logs.has_results:
        return "counted from the results rows of the search"
    if table == "searches" and column == "session_id" and has("searches", "ts"):
        return ("derived by the online metrics: a user's searches with gaps under 30 minutes "
                "(--session-gap-min) form a session")
    if table == "clicks" and column == "rank" and logs.has_results and has("clicks", "doc_id"):
        return "looked up in results by the clicked doc_id"
    if table == "clicks" and column == "doc_id" and logs.has_results and has("clicks", "rank"):
        return "looked up in results by the clicked rank"
    return None


@dataclass
class LogDescription:
    """A loaded log described (see the module docstring); :meth:`to_dict` is the JSON form."""

    source: str
    #: table -> {"given": bool, "rows_read", "rows_kept", "provided": {column: source column},
    #: "derived": {column: how}, "absent": [columns], "empty": [columns], "extra": [columns]}
    tables: dict[str, dict[str, Any]]
    #: first_ts, last_ts (None without ts), searches_with_ts, searches
    time_range: dict[str, Any]
    #: experiment, variant (the log's values), units, searches, units_elsewhere
    variants: pd.DataFrame
    unit: str
    #: [{"table", "reason", "rows", "meaning"}]
    exclusions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def excluded_total(self) -> int:
        return sum(e["rows"] for e in self.exclusions)

    def to_dict(self) -> dict[str, Any]:
        from onlineeval.formatting import records

        tr = {k: (v.isoformat() if hasattr(v, "isoformat") else v)
              for k, v in self.time_range.items()}
        return {"source": self.source, "tables": self.tables, "time_range": tr,
                "unit": self.unit, "variants": records(self.variants),
                "exclusions": self.exclusions, "excluded_total": self.excluded_total}


def describe(logs: Any, unit: str = "user_id") -> LogDescription:
    """Describe ``logs`` (anything :func:`onlineeval.logs.as_logs` accepts); ``unit`` is the
    searches column the variants' units are counted by."""
    logs = as_logs(logs)
    columns = [c for c in column_names("searches") if logs.has("searches", c)]
    columns += list(logs.extra_columns("searches"))
    if unit not in columns:
        raise SchemaError(f"the searches table of {logs.source} has no column {unit!r} to "
                          f"count units by; its columns are: {', '.join(columns)}")
    report = logs.report
    tables: dict[str, dict[str, Any]] = {}
    for t in TABLES:
        given = t in report.rows_read
        provided, derived, absent = {}, {}, []
        for c in column_names(t):
            if given and logs.has(t, c):
                provided[c] = logs.source_column(t, c) or c
            elif given and _derived(logs, t, c):
                derived[c] = _derived(logs, t, c)
            else:
                absent.append(c)
        tables[t] = {"given": given, "rows_read": report.rows_read.get(t, 0),
                     "rows_kept": report.rows_kept(t), "provided": provided,
                     "derived": derived, "absent": absent,
                     "empty": list(report.empty_columns.get(t, ())),
                     "extra": list(logs.extra_columns(t))}
    q = queries.load("logs/time_range")
    row = logs.con.execute(q.render()).fetchone()
    time_range = dict(zip(("first_ts", "last_ts", "searches_with_ts", "searches"), row,
                          strict=True))
    v = queries.load("logs/variant_units")
    variants = logs.con.execute(v.render(unit=[unit])).df()
    for c in ("units", "searches", "units_elsewhere"):
        variants[c] = variants[c].astype("int64")
    exclusions = [{"table": t, "reason": r, "rows": n, "meaning": REASONS.get(r, r)}
                  for (t, r), n in report.excluded.items()]
    return LogDescription(logs.source, tables, time_range, variants, unit, exclusions)
