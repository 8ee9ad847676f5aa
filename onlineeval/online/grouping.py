"""The ``by=`` argument of the online functions: searches columns or time buckets of ts."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from onlineeval import queries
from onlineeval.errors import InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.progress import Elapsed

if TYPE_CHECKING:
    import pandas as pd

    from onlineeval.logs import Logs

#: time buckets accepted in ``by`` (and as ``freq``): name -> the column that
#: ``sql/online/time_buckets.sql`` adds as ``date_trunc(name, ts)``; weeks start on Monday.
TIME_BUCKETS: dict[str, str] = {"hour": "__hour", "day": "__day", "week": "__week"}


def with_time_buckets(logs: Logs, source: str) -> str:
    """Create (once per source) a temp view of ``source`` with the time-bucket columns added
    by ``online/time_buckets``, and return its name for a ``{{...}}`` identifier."""
    q = queries.load("online/time_buckets")
    return queries.create(logs.con, f"online_time_buckets__{source}", q.render(source=[source]))


@dataclass(frozen=True)
class Grouping:
    """Resolved group columns: ``sql`` names to group by, ``names`` to show."""

    names: tuple[str, ...]
    sql: tuple[str, ...]

    def rename(self) -> dict[str, str]:
        """Map SQL output names back to the requested names (time buckets)."""
        return {s: n for s, n in zip(self.sql, self.names, strict=True) if s != n}


def per_group(logs: Logs, query: str, grouping: Grouping, source: str = "searches",
              **params: Any) -> pd.DataFrame:
    """Run ``sql/<query>.sql`` over ``source`` (a view of one row per search, e.g. the
    searches or the session-free facts; time buckets added) grouped by ``grouping``.

    The query takes identifiers ``by`` and ``source`` and the bind parameters ``params``;
    its output columns are renamed back to the requested group names.
    """
    q = queries.load(query)
    sql = q.render(by=list(grouping.sql), source=[with_time_buckets(logs, source)])
    with Elapsed(f"computing {query.split('/')[-1].replace('_', ' ')}"):
        df = logs.con.sql(sql, params=q.bind(**params)).df()
    return df.rename(columns=grouping.rename())


def experiment_names(logs: Logs) -> list[str]:
    """The distinct non-NULL ``searches.experiment`` values of the log, sorted."""
    return [r[0] for r in logs.con.execute(queries.load("online/experiments").render()).fetchall()]


def warn_pooled_experiments(logs: Logs, grouping: Grouping, stacklevel: int = 3) -> None:
    """Warn, naming them, when the log holds several experiments and ``grouping`` does not
    separate them: each group then pools their searches (a ``control`` row would mix the
    control arms of every experiment)."""
    if "experiment" in grouping.names:
        return
    names = experiment_names(logs)
    if len(names) < 2:
        return
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    groups = f"the groups ({', '.join(grouping.names)})" if grouping.names else "the whole log"
    warnings.warn(
        f"the log {logs.source} holds {len(names)} experiments ({shown}) and {groups} do not "
        "separate them, so every row pools their searches; add experiment to the groups "
        "(by=['experiment', ...]; CLI: --by experiment,variant)",
        UserWarning, stacklevel=stacklevel,
    )


def searches_columns(logs: Logs) -> list[str]:
    """Columns of the clean ``searches`` view."""
    return list(logs.con.table("searches").columns)


def _as_list(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [b.strip() for b in by.split(",") if b.strip()]
    items = list(by)
    for b in items:
        if not isinstance(b, str) or not b:
            raise InvalidParameterError(
                f"by must be column names (strings); got {b!r} in {items!r}"
            )
    return items


def resolve(logs: Logs, by: str | Sequence[str] | None) -> Grouping:
    """Check ``by`` against the log and return the columns to group by.

    A name is a searches column (canonical or extra) or a time bucket ``hour``/``day``/
    ``week`` of the search ts; a searches column of that name wins over the bucket.
    Raises UnknownNameError listing what is available, SchemaError for a time bucket on a
    log without ts, and warns when grouping by a canonical column the log does not have
    (its values are all NULL: one group).
    """
    names = _as_list(by)
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"by lists a column twice: {names!r}")
    columns = searches_columns(logs)
    sql: list[str] = []
    for name in names:
        if name in columns:
            sql.append(name)
            if not logs.has("searches", name) and name not in logs.extra_columns("searches"):
                warnings.warn(
                    f"grouping by {name!r}, which the log does not have: every search is "
                    f"in one group with {name} = NULL",
                    UserWarning, stacklevel=3,
                )
        elif name in TIME_BUCKETS:
            if not logs.has("searches", "ts"):
                raise SchemaError(
                    f"cannot group by {name!r}: it is a time bucket of searches.ts and the "
                    f"log {logs.source} has no ts column; group by a searches column "
                    f"instead ({', '.join(columns)})"
                )
            sql.append(TIME_BUCKETS[name])
        else:
            raise UnknownNameError(
                f"cannot group by {name!r}: not a column of searches and not a time bucket. "
                f"Available: searches columns {', '.join(columns)}; time buckets "
                f"{', '.join(TIME_BUCKETS)}"
            )
    return Grouping(names=tuple(names), sql=tuple(sql))
