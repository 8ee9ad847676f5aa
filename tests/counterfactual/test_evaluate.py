"""``evaluate`` and ``onlineeval counterfactual`` on loaded logs: the numbers against a direct
pandas computation, the default click model, model files, errors and the command line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.clickmodels import fit
from onlineeval.counterfactual import evaluate
from onlineeval.errors import InvalidParameterError, UnknownNameError

PROP = pd.DataFrame({"rank": range(1, 6), "propensity": [1.0, 0.55, 0.35, 0.25, 0.18]})


@pytest.fixture(scope="module")
def logged(cf):
    """Three rankers, pages showing 3 of 5 documents, 120 users."""
    world = cf.make_world(1, rankers=3, shown=3)
    tables = world.simulate(7, users=120).tables()
    return world, tables, onlineeval.load_logs(**tables)


def _pages(tables):
    """One row per shown result: page, user, query, doc, rank, clicked."""
    t = tables["results"].merge(tables["searches"], on="search_id")
    hit = tables["clicks"].assign(clicked=1)
    t = t.merge(hit, on=["search_id", "rank"], how="left").fillna({"clicked": 0})
    return t.assign(query=t["query"].astype(str), doc_id=t["doc_id"].astype(str))


def _cand(world):
    c = world.candidate()
    return {(q, d): r for q, d, r in c.itertuples(index=False)}


def _shown_candidate(tables, cand):
    """The shown results that are candidate top-k documents, with their candidate rank."""
    t = _pages(tables)
    t["cand_rank"] = [cand.get((q, d), 0) for q, d in zip(t["query"], t["doc_id"],
                                                             strict=True)]
    return t[t["cand_rank"] > 0]


def _snips_of_weights(on, cand, p, users, n_pages_uq):
    """snips from its definition as a function of per-unit weights omega (all 1: the
    estimate): per (query, doc) weighted clicks over weighted examination mass."""
    pairs = list(cand)
    col = {pair: j for j, pair in enumerate(pairs)}
    row = {u: i for i, u in enumerate(users)}
    C = np.zeros((len(users), len(pairs)))
    M = np.zeros((len(users), len(pairs)))
    for u, q, d, r, hit in zip(on["user_id"], on["query"], on["doc_id"], on["rank"],
                               on["clicked"], strict=True):
        C[row[u], col[(q, d)]] += hit
        M[row[u], col[(q, d)]] += p[r]
    theta = np.array([p[cand[pair]] for pair in pairs])
    queries = sorted({q for q, _ in pairs})
    n_uq = n_pages_uq.reindex(index=users, columns=queries, fill_value=0).to_numpy(float)
    q_of_pair = np.array([queries.index(q) for q, _ in pairs])

    def value(omega):
        c, m, n = omega @ C, omega @ M, omega @ n_uq
        rate = np.divide(c, m, out=np.zeros_like(c), where=m > 0)
        return (n[q_of_pair] * theta * rate).sum() / n.sum()

    return value


def test_every_estimator_matches_a_direct_computation(cf, logged):
    world, tables, logs = logged
    p = np.r_[np.nan, PROP["propensity"]]
    cand = _cand(world)
    on = _shown_candidate(tables, cand)
    users = tables["searches"]["user_id"]
    n_pages = users.value_counts().sort_index()
    # ips: sum over clicks on candidate documents of p_c / p_l, per page
    with pytest.warns(UserWarning, match="slots hold a document the logged page did not"):
        ips = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP)
    w = p[on["cand_rank"].to_numpy()] / p[on["rank"].to_numpy()]
    assert ips.value == pytest.approx((w * on["clicked"]).sum() / len(tables["searches"]),
                                      rel=1e-12)
    # dr: per page the model's candidate clicks, plus w x (click - model at logged rank)
    model = world.model(alpha=world.alpha * 0.8)
    with pytest.warns(UserWarning, match="the click model's prediction alone"):
        dr = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP,
                      estimator="dr", model=model.direct())
    q_of = tables["searches"]["query"].to_numpy()
    dm = sum((model.exam[c] * model.alpha[q_of, world.cand[q_of, c - 1]]).sum()
             for c in range(1, 4))
    qi, di = on["query"].astype(int).to_numpy(), on["doc_id"].astype(int).to_numpy()
    resid = w * (on["clicked"] - model.exam[on["rank"].to_numpy()] * model.alpha[qi, di])
    assert dr.value == pytest.approx((dm + resid.sum()) / len(tables["searches"]), rel=1e-12)
    # snips: its value, and its standard error against the infinitesimal jackknife of the
    # definition (numerical derivative in each unit's weight), which shares nothing with
    # the SQL's linearisation
    sn = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP, estimator="snips")
    s = tables["searches"].assign(query=tables["searches"]["query"].astype(str))
    value = _snips_of_weights(on, cand, p, list(n_pages.index),
                              s.groupby(["user_id", "query"]).size().unstack(fill_value=0))
    n = len(n_pages)
    assert sn.value == pytest.approx(value(np.ones(n)), rel=1e-12)
    h, eye = 1e-5, np.eye(n)
    psi = np.array([(value(1 + h * eye[i]) - value(1 - h * eye[i])) / (2 * h)
                    for i in range(n)])
    assert sn.se == pytest.approx(np.sqrt(n * (psi ** 2).sum() / (n - 1)), rel=1e-6)
    assert sn.units == ips.units == dr.units == n


def test_snips_is_ips_when_each_query_had_one_logged_ranking(cf):
    world = cf.make_world(0)
    logs = onlineeval.load_logs(**world.simulate(3, users=80).tables())
    a = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP)
    b = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP, estimator="snips")
    assert b.value == pytest.approx(a.value, rel=1e-12)
    assert b.se == pytest.approx(a.se, rel=1e-9)
    assert b.unsupported_share == a.unsupported_share == 0


def test_dr_by_default_uses_the_logs_own_model(cf, logged):
    world, tables, logs = logged
    run = world.run()
    with pytest.warns(UserWarning):
        ips = evaluate(logs, run, metric="clicks@3", propensities=PROP)
    dr = evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="dr")
    assert dr.model.startswith("pbm on this log")
    # ips plus, on each slot its page did not show, p_c times the pair's clicks over the
    # examination mass it was shown with on the query's other pages
    p = np.r_[np.nan, PROP["propensity"]]
    t = _pages(tables)
    rate = {}
    for (q, d), g in t.groupby(["query", "doc_id"]):
        rate[(q, d)] = g["clicked"].sum() / p[g["rank"].to_numpy()].sum()
    shown = set(zip(t["search_id"], t["doc_id"], strict=True))
    extra = 0.0
    for sid, q in zip(tables["searches"]["search_id"], tables["searches"]["query"].astype(str),
                      strict=True):
        for c, d in enumerate(world.cand[int(q), :3], start=1):
            if (sid, str(d)) not in shown:
                extra += p[c] * rate[(q, str(d))]
    assert dr.value - ips.value == pytest.approx(extra / len(tables["searches"]), rel=1e-9)
    assert dr.unsupported_share == 0 < ips.unsupported_share


def test_dr_with_a_model_file_is_the_model_given(cf, logged, tmp_path):
    world, _, logs = logged
    f = fit(logs, "pbm", max_rank=10)
    path = tmp_path / "pbm.json"
    f.to_json(path)
    runs = {}
    for key, model in (("file", str(path)), ("fit", f)):
        with pytest.warns(UserWarning, match="the click model's prediction alone"):
            runs[key] = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP,
                                 estimator="dr", model=model)
    assert runs["file"].value == pytest.approx(runs["fit"].value, rel=1e-12)
    assert runs["file"].model == f"file {path}" and runs["fit"].model == "pbm fit given"


def test_harvested_propensities_are_the_harvest_table(cf, logged):
    from onlineeval.clickmodels import harvest_position_bias

    world, _, logs = logged
    res = evaluate(logs, world.run(), metric="clicks@3", propensities="harvested",
                   estimator="snips")
    table = harvest_position_bias(logs, max_rank=10)
    table = table[np.isfinite(table["relative"])]
    assert res.propensity_source.startswith("harvested")
    assert res.propensities["rank"].tolist() == table["rank"].tolist()
    np.testing.assert_allclose(res.propensities["propensity"], table["relative"])


def test_errors_are_one_line_and_say_what_to_do(cf, logged):
    world, _, logs = logged
    run = world.run()
    with pytest.raises(InvalidParameterError, match="snips has none to cap"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="snips", clip=2.0)
    with pytest.raises(InvalidParameterError, match="the ips estimate does not use one"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, model="pbm")
    with pytest.raises(UnknownNameError, match="did you mean 'snips'"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="snip")
    dbn = fit(logs, "dbn", max_rank=5)
    with pytest.raises(InvalidParameterError, match="needs a position-based click model"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="dr", model=dbn)
    other = fit(logs, "pbm", max_rank=5, query="user_id")
    with pytest.raises(InvalidParameterError, match="fitted with query column 'user_id'"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="dr", model=other)
    short = world.model(exam=np.array([np.nan, 1.0, 0.5])).direct()
    with pytest.raises(InvalidParameterError, match="examination > 0 for every rank 1..3"):
        evaluate(logs, run, metric="clicks@3", propensities=PROP, estimator="dr", model=short)


def test_bad_inputs(tmp_path):
    from onlineeval.counterfactual import read_propensities
    from onlineeval.errors import InputError

    bad = tmp_path / "p.csv"
    bad.write_text("rank,propensity\n1,1\n2,-0.5\n")
    with pytest.raises(InputError, match=r"p.csv: row 3: rank must be a whole number"):
        read_propensities(bad)
    bad.write_text("rank,prob\n1,1\n")
    with pytest.raises(InputError, match="needs columns rank and propensity"):
        read_propensities(bad)
    assert read_propensities({1: 1.0, 3: 0.5})[3] == 0.5
    searches = pd.DataFrame({"search_id": ["s"], "user_id": ["u"], "query": ["q"]})
    results = pd.DataFrame({"search_id": ["s"], "rank": [1], "doc_id": ["d"]})
    clicks = pd.DataFrame({"search_id": ["s"], "rank": [1]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    run = pd.DataFrame({"qid": ["other"], "docno": ["d"], "score": [1.0]})
    for est in ("ips", "snips"):
        with pytest.raises(InputError, match="no page of the log has a query the candidate"):
            evaluate(logs, run, metric="clicks@1", propensities={1: 1.0}, estimator=est)
    with pytest.raises(InvalidParameterError, match="clicks@K"):
        evaluate(logs, run, metric="ndcg@3", propensities={1: 1.0})
    with pytest.raises(InvalidParameterError, match="propensity > 0 for every rank 1..2"):
        evaluate(logs, run, metric="clicks@2", propensities={1: 1.0})


def test_command_line(cf, tmp_path, capsys):
    from onlineeval.cli import main

    world = cf.make_world(1, rankers=3, shown=3)
    logs_dir = tmp_path / "logs"
    logs_dir.mkdir()
    for name, df in world.simulate(2, users=60).tables().items():
        df.to_csv(logs_dir / f"{name}.csv", index=False)
    run = tmp_path / "cand.run"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {5 - i} cand\n" for q in range(20)
                           for i, d in enumerate(world.cand[q])))
    prop = tmp_path / "p.csv"
    PROP.to_csv(prop, index=False)
    logs = onlineeval.load_logs(logs_dir)
    model = tmp_path / "pbm.json"
    fit(logs, "pbm", max_rank=10).to_json(model)
    for extra in (["--estimator", "snips"], ["--estimator", "dr", "--model", str(model)]):
        assert main(["counterfactual", str(logs_dir), "--run", str(run), "--metric",
                     "clicks@3", "--propensities", str(prop), "--format", "json", *extra]) == 0
        out = capsys.readouterr()
        row = json.loads(out.out)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            direct = evaluate(logs, run, metric="clicks@3", propensities=str(prop),
                              estimator=extra[1],
                              model=str(model) if extra[1] == "dr" else None)
        assert row["value"] == pytest.approx(direct.value, rel=1e-12)
        assert row["estimator"] == extra[1]
        assert ("click model: file" in out.err) == (extra[1] == "dr")
        assert {"snips": "weights: snips has no weight to cap",
                "dr": "weights: not capped (--clip not given)"}[extra[1]] in out.err
    assert main(["counterfactual", str(logs_dir), "--run", str(run), "--metric", "clicks@3",
                 "--propensities", str(prop), "--clip", "1.5", "--format", "json"]) == 0
    out = capsys.readouterr()
    row = json.loads(out.out)[0]
    assert row["clip"] == 1.5 and row["clipped_clicks"] > 0
    assert f"weights: capped at 1.5 as asked: {row['clipped_clicks']} of the " \
        f"{row['weighted_clicks']} clicks used had a larger weight" in out.err
    assert main(["counterfactual", str(logs_dir), "--run", str(run), "--estimator", "snips",
                 "--clip", "2", "--propensities", str(prop), "--metric", "clicks@3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("onlineeval counterfactual: error: clip caps the weights")
    with pytest.raises(SystemExit) as stop:
        main(["counterfactual", str(logs_dir), "--run", str(run), "--estimator", "bogus"])
    assert stop.value.code == 2


def test_standard_errors_match_a_unit_level_bootstrap(cf, logged):
    """Each estimator written from its definition as a function of per-user resampling
    counts (pages, clicks and examination mass summed per user, the pooled rates recomputed
    on every resample), bootstrapped over users; the package's delta-method standard error
    must agree with the bootstrap's."""
    world, tables, logs = logged
    p = np.r_[np.nan, PROP["propensity"]]
    cand = _cand(world)
    on = _shown_candidate(tables, cand)
    users = sorted(tables["searches"]["user_id"].unique())
    row = {u: i for i, u in enumerate(users)}
    pairs = sorted(cand)
    col = {pair: j for j, pair in enumerate(pairs)}
    n_u = np.zeros(len(users))
    y_ips = np.zeros(len(users))
    C, M, slots = (np.zeros((len(users), len(pairs))) for _ in range(3))
    for u, q in zip(tables["searches"]["user_id"], tables["searches"]["query"].astype(str),
                    strict=True):
        n_u[row[u]] += 1
        for d in world.cand[int(q), :3]:
            slots[row[u], col[(q, str(d))]] += 1          # a slot of every page of q
    for u, q, d, r, c, hit in zip(on["user_id"], on["query"], on["doc_id"], on["rank"],
                                  on["cand_rank"], on["clicked"], strict=True):
        i, j = row[u], col[(q, d)]
        y_ips[i] += p[c] / p[r] * hit
        C[i, j] += hit
        M[i, j] += p[r]
        slots[i, j] -= 1                                  # ... but this one was shown
    theta = np.array([p[cand[pair]] for pair in pairs])
    n_pairs = np.zeros((len(users), len(pairs)))          # pages of the pair's query
    for u, q in zip(tables["searches"]["user_id"], tables["searches"]["query"].astype(str),
                    strict=True):
        for j, pair in enumerate(pairs):
            n_pairs[row[u], j] += pair[0] == q

    def rate(om):
        c, m = om @ C, om @ M
        return np.divide(c, m, out=np.zeros_like(c), where=m > 0)

    estimators = {
        "ips": lambda om: om @ y_ips / (om @ n_u),
        "snips": lambda om: ((om @ n_pairs) * theta * rate(om)).sum(1) / (om @ n_u),
        # ips where the page showed the pair, p_c x its pooled rate where it did not
        "dr": lambda om: (om @ y_ips + ((om @ slots) * theta * rate(om)).sum(1))
        / (om @ n_u),
    }
    rng = np.random.default_rng(11)
    omega = rng.multinomial(len(users), np.full(len(users), 1 / len(users)), size=4000)
    for name, value in estimators.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = evaluate(logs, world.run(), metric="clicks@3", propensities=PROP,
                           estimator=name)
        assert res.value == pytest.approx(value(np.ones((1, len(users))))[0], rel=1e-12)
        boot = value(omega).std(ddof=1)
        assert res.se == pytest.approx(boot, rel=0.05), (name, res.se, boot)
