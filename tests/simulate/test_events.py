"""Simulated downstream events: rates by grade, delays, values and tracking shares match the
model's definition (recomputed here, not taken from the module); events never move the other
tables; determinism; the CLI switch."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.cli import main
from onlineeval.errors import InvalidParameterError
from onlineeval.logs.convert.parquet import LogTables
from onlineeval.simulate import EventModel, Pair, make_collection, simulate, simulate_events
from onlineeval.simulate.interleaving import simulate_interleaving_study

RANKERS = {"best": 0.3, "mid": 1.0, "worst": 2.5}
SMALL = {"users_per_experiment": 150, "rankers": RANKERS,
         "pairs": (Pair("worst", "best"), Pair("mid", "mid")), "n_queries": 25,
         "docs_per_query": 15}
# per-check significance: about 40 checks in this module, so a false alarm of the whole
# module stays below 1% for a correct model
ALPHA = 2.5e-4


def gain_probability(top: float, grade: int) -> float:
    # the model, written out: top * (2^g - 1) / (2^4 - 1)
    return top * (2 ** grade - 1) / 15


def delay_cdf(t: np.ndarray, fast: float, fast_mean: float, slow_mean: float) -> np.ndarray:
    return fast * -np.expm1(-t / fast_mean) + (1 - fast) * -np.expm1(-t / slow_mean)


def _big_click_log(n_clicks: int, seed: int) -> tuple:
    """A hand-made log: one click per search, on documents drawn so that every grade gets
    about the same number of clicks."""
    rng = np.random.default_rng(seed)
    collection = make_collection(rng, n_queries=40, docs_per_query=30)
    pool = [(q, d, g) for q in collection.qids for d, g in collection.qrels[q].items()]
    grade = np.array([g for _, _, g in pool])
    weight = 1.0 / np.bincount(grade, minlength=5)[grade]
    pick = rng.choice(len(pool), size=n_clicks, p=weight / weight.sum())
    sids = [f"s{i:07d}" for i in range(n_clicks)]
    users = [f"u{i % 5000:05d}" for i in range(n_clicks)]
    ts = (pd.Timestamp("2026-01-05") + pd.to_timedelta(
        rng.integers(0, 14 * 86400 * 1000, n_clicks), unit="ms")).astype("datetime64[ms]")
    searches = pd.DataFrame({"search_id": sids, "user_id": users,
                             "qid": [pool[i][0] for i in pick]})
    clicks = pd.DataFrame({"search_id": sids, "rank": 1, "doc_id": [pool[i][1] for i in pick],
                           "ts": ts, "dwell_ms": 1000})
    return collection, LogTables(searches, searches.iloc[0:0], clicks), grade[pick]


@pytest.fixture(scope="module")
def linked():
    """200,000 clicks and the events of a model where every event names its click."""
    model = EventModel(share_search_id=1.0, share_doc_id=0.0)
    collection, tables, grades = _big_click_log(200_000, seed=11)
    events = simulate_events(collection, tables, np.random.default_rng(5), model)
    clicks = tables.clicks.assign(grade=grades)
    joined = events.merge(clicks, on=["search_id", "doc_id"], how="left",
                          suffixes=("", "_click"), validate="many_to_one")
    return model, clicks, events, joined


def test_event_rate_by_grade_matches_the_model_within_binomial_intervals(linked) -> None:
    model, clicks, events, joined = linked
    assert joined["ts_click"].notna().all()  # every event follows one of the clicks
    n_by_grade = clicks["grade"].value_counts().reindex(range(5), fill_value=0)
    assert (n_by_grade > 30_000).all()
    for kind, top in (("purchase", model.purchase_max), ("add_to_cart", model.cart_max)):
        # at most one event of a type per click
        assert not joined[joined["type"] == kind].duplicated(["search_id", "doc_id"]).any()
        hits = joined[joined["type"] == kind]["grade"].value_counts().reindex(
            range(5), fill_value=0)
        assert hits[0] == 0  # a grade-0 result is never bought nor carted
        for g in range(1, 5):
            p = gain_probability(top, g)
            test = stats.binomtest(int(hits[g]), int(n_by_grade[g]), p)
            assert test.pvalue > ALPHA, (kind, g, hits[g], n_by_grade[g], p)
        # the rate really rises with the grade: the intervals of neighbours do not overlap
        rates = [hits[g] / n_by_grade[g] for g in range(5)]
        assert all(a < b for a, b in zip(rates, rates[1:], strict=False))


def test_delays_follow_the_two_exponential_mixture(linked) -> None:
    model, _, _, joined = linked
    delay_s = (joined["ts"] - joined["ts_click"]).dt.total_seconds().to_numpy()
    assert delay_s.min() >= 0.001  # strictly after the click
    # times are whole milliseconds rounded up: the shift (<= 1 ms) is far below what a KS
    # test of this size can see
    cdf = lambda t: delay_cdf(t, 0.7, 600.0, 86400.0)  # noqa: E731
    assert stats.kstest(delay_s, cdf).pvalue > ALPHA
    # the documented share of events more than a day after their click
    p_day = 0.7 * math.exp(-86400 / 600) + 0.3 * math.exp(-1)
    assert round(p_day, 2) == 0.11
    assert stats.binomtest(int((delay_s > 86400).sum()), len(delay_s), p_day).pvalue > ALPHA
    # a wrong mixture is rejected (the test has power)
    assert stats.kstest(delay_s, lambda t: delay_cdf(t, 0.6, 600.0, 86400.0)).pvalue < 1e-6


def test_purchase_values_are_lognormal_and_carts_have_none(linked) -> None:
    _, _, events, _ = linked
    purchases = events[events["type"] == "purchase"]["value"].to_numpy()
    assert np.isfinite(purchases).all() and (purchases >= 0.01).all()
    assert np.allclose(purchases, np.round(purchases, 2), rtol=0, atol=1e-9)  # cents
    # log(value) ~ Normal(log 40, 0.8); rounding to cents moves the CDF by < 1e-3
    dist = stats.lognorm(s=0.8, scale=40.0)
    assert stats.kstest(purchases, dist.cdf).pvalue > ALPHA
    assert stats.kstest(purchases, stats.lognorm(s=0.8, scale=44.0).cdf).pvalue < 1e-6
    assert events[events["type"] == "add_to_cart"]["value"].isna().all()


def test_tracking_shares_and_links_of_the_default_model() -> None:
    collection, tables, grades = _big_click_log(60_000, seed=12)
    model = EventModel()
    events = simulate_events(collection, tables, np.random.default_rng(6), model)
    n = len(events)
    has_s, has_d = events["search_id"].notna(), events["doc_id"].notna()
    assert not (has_s & ~has_d).any()  # a search id always comes with its document
    for count, share in ((has_s.sum(), 0.6), ((has_d & ~has_s).sum(), 0.25),
                         ((~has_d).sum(), 0.15)):
        assert stats.binomtest(int(count), n, share).pvalue > ALPHA, (count, n, share)
    # every event's user, and its document when given, is one of a click before it
    clicks = tables.clicks.merge(tables.searches, on="search_id")
    linked = events[has_d].merge(clicks, on=["user_id", "doc_id"], suffixes=("", "_c"))
    before = linked[linked["ts_c"] < linked["ts"]]
    assert before[["user_id", "ts", "type", "doc_id"]].drop_duplicates().shape[0] == has_d.sum()
    assert set(events["user_id"]) <= set(tables.searches["user_id"])
    assert events["ts"].dtype == "datetime64[ms]"
    # sorted by user, then time
    key = list(zip(events["user_id"], events["ts"], strict=True))
    assert key == sorted(key)


def test_model_parameters_are_checked() -> None:
    for bad in ({"purchase_max": 1.5}, {"share_search_id": 0.8, "share_doc_id": 0.3},
                {"value_median": 0}, {"slow_mean_s": -1}, {"value_sigma": -0.1},
                {"fast_share": -0.1}):
        with pytest.raises(InvalidParameterError):
            EventModel(**bad)
    with pytest.raises(InvalidParameterError, match="events must be"):
        simulate(Path("never-written"), 1, events="yes", **SMALL)  # type: ignore[arg-type]
    assert not Path("never-written").exists()


def test_probabilities_in_the_manifest_follow_the_definition() -> None:
    params = EventModel(purchase_max=0.2, cart_max=0.4).params()
    assert params["purchase_probability_by_grade"] == pytest.approx(
        [gain_probability(0.2, g) for g in range(5)])
    assert params["add_to_cart_probability_by_grade"] == pytest.approx(
        [gain_probability(0.4, g) for g in range(5)])
    assert json.loads(json.dumps(params)) == params


# --- the study: files, determinism, independence of the other tables --------------------

@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("events")
    return {
        "on": (root / "on", simulate(root / "on", 42, **SMALL)),
        "again": (root / "again", simulate(root / "again", 42, **SMALL)),
        "off": (root / "off", simulate(root / "off", 42, events=False, **SMALL)),
        "other_seed": (root / "seed43", simulate(root / "seed43", 43, **SMALL)),
    }


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_events_leave_every_other_file_byte_identical(studies) -> None:
    (on, m_on), (off, m_off) = studies["on"], studies["off"]
    with_events, without = _files(on), _files(off)
    assert set(with_events) - set(without) == {"ab/events.parquet"}
    for name, data in without.items():
        if name != "manifest.json":
            assert with_events[name] == data, name
    # the manifest differs only by the event counts and the model
    assert "events" not in m_off and "events" not in m_off["logs"]
    stripped = json.loads(json.dumps(m_on))
    del stripped["events"], stripped["logs"]["events"]
    for e in stripped["experiments"]:
        del e["events"]
    assert stripped == m_off
    assert json.loads((off / "manifest.json").read_text()) == m_off


def test_same_seed_same_events_other_seed_other_events(studies) -> None:
    (on, m_on), (again, m_again) = studies["on"], studies["again"]
    assert (on / "ab/events.parquet").read_bytes() == (again / "ab/events.parquet").read_bytes()
    assert m_on == m_again
    other = studies["other_seed"][0]
    con = duckdb.connect()
    a = con.read_parquet(str(on / "ab/events.parquet")).fetchall()
    b = con.read_parquet(str(other / "ab/events.parquet")).fetchall()
    assert a != b and len(a) > 50


def test_study_events_file_counts_and_rates(studies) -> None:
    out, manifest = studies["on"]
    con = duckdb.connect()
    rel = con.read_parquet(str(out / "ab/events.parquet"))
    assert rel.columns == ["user_id", "ts", "type", "value", "search_id", "doc_id"]
    assert [str(t) for t in rel.types] == ["VARCHAR", "TIMESTAMP", "VARCHAR", "DOUBLE",
                                           "VARCHAR", "VARCHAR"]
    events = rel.df()
    counts = events.groupby("type").size().to_dict()
    assert manifest["logs"]["events"] == counts
    assert sum(sum(e["events"].values()) for e in manifest["experiments"]) == len(events)
    # carts have NULL (not NaN) values
    assert con.sql(f"SELECT count(*) FROM read_parquet('{out / 'ab/events.parquet'}') "
                   "WHERE type = 'add_to_cart' AND value IS NOT NULL").fetchall() == [(0,)]
    # users: events of an experiment belong to its users
    searches = con.read_parquet(str(out / "ab/searches.parquet")).df()
    assert set(events["user_id"]) <= set(searches["user_id"])
    assert manifest["events"] == EventModel().params()
    # the clicks of the simulated log: the share of purchases naming their search, by grade
    clicks = con.read_parquet(str(out / "ab/clicks.parquet")).df().merge(
        searches[["search_id", "qid"]], on="search_id")
    qrels = pd.read_csv(out / "qrels.txt", sep=" ", names=["qid", "z", "doc_id", "grade"])
    clicks = clicks.merge(qrels[["qid", "doc_id", "grade"]], on=["qid", "doc_id"], how="left")
    clicks["grade"] = clicks["grade"].fillna(0).astype(int)
    named = events[(events["type"] == "purchase") & events["search_id"].notna()]
    hit = clicks.merge(named[["search_id", "doc_id"]], on=["search_id", "doc_id"],
                       how="left", indicator=True)["_merge"].eq("both")
    for g in range(5):
        n = int((clicks["grade"] == g).sum())
        k = int(hit[clicks["grade"] == g].sum())
        p = 0.6 * gain_probability(0.15, g)
        assert (k == 0) if p == 0 else stats.binomtest(k, n, p).pvalue > ALPHA, (g, k, n)


def test_cli_switch_and_interleaving_follow_the_study(studies, tmp_path: Path, capsys) -> None:
    argv = ["simulate", str(tmp_path / "s"), "--seed", "3", "--users", "60", "--queries", "15",
            "--pairs", "s200:s100"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    counts = json.loads((tmp_path / "s/manifest.json").read_text())["logs"]["events"]
    assert f"clicks, {counts['purchase'] + counts['add_to_cart']} events)" in err
    assert (tmp_path / "s/ab/events.parquet").is_file()
    assert main([argv[0], str(tmp_path / "n"), *argv[2:], "--no-events"]) == 0
    capsys.readouterr()
    assert not (tmp_path / "n/ab/events.parquet").exists()
    assert "events" not in json.loads((tmp_path / "n/manifest.json").read_text())
    # interleaving: events by default when the study has them, none when it has none
    assert main(["simulate-interleaving", str(tmp_path / "s"), str(tmp_path / "il")]) == 0
    shown = capsys.readouterr().out
    counts = json.loads((tmp_path / "il/manifest.json").read_text())["logs"]["events"]
    assert f"clicks, {sum(counts.values())} events, 1 experiments" in shown
    assert main(["simulate-interleaving", str(tmp_path / "n"), str(tmp_path / "il0")]) == 0
    capsys.readouterr()
    assert (tmp_path / "il/events.parquet").is_file()
    assert not (tmp_path / "il0/events.parquet").exists()
    # the same interleaving logs with and without events; the model is the study's
    assert main(["simulate-interleaving", str(tmp_path / "s"), str(tmp_path / "il1"),
                 "--no-events"]) == 0
    capsys.readouterr()
    for table in ("searches", "results", "clicks"):
        a = (tmp_path / "il" / f"{table}.parquet").read_bytes()
        assert a == (tmp_path / "il1" / f"{table}.parquet").read_bytes(), table
    manifest = json.loads((tmp_path / "il/manifest.json").read_text())
    assert manifest["events"] == json.loads((tmp_path / "s/manifest.json").read_text())["events"]


def test_interleaving_events_with_a_given_model(studies, tmp_path: Path) -> None:
    study = studies["off"][0]
    model = EventModel(purchase_max=0.5, share_search_id=1.0, share_doc_id=0.0)
    out = simulate_interleaving_study(study, tmp_path / "il", users_per_experiment=80,
                                      events=model)
    con = duckdb.connect()
    events = con.read_parquet(str(tmp_path / "il/events.parquet")).df()
    results = con.read_parquet(str(tmp_path / "il/results.parquet")).df()
    clicks = con.read_parquet(str(tmp_path / "il/clicks.parquet")).df()
    assert out["events"]["purchase_max"] == 0.5
    assert out["logs"]["events"] == events.groupby("type").size().to_dict()
    # every event names a click of an interleaved page, so its team can be credited
    linked = events.merge(clicks, on=["search_id", "doc_id"], suffixes=("", "_c")).merge(
        results[["search_id", "doc_id", "team"]], on=["search_id", "doc_id"])
    assert len(linked) == len(events) > 0 and linked["team"].notna().all()
    assert (linked["ts"] > linked["ts_c"]).all()


def test_an_empty_events_table_is_written_with_its_types(tmp_path: Path) -> None:
    model = EventModel(purchase_max=0.0, cart_max=0.0)
    manifest = simulate(tmp_path / "z", 1, events=model, **SMALL)
    assert manifest["logs"]["events"] == {}
    rel = duckdb.connect().read_parquet(str(tmp_path / "z/ab/events.parquet"))
    assert rel.fetchall() == []
    assert [str(t) for t in rel.types] == ["VARCHAR", "TIMESTAMP", "VARCHAR", "DOUBLE",
                                           "VARCHAR", "VARCHAR"]


def test_replacing_a_study_without_events_removes_the_old_events(tmp_path: Path) -> None:
    # a stale events table next to new logs would be attributed to the wrong searches
    simulate(tmp_path / "s", 1, **SMALL)
    assert (tmp_path / "s/ab/events.parquet").is_file()
    (tmp_path / "s/notes.txt").write_text("mine\n")
    simulate(tmp_path / "s", 2, events=False, overwrite=True, **SMALL)
    assert not (tmp_path / "s/ab/events.parquet").exists()
    assert (tmp_path / "s/notes.txt").read_text() == "mine\n"
    simulate_interleaving_study(tmp_path / "s", tmp_path / "il", users_per_experiment=20,
                                events=True)
    assert (tmp_path / "il/events.parquet").is_file()
    simulate_interleaving_study(tmp_path / "s", tmp_path / "il", users_per_experiment=20)
    assert not (tmp_path / "il/events.parquet").exists()
