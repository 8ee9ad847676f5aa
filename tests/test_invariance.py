"""Common checks every registered metric and measure passes (in the spirit of scikit-learn's
estimator checks), enumerated from the registries so that a new one is covered without an
edit here — except its value range, which an offline measure does not declare (see
``OFFLINE_RANGES``).

Online metrics (``onlineeval.online.definitions.METRICS``) and A/B metrics
(``onlineeval.abtest.metrics.METRICS``), on seeded random logs with hostile corners (zero-result
pages, unknown ``n_results``, clicks without dwell or time, clicks before their search,
repeated clicks, clicks not on the page, searches without a query; events of clicked and
unclicked docs, naming known and unknown searches, before every search, of unknown users,
without a value, refunds, at the window's edge):

* every value lies in the metric's declared ``bounds`` or is null, and is exactly the declared
  ``numerator / denominator`` of the sums ``metric_sums`` returns — null where that
  denominator is 0 or the log lacks a required column;
* a log without a single click (and a log of one search) gives values in range or null, never
  an error or an infinity;
* shuffling the rows of every table changes no value;
* the metric has its section in docs/reference/online-metrics.md (A/B metrics: in
  docs/ab-tests.md).

Offline measures (``onlineeval.offline.measures.MEASURES``), on seeded random collections with
unjudged, negatively graded and never-retrieved documents, ties in score, queries without a
relevant document and judged queries the run does not answer:

* every per-query value lies in the measure's range (``OFFLINE_RANGES``);
* a query without a relevant document and one scored under ``complete=True`` stay in range;
  an empty run is a one-line user error;
* shuffling the rows of the run and the qrels changes no value (trec_eval ranks by score, then
  docno, never by file order);
* the measure has its section in docs/reference/offline-measures.md when that generated page
  exists.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.abtest.metrics import METRICS as AB_METRICS
from onlineeval.errors import OnlineEvalError
from onlineeval.offline.measures import MEASURES
from onlineeval.online.definitions import METRICS, missing_requirements
from onlineeval.online.metrics import metric_sums

ROOT = Path(__file__).resolve().parents[1]
ONLINE_PAGE = ROOT / "docs" / "reference" / "online-metrics.md"
OFFLINE_PAGE = ROOT / "docs" / "reference" / "offline-measures.md"
AB_PAGE = ROOT / "docs" / "ab-tests.md"

ONLINE = list(METRICS)
AB = list(AB_METRICS)
OFFLINE = list(MEASURES)
SEEDS = (0, 1, 2)


# --------------------------------------------------------------------------- random logs

def random_log(seed: int, users: int = 40) -> dict[str, pd.DataFrame]:
    """Searches, results and clicks of a few sessions per user, with hostile corners."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-03-01 08:00:00")
    searches, results, clicks, events = [], [], [], []
    for u in range(users):
        t = start + pd.Timedelta(minutes=int(rng.integers(0, 600)))
        variant = "control" if rng.random() < 0.5 else "treatment"
        for _ in range(int(rng.integers(1, 7))):
            # gaps around the 30-minute session boundary, some exactly 30 minutes
            t += pd.Timedelta(minutes=float(rng.choice([1, 5, 29.5, 30, 31, 120])))
            sid = f"s{len(searches)}"
            n = int(rng.choice([0, 3, 5, 10]))
            query = None if rng.random() < 0.1 else f"q{int(rng.integers(0, 6))}"
            known_n = n if rng.random() < 0.8 else None
            searches.append((sid, f"u{u}", t, query, "e1", variant, known_n))
            docs = rng.choice(30, size=n, replace=False)
            results += [(sid, r + 1, f"d{d}") for r, d in enumerate(docs)]
            for _ in range(int(rng.choice([0, 0, 1, 1, 2, 3]))):
                rank = int(rng.integers(1, max(n, 1) + 2))   # sometimes off the page
                when = t + pd.Timedelta(seconds=float(rng.normal(20, 30)))  # some before
                ts = None if rng.random() < 0.1 else when
                dwell = None if rng.random() < 0.3 else float(rng.exponential(40_000))
                clicks.append((sid, rank, ts, dwell))
                if rng.random() < 0.1:
                    clicks.append((sid, rank, ts, dwell))          # a repeated click
                if rng.random() < 0.4 and 1 <= rank <= n:         # bought what was clicked
                    later = pd.Timedelta(hours=float(rng.choice([0.1, 3, 24, 30])))
                    events.append((f"u{u}", (ts or t) + later, "purchase",
                                   float(rng.choice([20.0, 5.5, -3.0])), None,
                                   f"d{docs[rank - 1]}"))
            kind = rng.random()
            if kind < 0.15:                                          # names its search
                events.append((None, t, "purchase", 10.0, sid, None))
            elif kind < 0.3:                                         # no doc, no value
                events.append((f"u{u}", t + pd.Timedelta(minutes=float(rng.choice([1, 90]))),
                               "add_to_cart", None, None, None))
        if rng.random() < 0.2:                                       # before every search
            events.append((f"u{u}", start, "purchase", 1.0, None, None))
    events += [("nobody", start, "purchase", 2.0, None, None),       # unknown user
               (None, start, "purchase", 2.0, "no_such_search", None)]
    return {
        "searches": pd.DataFrame(searches, columns=["search_id", "user_id", "ts", "query",
                                                    "experiment", "variant", "n_results"])
        .astype({"n_results": "Int64"}),
        "results": pd.DataFrame(results, columns=["search_id", "rank", "doc_id"]),
        "clicks": pd.DataFrame(clicks, columns=["search_id", "rank", "ts", "dwell_ms"]),
        "events": pd.DataFrame(events, columns=["user_id", "ts", "type", "value", "search_id",
                                                "doc_id"]),
    }


def _load(tables: dict[str, pd.DataFrame]):
    with warnings.catch_warnings():
        # excluded rows (clicks off the page) are the point of these logs
        warnings.simplefilter("ignore")
        return onlineeval.load_logs(**tables)


def _shuffled(tables: dict[str, pd.DataFrame], seed: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed + 1000)
    return {name: df.iloc[rng.permutation(len(df))].reset_index(drop=True)
            for name, df in tables.items()}


def _online(logs, by: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = onlineeval.online_metrics(logs, by=by)
        sums = metric_sums(logs, by=by)
    keys = list(by)
    if keys:
        values = values.sort_values(keys).reset_index(drop=True)
        sums = sums.sort_values(keys).reset_index(drop=True)
    return values, sums


@pytest.fixture(scope="module")
def online_runs() -> dict:
    """Per seed: metrics and sums by variant on the log and on its shuffled copy, and the log
    without clicks; plus a log of one search."""
    runs = {}
    for seed in SEEDS:
        tables = random_log(seed)
        logs = _load(tables)
        no_clicks = {**tables, "clicks": tables["clicks"].iloc[:0]}
        runs[seed] = {
            "logs": logs,
            "by_variant": _online(logs, ("variant",)),
            "whole": _online(logs, ()),
            "shuffled": _online(_load(_shuffled(tables, seed)), ("variant",)),
            "no_clicks_logs": _load(no_clicks),
        }
        runs[seed]["no_clicks"] = _online(runs[seed]["no_clicks_logs"], ("variant",))
    one = random_log(5, users=1)
    one = {"searches": one["searches"].iloc[:1],
           "clicks": one["clicks"].iloc[:0][["search_id", "rank"]],
           "events": one["events"].iloc[:0]}
    runs["one"] = {"logs": _load(one)}
    runs["one"]["whole"] = _online(runs["one"]["logs"], ())
    return runs


def _in_bounds(values: pd.Series, bounds: tuple[float | None, float | None]) -> list[float]:
    low, high = bounds
    bad = []
    for v in values:
        if pd.isna(v):
            continue
        v = float(v)
        if not math.isfinite(v) or (low is not None and v < low - 1e-12) or \
                (high is not None and v > high + 1e-12):
            bad.append(v)
    return bad


def _stat(sums: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(sums[name], errors="coerce").astype("float64")


def _check_ratio(name: str, logs, values: pd.DataFrame, sums: pd.DataFrame) -> None:
    """The value is the declared numerator / denominator of the sums; null where the
    denominator is 0 or a required column is missing."""
    m = METRICS.get(name)
    got = pd.to_numeric(values[name], errors="coerce").astype("float64")
    if missing_requirements(logs, m):
        assert got.isna().all(), (name, "a metric whose columns are missing must be null")
        return
    num = _stat(sums, m.numerator)
    if m.denominator is None:
        np.testing.assert_allclose(got, num, rtol=1e-12, err_msg=name)
        return
    den = _stat(sums, m.denominator)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (num / den).where(den > 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True, err_msg=name)
    assert (got.isna() == want.isna()).all(), name


# --------------------------------------------------------------------------- online metrics

def test_the_random_logs_exercise_the_corners(online_runs) -> None:
    # else the checks below could pass on logs without the cases they are about
    logs = online_runs[0]["logs"]
    excluded = dict(logs.report.excluded)
    assert excluded.get(("clicks", "not_on_page"), 0) > 0
    sums = online_runs[0]["whole"][1].iloc[0]
    assert 0 < sums["zero_result"] < sums["known_n_results"]
    assert 0 < sums["has_click"] < sums["searches"] and 0 < sums["reformulated"]
    assert 0 < sums["session_success"] < sums["session_first"]
    assert 0 < sums["converted"] < sums["searches"]
    assert 0 < sums["session_converted"] < sums["session_first"]
    assert len(ONLINE) >= 13 and len(OFFLINE) >= 40 and len(AB) >= len(ONLINE) - 3


@pytest.mark.parametrize("name", ONLINE)
def test_online_metric_stays_in_its_declared_range(name, online_runs) -> None:
    m = METRICS.get(name)
    for seed in SEEDS:
        for key in ("by_variant", "whole", "no_clicks"):
            values = online_runs[seed][key][0]
            assert not _in_bounds(values[name], m.bounds), (name, seed, key)
            # not vacuous: the random logs give every metric a value
            if key != "no_clicks":
                assert values[name].notna().any(), (name, seed, key)


@pytest.mark.parametrize("name", ONLINE)
def test_online_metric_is_its_declared_ratio_of_sums(name, online_runs) -> None:
    for seed in SEEDS:
        run = online_runs[seed]
        _check_ratio(name, run["logs"], *run["by_variant"])
        _check_ratio(name, run["logs"], *run["whole"])


@pytest.mark.parametrize("name", ONLINE)
def test_online_metric_on_empty_input(name, online_runs) -> None:
    """No clicks at all, and a log of a single search without clicks: a value in range or
    null (where its denominator is 0 or a column is missing), never an error."""
    m = METRICS.get(name)
    for seed in SEEDS:
        run = online_runs[seed]
        values, sums = run["no_clicks"]
        _check_ratio(name, run["no_clicks_logs"], values, sums)
        assert (_stat(sums, "has_click") == 0).all()
    values, sums = online_runs["one"]["whole"]
    assert len(values) == 1 and not _in_bounds(values[name], m.bounds)
    _check_ratio(name, online_runs["one"]["logs"], values, sums)


@pytest.mark.parametrize("name", ONLINE)
def test_online_metric_does_not_depend_on_row_order(name, online_runs) -> None:
    for seed in SEEDS:
        base, shuffled = online_runs[seed]["by_variant"][0], online_runs[seed]["shuffled"][0]
        assert base["variant"].tolist() == shuffled["variant"].tolist()
        np.testing.assert_allclose(
            pd.to_numeric(shuffled[name], errors="coerce").astype("float64"),
            pd.to_numeric(base[name], errors="coerce").astype("float64"),
            rtol=1e-12, equal_nan=True, err_msg=f"{name}, seed {seed}")


@pytest.mark.parametrize("name", ONLINE)
def test_online_metric_is_in_the_generated_reference(name) -> None:
    page = ONLINE_PAGE.read_text(encoding="utf-8")
    m = METRICS.get(name)
    assert f"\n## `{name}`\n" in page and m.definition in page


def test_empty_log_is_a_user_error() -> None:
    tables = random_log(0)
    with pytest.raises(OnlineEvalError, match="no rows"):
        onlineeval.load_logs(searches=tables["searches"].iloc[:0], clicks=tables["clicks"])


# --------------------------------------------------------------------------- A/B metrics

@pytest.fixture(scope="module")
def ab_runs() -> dict:
    out = {}
    for seed in SEEDS[:2]:
        tables = random_log(seed, users=80)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = onlineeval.abtest(_load(tables), metrics=AB, min_units=2)
            shuffled = onlineeval.abtest(_load(_shuffled(tables, seed)), metrics=AB,
                                         min_units=2)
        out[seed] = (plain.set_index("metric"), shuffled.set_index("metric"))
    return out


@pytest.mark.parametrize("name", AB)
def test_ab_metric_arm_values_stay_in_the_declared_range(name, ab_runs) -> None:
    m = AB_METRICS.get(name)
    for seed, (plain, _) in ab_runs.items():
        row = plain.loc[name]
        values = pd.Series([row["control_value"], row["treatment_value"]])
        assert values.notna().all(), (name, seed)
        assert not _in_bounds(values, m.bounds), (name, seed)


@pytest.mark.parametrize("name", AB)
def test_ab_metric_does_not_depend_on_row_order(name, ab_runs) -> None:
    cols = ["control_value", "treatment_value", "estimate", "ci_low", "ci_high", "p_value",
            "units_control", "units_treatment"]
    for seed, (plain, shuffled) in ab_runs.items():
        np.testing.assert_allclose(shuffled.loc[name, cols].to_numpy(dtype=float),
                                   plain.loc[name, cols].to_numpy(dtype=float), rtol=1e-9,
                                   equal_nan=True, err_msg=f"{name}, seed {seed}")


@pytest.mark.parametrize("name", AB)
def test_ab_metric_is_documented(name) -> None:
    assert f"`{name}`" in AB_PAGE.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- offline measures

LOG_FLOOR = math.log(1e-5)   # trec_eval's per-query gm value is log(max(v, 0.00001))

#: the range of every per-query value of each measure; None: no per-query numeric value. A
#: measure registered without an entry here fails test_every_measure_declares_a_range.
OFFLINE_RANGES: dict[str, tuple[float, float] | None] = {
    **{name: (0.0, 1.0) for name in (
        "11pt_avg", "Best", "ERR", "F", "G", "P", "RR_cut", "R_cap", "Rndcg", "Rprec",
        "Rprec_mult", "binG", "bpref", "fallout", "infAP", "iprec_at_recall", "judged", "map",
        "map_cut", "nDCG_exp", "ndcg", "ndcg_cut", "ndcg_rel", "rbp", "rbp_resid", "recall",
        "recip_rank", "relative_P", "set_F", "set_P", "set_map", "set_recall",
        "set_relative_P", "success", "unj")},
    **{name: (0.0, math.inf) for name in (
        "CG", "DCG", "DCG_exp", "num_nonrel_judged_ret", "num_rel", "num_rel_ret", "num_ret")},
    "gm_map": (LOG_FLOOR, 0.0),
    "gm_bpref": (LOG_FLOOR, 0.0),
    "utility": (-math.inf, math.inf),
    # a count over queries, the run's id and a string of grades: no per-query number
    "num_q": None, "runid": None, "relstring": None,
}
#: undefined values trec_eval prints as -nan (Rndcg when no ideal gain is positive)
MAY_BE_NAN = {"Rndcg"}


def _spelling(name: str) -> str:
    """A name ``evaluate`` accepts for the measure: measures that need a cutoff get @5."""
    m = MEASURES.get(name)
    if getattr(m, "cutoff", None) == "required":
        return f"{getattr(m, 'stem', '') or m.name}@5"
    return name


def random_collection(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """qrels with grades -1..4 (negative: in the pool, unjudged), a query without a relevant
    document and one the run does not answer; a run with tied scores and unjudged documents."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(25):
        qid = f"q{q:02d}"
        docs = [f"d{j}" for j in range(25)]
        judged = rng.choice(docs, size=12, replace=False)
        grades = rng.choice([-1, 0, 0, 0, 1, 2, 3, 4], size=len(judged))
        if q == 3:
            grades = np.minimum(grades, 0)      # nothing relevant
        qrels += [(qid, d, int(g)) for d, g in zip(judged, grades, strict=True)]
        if q == 7:
            continue                            # judged, not answered
        retrieved = rng.choice(docs, size=int(rng.integers(1, 20)), replace=False)
        run += [(qid, d, float(rng.integers(0, 6)) / 2) for d in retrieved]
    run.append(("q99", "d1", 1.0))              # answered, never judged
    return (pd.DataFrame(qrels, columns=["qid", "docno", "rel"]),
            pd.DataFrame(run, columns=["qid", "docno", "score"]))


def _evaluate(qrels, run, name: str, **kwargs) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the judged query the run does not answer
        out = onlineeval.evaluate(qrels, run, [_spelling(name)], per_query=True, **kwargs)
    return out.sort_values("qid").reset_index(drop=True)


def _check_range(name: str, values: pd.DataFrame) -> None:
    low, high = OFFLINE_RANGES[name]
    numbers = values.drop(columns="qid").apply(pd.to_numeric, errors="coerce")
    assert len(numbers.columns) > 0, name
    flat = numbers.to_numpy(dtype=float).ravel()
    nan = np.isnan(flat)
    assert name in MAY_BE_NAN or not nan.any(), (name, "NaN per-query value")
    ok = flat[~nan]
    assert ((ok >= low - 1e-12) & (ok <= high + 1e-12)).all(), (name, ok.min(), ok.max())


def test_every_measure_declares_a_range() -> None:
    assert set(OFFLINE) <= set(OFFLINE_RANGES), \
        f"add the per-query range of {sorted(set(OFFLINE) - set(OFFLINE_RANGES))} here"


NUMERIC = [n for n in OFFLINE if OFFLINE_RANGES.get(n) is not None]


@pytest.mark.parametrize("name", NUMERIC)
def test_offline_measure_stays_in_its_range(name) -> None:
    for seed in SEEDS:
        qrels, run = random_collection(seed)
        _check_range(name, _evaluate(qrels, run, name))


@pytest.mark.parametrize("name", NUMERIC)
def test_offline_measure_on_empty_input(name) -> None:
    qrels, run = random_collection(0)
    # a query without a relevant document, and a judged query missing from the run (scored
    # as trec_eval -c scores it): values in range
    got = _evaluate(qrels, run, name, complete=True)
    assert {"q03", "q07"} <= set(got["qid"])
    _check_range(name, got)
    # no run at all: one line for the user, not a crash
    with pytest.raises(OnlineEvalError):
        _evaluate(qrels, run.iloc[:0], name)


@pytest.mark.parametrize("name", NUMERIC)
def test_offline_measure_does_not_depend_on_row_order(name) -> None:
    for seed in SEEDS:
        qrels, run = random_collection(seed)
        rng = np.random.default_rng(seed + 1000)
        shuffled = _evaluate(qrels.iloc[rng.permutation(len(qrels))],
                             run.iloc[rng.permutation(len(run))], name)
        pd.testing.assert_frame_equal(shuffled, _evaluate(qrels, run, name), check_exact=True)


def test_measures_without_a_per_query_number() -> None:
    qrels, run = random_collection(0)
    strings = _evaluate(qrels, run, "relstring")
    assert strings["relstring"].map(type).eq(str).all()
    with pytest.raises(OnlineEvalError, match="runid"):
        _evaluate(qrels, run, "runid")


@pytest.mark.parametrize("name", OFFLINE)
def test_offline_measure_is_in_the_generated_reference(name) -> None:
    m = MEASURES.get(name)
    heading = getattr(m, "stem", "") or m.name
    page = OFFLINE_PAGE.read_text(encoding="utf-8")
    assert re.search(rf"^### {re.escape(heading)} — ", page, re.M), heading
