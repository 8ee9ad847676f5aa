"""Audit of the per-query online deltas behind the within-experiment agreement
(sql/agreement/per_query_ab_ctr.sql, sql/agreement/per_query_interleaving.sql).

Every row and every column is recomputed here with pandas straight from the Parquet files,
by the definitions in the SQL headers (an implementation that shares nothing with the SQL):

- A/B: per query value, searches of each arm and those with at least one click row;
  ctr_delta = clicked_t / searches_t − clicked_c / searches_c, undefined when an arm has no
  search of the query.
- interleaving: a page is a search of the experiment with results placed by a team; the credit
  of a team is the number of distinct ranks it placed that were clicked; a page is won by the
  team with more credit, tied when both have the same credit > 0;
  Δ_q = (wins_t + ties / 2) / (wins_t + wins_o + ties) − 0.5, undefined without a decided page.

Inputs: the bundled sample logs (every experiment) and two small simulated studies (seeds 3 and
17). Then the edge cases: searches without a qid, queries searched in one arm only, queries
without a decided page, and an experiment whose pages name a single team — each left out of
the agreement and counted, never paired silently.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.agreement.per_query import (
    per_query_ab_ctr,
    per_query_interleaving,
    within_experiment,
)
from onlineeval.interleaving.outcomes import page_outcomes
from onlineeval.study import Experiment

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
AB_COLUMNS = ["qid", "searches_control", "clicked_control", "searches_treatment",
              "clicked_treatment", "ctr_delta"]
IL_COLUMNS = ["qid", "pages", "wins_t", "wins_o", "ties", "delta_q"]


def _per_query_ab(exp: Experiment, logs):
    return per_query_ab_ctr(logs, exp.ab_experiment, exp.control_variant,
                            exp.treatment_variant)


def _per_query_interleaving(exp: Experiment, logs):
    return per_query_interleaving(logs, exp.interleaving_experiment, exp.treatment_team,
                                  exp.control_team)


def _read(logdir: Path) -> dict[str, pd.DataFrame]:
    tables = {t: pd.read_parquet(logdir / f"{t}.parquet")
              for t in ("searches", "results", "clicks")}
    # text as Python objects: pandas' isin on Arrow-backed strings converts every value it
    # looks for to an Arrow scalar one by one (seconds per call at this size)
    for df in tables.values():
        for col in df.columns:
            if pd.api.types.is_string_dtype(df[col]):
                df[col] = df[col].astype(object)
    return tables


def _ab_by_hand(tables: dict[str, pd.DataFrame], experiment: str, control: str,
                treatment: str) -> pd.DataFrame:
    s = tables["searches"]
    s = s[(s["experiment"] == experiment) & s["variant"].isin([control, treatment])]
    clicked = s["search_id"].isin(tables["clicks"]["search_id"].unique())
    s = s.assign(clicked=clicked.to_numpy(dtype=int), arm=np.where(
        s["variant"] == control, "control", "treatment"))
    counts = s.pivot_table(index="qid", columns="arm", values="clicked",
                           aggfunc=["size", "sum"], fill_value=0)
    out = pd.DataFrame({"qid": counts.index.astype(str)})
    for arm in ("control", "treatment"):
        out[f"searches_{arm}"] = counts["size"][arm].to_numpy() if arm in \
            counts["size"].columns else 0
        out[f"clicked_{arm}"] = counts["sum"][arm].to_numpy() if arm in \
            counts["sum"].columns else 0
    both = (out["searches_control"] > 0) & (out["searches_treatment"] > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = (out["clicked_treatment"] / out["searches_treatment"]
                 - out["clicked_control"] / out["searches_control"])
    out["ctr_delta"] = delta.where(both)
    return out[AB_COLUMNS]


def _il_by_hand(tables: dict[str, pd.DataFrame], experiment: str, team: str,
                other: str) -> pd.DataFrame:
    s = tables["searches"]
    s = s[s["experiment"] == experiment]
    r = tables["results"]
    r = r[r["search_id"].isin(s["search_id"]) & r["team"].notna()]
    pages = s[s["search_id"].isin(r["search_id"])]
    hits = tables["clicks"][["search_id", "rank"]].drop_duplicates().merge(
        r[["search_id", "rank", "team"]], on=["search_id", "rank"])
    credit = hits.groupby(["search_id", "team"]).size().unstack(fill_value=0)
    credit = credit.reindex(index=pages["search_id"], columns=[team, other], fill_value=0)
    ct, co = credit[team].to_numpy(), credit[other].to_numpy()
    per_page = pd.DataFrame({"qid": pages["qid"].to_numpy(), "won": ct > co, "lost": co > ct,
                             "tie": (ct == co) & (ct > 0)})
    rows = []
    for qid, g in per_page.groupby("qid", sort=True):
        w, lo, ti = int(g["won"].sum()), int(g["lost"].sum()), int(g["tie"].sum())
        decided = w + lo + ti
        rows.append({"qid": qid, "pages": len(g), "wins_t": w, "wins_o": lo, "ties": ti,
                     "delta_q": (w + ti / 2) / decided - 0.5 if decided else math.nan})
    return pd.DataFrame(rows, columns=IL_COLUMNS)


def _same(got: pd.DataFrame, want: pd.DataFrame, columns: list[str]) -> None:
    got = got[columns].reset_index(drop=True)
    assert got["qid"].astype(str).tolist() == want["qid"].astype(str).tolist()
    for col in columns[1:]:
        np.testing.assert_allclose(got[col].to_numpy(dtype=float),
                                   want[col].to_numpy(dtype=float), rtol=1e-12, atol=0,
                                   err_msg=col)


def _check_study(ab_dir: Path, il_dir: Path, pairs: list[tuple[str, str, str]]) -> int:
    """Every experiment (name, control team, treatment team) of one study; rows compared."""
    ab_logs, il_logs = onlineeval.load_logs(ab_dir), onlineeval.load_logs(il_dir)
    ab_tables, il_tables = _read(ab_dir), _read(il_dir)
    compared = 0
    for name, control_team, treatment_team in pairs:
        exp = Experiment(name, Path("q"), Path("c.run"), Path("t.run"), ab_experiment=name,
                         interleaving_experiment=name, control_team=control_team,
                         treatment_team=treatment_team)
        want = _ab_by_hand(ab_tables, name, "control", "treatment")
        _same(_per_query_ab(exp, ab_logs).table, want, AB_COLUMNS)
        got = _per_query_interleaving(exp, il_logs).table
        assert set(got["experiment"]) == {name} and set(got["team"]) == {treatment_team}
        assert set(got["other_team"]) == {control_team}
        want = _il_by_hand(il_tables, name, treatment_team, control_team)
        _same(got, want, IL_COLUMNS)
        compared += len(want)
    return compared


def test_per_query_sql_equals_pandas_on_the_sample_logs():
    import tomllib

    study = tomllib.loads((SAMPLE / "study.toml").read_text())
    pairs = []
    for e in study["experiment"]:
        control, treatment = Path(e["control_run"]).stem, Path(e["treatment_run"]).stem
        pairs.append((e["name"], e.get("control_team", control),
                      e.get("treatment_team", treatment)))
    assert len(pairs) == 10
    # 100 topics per experiment, each searched in both arms and interleaved
    assert _check_study(SAMPLE / "ab", SAMPLE / "interleaving", pairs) == 10 * 100


@pytest.mark.parametrize("seed", [3, 17])
def test_per_query_sql_equals_pandas_on_simulated_studies(tmp_path, seed):
    from onlineeval.simulate import Pair, simulate
    from onlineeval.simulate.interleaving import simulate_interleaving_study

    simulate(tmp_path, seed, users_per_experiment=120, n_queries=12,
             rankers={"good": 0.3, "bad": 1.5}, pairs=[Pair("bad", "good"), Pair("good", "good")])
    simulate_interleaving_study(tmp_path, tmp_path / "il", users_per_experiment=80)
    pairs = [("bad_vs_good", "bad", "good"),
             ("good_vs_good", "good/control", "good/treatment")]
    assert _check_study(tmp_path / "ab", tmp_path / "il", pairs) > 0


# --- edge cases --------------------------------------------------------------------------

TS = pd.Timestamp("2026-01-01 10:00")


def _ab_edge_logs():
    # q1: both arms (defined); q2: control only; q3: treatment only; two searches without qid
    searches = pd.DataFrame({
        "search_id": list("abcdefg"), "user_id": [f"u{i}" for i in range(7)],
        "ts": [TS + pd.Timedelta(minutes=i) for i in range(7)],
        "query": ["x", "x", "y", "y", "z", "w", "v"],
        "qid": ["q1", "q1", "q2", "q2", None, None, "q3"],
        "experiment": "e",
        "variant": ["control", "treatment", "control", "control", "treatment", "control",
                    "treatment"],
    })
    clicks = pd.DataFrame({"search_id": ["b", "e", "f"], "rank": [1, 1, 1], "ts": [TS] * 3})
    return onlineeval.load_logs(searches=searches, clicks=clicks)


def test_searches_without_qid_are_not_a_query():
    """Before the audit the searches without a qid formed one pseudo-query (qid NULL) with a
    CTR delta of its own (here 1/1 − 1/1 = 0), paired as 'a query searched but not judged'."""
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), ab_experiment="e")
    df = _per_query_ab(exp, _ab_edge_logs()).table
    assert df["qid"].tolist()[:3] == ["q1", "q2", "q3"]
    tail = df.iloc[3]
    assert pd.isna(tail["qid"]) and (tail["searches_control"], tail["searches_treatment"]) == (1, 1)
    assert math.isnan(tail["ctr_delta"])
    assert df.set_index("qid").loc["q1", "ctr_delta"] == pytest.approx(1.0)
    assert df["ctr_delta"].notna().sum() == 1


def test_left_out_queries_are_counted():
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), ab_experiment="e")
    online = _per_query_ab(exp, _ab_edge_logs())
    offline = pd.Series({"q1": 0.2, "q2": 0.1, "q3": -0.1, "q9": 0.3})
    w = within_experiment(offline, online)
    assert (w["without_query_unit"], w["online_undefined_reason"]) == ("searches",
                                                                       "in one arm only")
    assert w["n"] == 1 and w["n_agree"] == 1
    assert w["n_online_undefined"] == 2          # q2, q3
    assert w["n_undefined_judged"] == 2          # both judged: part of n_offline_only
    assert w["n_without_query"] == 2             # searches e and f
    assert w["n_offline_only"] == 3              # q2, q3 (undefined) and q9 (not searched)
    assert w["n_online_only"] == 0               # the no-qid searches are not a query


def _il_edge_logs():
    # experiment e: teams T and C. q1: T wins; q2: no click (undefined); one page without qid
    # (C wins). Experiment solo: a single team, nothing to compare.
    ids = ["s1", "s2", "s3", "s4"]
    searches = pd.DataFrame({
        "search_id": ids, "user_id": ["u1", "u2", "u3", "u4"],
        "ts": [TS + pd.Timedelta(minutes=i) for i in range(4)],
        "query": ["a", "b", "c", "d"], "qid": ["q1", "q2", None, "q1"],
        "experiment": ["e", "e", "e", "solo"], "variant": "interleaved",
    })
    results = pd.DataFrame({
        "search_id": [s for s in ids for _ in range(2)], "rank": [1, 2] * 4,
        "doc_id": [f"{s}-d{r}" for s in ids for r in (1, 2)],
        "team": ["T", "C"] * 3 + ["T", "T"],
    })
    clicks = pd.DataFrame({"search_id": ["s1", "s3", "s4"], "rank": [1, 2, 1],
                           "ts": [TS + pd.Timedelta(minutes=i, seconds=5) for i in (0, 2, 3)]})
    return onlineeval.load_logs(searches=searches, results=results, clicks=clicks)


def test_interleaving_pages_without_qid_and_undecided_queries_are_counted():
    logs = _il_edge_logs()
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), interleaving_experiment="e",
                     control_team="C", treatment_team="T")
    with warnings.catch_warnings():
        # the page outcomes of every experiment, as a readout of the whole log leaves them:
        # the per-query Δ_q of 'e' must not depend on them (the single-team experiment
        # 'solo' is left out with a warning, checked below)
        warnings.simplefilter("ignore")
        page_outcomes(logs, None)
    online = _per_query_interleaving(exp, logs)
    df = online.table
    # the single-team experiment has no pair, so no row; the page without qid is one NULL row
    assert set(df["experiment"]) == {"e"}
    assert df["qid"].tolist()[:2] == ["q1", "q2"] and pd.isna(df["qid"].iloc[2])
    assert df["pages"].tolist() == [1, 1, 1] and df["wins_o"].tolist() == [0, 0, 1]
    assert df["delta_q"].iloc[0] == pytest.approx(0.5)
    assert math.isnan(df["delta_q"].iloc[1]) and math.isnan(df["delta_q"].iloc[2])
    w = within_experiment(pd.Series({"q1": 0.1, "q2": 0.1}), online)
    assert w["without_query_unit"] == "pages"
    assert (w["n"], w["n_online_undefined"], w["n_without_query"]) == (1, 1, 1)
    assert w["n_undefined_judged"] == 1
    assert (w["n_offline_only"], w["n_online_only"]) == (1, 0)


def test_single_team_experiment_is_left_out_with_a_warning():
    logs = _il_edge_logs()
    with pytest.warns(UserWarning, match="single team|one team"):
        page_outcomes(logs, None)
