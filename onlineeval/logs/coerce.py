"""``as_logs``: what every API function taking a log accepts, made a loaded log.

One definition for every function with a ``logs`` argument: a :class:`~onlineeval.logs.Logs`
(used as it is), a path to a log directory, or a dict of the tables
(``{"searches": df_or_path, "clicks": ..., "results": ...}``) — exactly what
:func:`onlineeval.load_logs` reads, loaded with its defaults. A column mapping or strict mode
is a ``load_logs`` argument: load with them once and pass the ``Logs``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import duckdb

from onlineeval.errors import InvalidParameterError
from onlineeval.logs.load import Logs, load_logs

#: what the messages say a log argument may be
ACCEPTED = ("a Logs from onlineeval.load_logs, a path to a log directory, or a dict of "
            "tables {'searches': ..., 'clicks': ..., 'results': ...} (DataFrames or paths)")


def as_logs(logs: Any, *, loaded: bool = False, what: str = "",
            attribution_window: Any = None, event_type: Any = None) -> Any:
    """The loaded log ``logs`` stands for (see the module docstring).

    With ``loaded``, only a log already loaded is accepted: a function whose result lives on
    the log's own connection (a view name) would leave it on a connection nobody holds;
    ``what`` names the function for that message. An object with a DuckDB ``con`` holding
    the views searches, results and clicks is taken as loaded.

    ``attribution_window`` and ``event_type``, when not None, give the log other event
    attribution settings (:meth:`Logs.with_events`: a copy; the log passed is unchanged).
    """
    if attribution_window is not None or event_type is not None:
        loaded_logs = as_logs(logs, loaded=loaded, what=what)
        if not hasattr(loaded_logs, "with_events"):
            raise InvalidParameterError(
                "attribution_window and event_type need a log loaded with "
                f"onlineeval.load_logs; got {type(logs).__name__}")
        return loaded_logs.with_events(attribution_window, event_type)
    if isinstance(logs, Logs) or isinstance(getattr(logs, "con", None),
                                            duckdb.DuckDBPyConnection):
        return logs
    if loaded:
        raise InvalidParameterError(
            f"{what or 'this function'} needs a log loaded with onlineeval.load_logs (its "
            f"result is a view on that log's connection, logs.con); got "
            f"{type(logs).__name__}. Load it first: logs = onlineeval.load_logs(...)"
        )
    if isinstance(logs, str | os.PathLike):
        return load_logs(logs)
    if isinstance(logs, Mapping) and logs:
        return load_logs(logs)  # it checks the table names
    hint = ""
    if type(logs).__name__ == "DataFrame":
        hint = " (one DataFrame is one table: pass {'searches': df, 'clicks': df2})"
    raise InvalidParameterError(f"logs must be {ACCEPTED}; got {type(logs).__name__}{hint}")
