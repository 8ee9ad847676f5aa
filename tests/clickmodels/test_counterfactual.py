"""Counterfactual clicks@k by position-based IPS: coverage, (un)biasedness, the plumbing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.counterfactual import evaluate, ips_from_terms, read_propensities
from onlineeval.errors import InputError, InvalidParameterError

EXAM = np.array([np.nan, 1.0, 0.55, 0.35, 0.25, 0.18])
N_Q, N_D, K = 20, 5, 3


def _world(seed: int = 0):
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.05, 0.9, (N_Q, N_D))
    logged = np.array([rng.permutation(N_D) for _ in range(N_Q)])   # production ranking
    cand = np.array([rng.permutation(N_D) for _ in range(N_Q)])     # never shown
    true_value = np.mean([(EXAM[1:K + 1] * alpha[q, cand[q, :K]]).sum() for q in range(N_Q)])
    return alpha, logged, cand, true_value


def _terms(seed: int, alpha, logged, cand, users: int = 300) -> pd.DataFrame:
    """Per-unit terms of users with a user-level click propensity (so pages of one user are
    correlated) seeing the production ranking; all documents are shown (full support)."""
    rng = np.random.default_rng(seed)
    cand_rank = np.argsort(cand, axis=1) + 1           # [q, doc] -> rank in the candidate
    rows = []
    for u in range(users):
        boost = rng.uniform(0.6, 1.4)
        n_pages = rng.integers(1, 8)
        qs = rng.integers(N_Q, size=n_pages)
        counts: dict = {}
        for q in qs:
            docs = logged[q]
            clicks = rng.random(N_D) < np.minimum(1, EXAM[1:] * alpha[q, docs] * boost)
            for r in np.flatnonzero(clicks):
                c = cand_rank[q, docs[r]]
                if c <= K:
                    counts[(r + 1, c)] = counts.get((r + 1, c), 0) + 1
        base = {"unit": u, "pages": n_pages, "slots": n_pages * K, "shown_top": n_pages * K}
        if counts:
            rows += [dict(base, logged_rank=lr, cand_rank=cr, clicks=n)
                     for (lr, cr), n in counts.items()]
        else:
            rows.append(dict(base, logged_rank=np.nan, cand_rank=np.nan, clicks=0))
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_interval_covers_the_candidates_true_value_about_95_percent_of_runs():
    """The true value is the candidate's expected clicks@3 with the average user (the boost
    has mean 1), computed from the simulation's own parameters."""
    alpha, logged, cand, true_value = _world()
    hits, estimates = 0, []
    reps = 200
    for seed in range(reps):
        res = ips_from_terms(_terms(seed, alpha, logged, cand), EXAM, K)
        hits += res["ci_low"] <= true_value <= res["ci_high"]
        estimates.append(res["value"])
    assert 0.91 <= hits / reps <= 0.985, hits / reps
    # unbiased: the mean of 200 estimates is within 3 standard errors of the truth
    est = np.asarray(estimates)
    assert abs(est.mean() - true_value) < 3 * est.std(ddof=1) / np.sqrt(reps)


def test_wrong_propensities_bias_the_estimate():
    alpha, logged, cand, true_value = _world()
    flat = np.r_[np.nan, np.ones(5)]   # no position bias assumed: clicks counted as they are
    est = np.array([ips_from_terms(_terms(seed, alpha, logged, cand), flat, K)["value"]
                    for seed in range(40)])
    assert abs(est.mean() - true_value) > 6 * est.std(ddof=1) / np.sqrt(len(est))


def test_clipping_and_effective_sample_size_are_reported():
    terms = pd.DataFrame({"unit": ["a", "a", "b"], "pages": [2, 2, 1], "slots": [4, 4, 2],
                          "shown_top": [4, 4, 1],
                          "logged_rank": [1, 3, 2], "cand_rank": [2, 1, 1],
                          "clicks": [1, 2, 1]})
    p = np.array([np.nan, 1.0, 0.5, 0.25])
    res = ips_from_terms(terms, p, 2)
    # weights: (1,2) 0.5; (3,1) 4 x2 clicks; (2,1) 2
    assert res["value"] == pytest.approx((0.5 + 8 + 2) / 3)
    assert res["effective_sample_size"] == pytest.approx(10.5 ** 2 / (0.25 + 32 + 4))
    assert res["unsupported_share"] == pytest.approx(1 - 5 / 6)
    # a candidate listing one document for b's query has one slot there: all supported
    assert ips_from_terms(terms.assign(slots=[4, 4, 1]), p, 2)["unsupported_share"] == 0
    clipped = ips_from_terms(terms, p, 2, clip=3.0)
    assert clipped["clipped_clicks"] == 2
    assert clipped["value"] == pytest.approx((0.5 + 6 + 2) / 3)
    # the per-unit ratio's delta-method standard error, written out
    y, n = np.array([8.5, 2.0]), np.array([2.0, 1.0])
    r = y.sum() / n.sum()
    lin = (y - r * n) / n.mean()
    assert res["se"] == pytest.approx(np.sqrt(lin.var(ddof=1) / 2))
    with pytest.raises(InvalidParameterError, match="propensity > 0 for every rank 1..4"):
        ips_from_terms(terms, p, 4)


def _pages(sim, alpha, logged, cand, users=400, seed=1):
    rng = np.random.default_rng(seed)
    params = {"alpha": {(f"q{q}", f"d{d}"): alpha[q, d] for q in range(N_Q)
                        for d in range(N_D)},
              "exam": dict(enumerate(EXAM[1:], start=1))}
    s, r, c = [], [], []
    i = 0
    for u in range(users):
        for _ in range(rng.integers(1, 6)):
            q = int(rng.integers(N_Q))
            docs = [f"d{d}" for d in logged[q]]
            clicks = sim.program("pbm", params, f"q{q}", docs, lambda p: rng.random() < p)
            sid = f"s{i}"
            i += 1
            s.append((sid, f"u{u}", f"q{q}"))
            r += [(sid, j + 1, d) for j, d in enumerate(docs)]
            c += [(sid, j + 1) for j in range(N_D) if clicks[j]]
    return (pd.DataFrame(s, columns=["search_id", "user_id", "query"]),
            pd.DataFrame(r, columns=["search_id", "rank", "doc_id"]),
            pd.DataFrame(c, columns=["search_id", "rank"]))


def test_evaluate_on_a_log_matches_a_direct_computation(sim, tmp_path):
    alpha, logged, cand, true_value = _world()
    searches, results, clicks = _pages(sim, alpha, logged, cand)
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    run = pd.DataFrame([(f"q{q}", f"d{d}", float(N_D - i)) for q in range(N_Q)
                        for i, d in enumerate(cand[q])], columns=["qid", "docno", "score"])
    prop = pd.DataFrame({"rank": range(1, 6), "propensity": EXAM[1:]})
    res = evaluate(logs, run, metric="clicks@3", propensities=prop)
    # by hand: every click on a document the candidate puts in its top 3, weighted
    cand_rank = {(f"q{q}", f"d{d}"): i + 1 for q in range(N_Q) for i, d in enumerate(cand[q])}
    page = results.merge(searches, on="search_id").merge(clicks, on=["search_id", "rank"])
    w = [EXAM[cand_rank[(q, d)]] / EXAM[r] if cand_rank[(q, d)] <= 3 else 0.0
         for q, d, r in zip(page["query"], page["doc_id"], page["rank"], strict=True)]
    y = pd.Series(w).groupby(page["user_id"].to_numpy()).sum()
    n = searches.groupby("user_id").size()
    y = y.reindex(n.index, fill_value=0.0)
    assert res.value == pytest.approx(y.sum() / n.sum(), rel=1e-12)
    assert res.units == len(n) and res.pages == len(searches)
    assert res.unsupported_share == pytest.approx(0.0)
    assert res.ci_low < true_value < res.ci_high
    # (propensities are given: one production ranking per query cannot separate position
    # from document, so a PBM fitted on this log could not supply them)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{a} Q0 {b} {i} {s} cand\n" for i, (a, b, s) in
                            enumerate(run.itertuples(index=False))))
    pfile = tmp_path / "p.csv"
    prop.to_csv(pfile, index=False)
    again = evaluate(logs, path, metric="clicks@3", propensities=str(pfile))
    assert again.value == res.value and again.se == res.se


def test_bad_inputs_are_one_line_errors(tmp_path):
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
    with pytest.raises(InputError, match="no page of the log has a query the candidate"):
        evaluate(logs, run, metric="clicks@1", propensities={1: 1.0})
    with pytest.raises(InvalidParameterError, match="clicks@K"):
        evaluate(logs, run, metric="ndcg@3", propensities={1: 1.0})


def test_cli_counterfactual_prints_the_estimate(sim, tmp_path, capsys):
    from onlineeval.cli import main

    alpha, logged, cand, _ = _world()
    searches, results, clicks = _pages(sim, alpha, logged, cand, users=100)
    logs_dir = tmp_path / "logs"
    logs_dir.mkdir()
    searches.to_csv(logs_dir / "searches.csv", index=False)
    results.to_csv(logs_dir / "results.csv", index=False)
    clicks.to_csv(logs_dir / "clicks.csv", index=False)
    run = tmp_path / "cand.run"
    run.write_text("".join(f"q{q} Q0 d{d} {i + 1} {N_D - i} cand\n" for q in range(N_Q)
                           for i, d in enumerate(cand[q])))
    prop = tmp_path / "p.csv"
    prop.write_text("rank,propensity\n" + "".join(f"{r},{EXAM[r]}\n" for r in range(1, 6)))
    assert main(["counterfactual", str(logs_dir), "--run", str(run), "--metric", "clicks@3",
                 "--propensities", str(prop), "--format", "json"]) == 0
    out = capsys.readouterr()
    import json

    row = json.loads(out.out)[0]
    direct = evaluate(onlineeval.load_logs(logs_dir), run, metric="clicks@3",
                      propensities=str(prop))
    assert row["value"] == pytest.approx(direct.value, rel=1e-12)
    assert row["units"] == 100 and row["estimator"] == "ips"
    assert "propensities: file" in out.err


def test_candidate_documents_the_log_never_showed_are_reported_as_unsupported():
    searches = pd.DataFrame({"search_id": ["s1", "s2", "s3"], "user_id": ["u1", "u1", "u2"],
                             "query": ["q", "q", "r"]})
    results = pd.DataFrame({"search_id": ["s1", "s1", "s2", "s2", "s3"],
                            "rank": [1, 2, 1, 2, 1], "doc_id": ["a", "b", "b", "a", "x"]})
    clicks = pd.DataFrame({"search_id": ["s1", "s2", "s3"], "rank": [2, 1, 1]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    # q: candidate top 2 = b, c (c never shown); r: only x ranked (one slot)
    run = pd.DataFrame({"qid": ["q", "q", "q", "r"], "docno": ["b", "c", "a", "x"],
                        "score": [3.0, 2.0, 1.0, 1.0]})
    with pytest.warns(UserWarning, match="40.0% of the candidate's top-2 slots"):
        res = evaluate(logs, run, metric="clicks@2", propensities={1: 1.0, 2: 0.5})
    # slots: 2 + 2 + 1 = 5; shown: b on s1 and s2, x on s3 = 3
    assert res.unsupported_share == pytest.approx(1 - 3 / 5)
    # clicks: s1 b at 2 -> cand 1: 1/0.5 = 2; s2 b at 1 -> cand 1: 1; s3 x at 1 -> 1
    assert res.value == pytest.approx((2 + 1 + 1) / 3)
