"""Golden cases for the SQL of sql/: one folder per query family, one per case.

``tests/sql/<family>/<case>/`` holds a tiny log (``searches.csv``, ``clicks.csv``, maybe
``results.csv``), ``case.toml`` (which query to run, through which package function, with
which arguments), ``expected.csv`` (the output, worked out by hand) and ``README.md`` (how
each expected value follows from the definitions). Expected cells may be fractions
(``1/3``); an empty cell is NULL. Numbers must match to 1e-12 (relative), text exactly.

``case.toml`` keys: ``run`` (a name of :data:`RUN`), ``args`` (its keyword arguments),
``sort`` (columns to sort both tables by) or ``ordered = true`` (the output's own order is
part of the expectation).
"""

from __future__ import annotations

import math
import tomllib
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import onlineeval
from onlineeval.queries import quote_ident

HERE = Path(__file__).resolve().parent
CASES = sorted(p.parent for p in HERE.glob("*/*/case.toml"))


def _view(logs: Any, name: str) -> pd.DataFrame:
    return logs.con.sql(f"SELECT * FROM {quote_ident(name)}").df()


def _search_facts(logs: Any, **kw: Any) -> pd.DataFrame:
    from onlineeval.online import search_facts

    return _view(logs, search_facts(logs, **kw))


def _load_report(logs: Any) -> pd.DataFrame:
    rows = []
    for table in ("searches", "results", "clicks"):
        rows.append((table, "read", logs.report.rows_read.get(table, 0)))
        rows += [(t, reason, n) for (t, reason), n in logs.report.excluded.items() if t == table]
        rows.append((table, "kept", logs.report.rows_kept(table)))
    return pd.DataFrame(rows, columns=["table", "reason", "rows"])


def _page_outcomes(logs: Any, experiment: str | None = None) -> pd.DataFrame:
    from onlineeval.interleaving.outcomes import PAGE_TABLE, page_outcomes

    page_outcomes(logs, experiment)
    return _view(logs, PAGE_TABLE)


def _il_per_query(logs: Any, team: str, other: str, query: str = "query") -> pd.DataFrame:
    from onlineeval.interleaving.outcomes import page_outcomes, per_query

    page_outcomes(logs)
    return per_query(logs, team, other, query)


def _il_user_stats(logs: Any) -> pd.DataFrame:
    from onlineeval.interleaving.outcomes import page_outcomes, user_stats

    page_outcomes(logs)
    return user_stats(logs)


def _ab_ctr_per_query(logs: Any, **kw: Any) -> pd.DataFrame:
    from onlineeval.online.per_query import ab_ctr_per_query

    return ab_ctr_per_query(logs, **kw)


def _unit_rows(logs: Any, **kw: Any) -> pd.DataFrame:
    from onlineeval.abtest.units import unit_rows

    return unit_rows(logs, **kw)[0]


def _counterfactual_sums(logs: Any, sql: str, candidate: dict[str, list[str]], k: int,
                         propensities: dict[str, float], max_rank: int,
                         clip: float | None = None) -> pd.DataFrame:
    from onlineeval.counterfactual import sums
    from onlineeval.counterfactual.evaluation import candidate_table, estimate_inputs
    from onlineeval.counterfactual.propensities import read_propensities

    run = pd.DataFrame([(q, d, float(len(docs) - i)) for q, docs in candidate.items()
                        for i, d in enumerate(docs)], columns=["qid", "docno", "score"])
    p = read_propensities({int(r): v for r, v in propensities.items()})
    cand, table = estimate_inputs("ips", candidate_table(run, k), p, None, k=k,
                                  max_rank=max_rank)
    return sums.per_unit(logs.con, f"counterfactual/{sql}", candidate=cand, propensity=table,
                         max_rank=max_rank, clip=clip)


#: what a case may run: name -> function(logs, **args) returning the output table
RUN = {
    "search_facts": _search_facts,
    "online_metrics": onlineeval.online_metrics,
    "top_queries": onlineeval.top_queries,
    "queries_over_time": onlineeval.queries_over_time,
    "position_ctr": onlineeval.position_ctr,
    "load_report": _load_report,
    "view": lambda logs, table: _view(logs, table),
    "page_outcomes": _page_outcomes,
    "interleaving_per_query": _il_per_query,
    "interleaving_user_stats": _il_user_stats,
    "ab_ctr_per_query": _ab_ctr_per_query,
    "unit_rows": _unit_rows,
    "counterfactual_sums": _counterfactual_sums,
}


def _same(got: Any, want: str) -> bool:
    if want == "":
        return got is None or (not isinstance(got, str) and pd.isna(got))
    if got is None or (not isinstance(got, str) and pd.isna(got)):
        return False
    if isinstance(got, pd.Timestamp):
        return str(got) == want
    if isinstance(got, str):
        return got == want
    try:
        expected = float(Fraction(want))
    except ValueError:
        return str(got) == want
    return math.isclose(float(got), expected, rel_tol=1e-12, abs_tol=1e-15)


def _key(value: Any) -> tuple[int, str]:
    missing = value is None or (not isinstance(value, str) and pd.isna(value))
    return (1, "") if missing else (0, str(value))


def _sorted(rows: list[list[Any]], columns: list[str], by: list[str]) -> list[list[Any]]:
    at = [columns.index(c) for c in by]
    return sorted(rows, key=lambda r: [_key(r[i]) for i in at])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_golden_case(case: Path) -> None:
    spec = tomllib.loads((case / "case.toml").read_text(encoding="utf-8"))
    want = pd.read_csv(case / "expected.csv", dtype=str, keep_default_na=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exclusions and pooled experiments are warned
        logs = onlineeval.load_logs(case)
        got = RUN[spec["run"]](logs, **spec.get("args", {}))
    columns = list(want.columns)
    missing = [c for c in columns if c not in got.columns]
    assert not missing, f"output lacks {missing}; it has {list(got.columns)}"
    got_rows = got[columns].astype(object).values.tolist()
    want_rows = want.values.tolist()
    if not spec.get("ordered"):
        got_rows = _sorted(got_rows, columns, spec["sort"])
        want_rows = _sorted(want_rows, columns, spec["sort"])
    assert len(got_rows) == len(want_rows), (got_rows, want_rows)
    for g, w in zip(got_rows, want_rows, strict=True):
        bad = [f"{c}: got {gv!r}, want {wv!r}" for c, gv, wv in zip(columns, g, w, strict=True)
               if not _same(gv, wv)]
        assert not bad, f"row {w}: " + "; ".join(bad)


def test_every_case_is_complete_and_every_family_is_a_sql_family() -> None:
    from onlineeval.queries import sql_dir

    families = {p.name for p in sql_dir().iterdir() if p.is_dir()}
    for case in CASES:
        assert case.parent.name in families, case
        for name in ("case.toml", "expected.csv", "README.md", "searches.csv", "clicks.csv"):
            assert (case / name).is_file(), (case, name)
        assert tomllib.loads((case / "case.toml").read_text())["run"] in RUN
    assert {c.parent.name for c in CASES} >= {"online", "logs", "interleaving", "agreement",
                                             "ab"}


@pytest.mark.parametrize("cell, value, same", [
    ("1/3", 1 / 3, True), ("1/3", 0.3333, False), ("", float("nan"), True), ("", 0, False),
    ("0", float("nan"), False), ("a", "a", True), ("2", 2, True),
    ("2024-01-01 10:00:05", pd.Timestamp("2024-01-01 10:00:05"), True),
])
def test_the_comparison_can_fail(cell, value, same) -> None:
    assert _same(value, cell) is same
